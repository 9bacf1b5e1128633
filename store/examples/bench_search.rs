//! `clarify search` in-process on a file workspace (issue 45's benchmark, `scripts/bench-search`):
//! `bench_search DIR RUNS QUERY...` prints, as JSON, the index build (the first search after
//! the index is removed) and the next one a second later (what the build's racy listing left
//! to read again), the index's size, and for each query the p50 and p99 of RUNS
//! searches through the index and the p50 of a few full scans, with the hits compared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use agentx_clarify_command::query::read_all;
use agentx_clarify_command::search::{rank, search};
use agentx_clarify_core::search::{Filter, Query};
use agentx_clarify_store::DiskStore;
use serde_json::json;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn pct(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn du(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|d| {
            d.flatten()
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, runs) = (&args[1], args[2].parse::<usize>().unwrap());
    let store = DiskStore::new(dir);
    let index = std::path::Path::new(dir).join(".agentx/index/search");
    let _ = std::fs::remove_dir_all(&index);
    let filter = Filter::default();
    let t = Instant::now();
    search(
        &store,
        &Query {
            text: "warm",
            field: None,
        },
        &filter,
    )
    .unwrap();
    let build_ms = ms(t);
    // Ledgers written within a second of the build's listing are read again by the next
    // search (the racy-stamp rule): timed apart, so the runs below are the steady state.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let t = Instant::now();
    search(
        &store,
        &Query {
            text: "warm",
            field: None,
        },
        &filter,
    )
    .unwrap();
    let settle_ms = ms(t);
    let mut out = Vec::new();
    for text in &args[3..] {
        let q = Query { text, field: None };
        let times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(search(&store, &q, &filter).unwrap());
                ms(t)
            })
            .collect();
        let hits = search(&store, &q, &filter).unwrap().hits;
        let scans: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let (ledgers, _) = read_all(&store).unwrap();
                let scanned = rank(&ledgers, &q, &filter);
                assert_eq!(scanned, hits, "the index and the scan disagree on {text:?}");
                ms(t)
            })
            .collect();
        out.push(
            json!({"query": text, "hits": hits.len(), "p50": pct(times.clone(), 0.5),
            "p99": pct(times, 0.99), "scanP50": pct(scans, 0.5)}),
        );
    }
    let report = json!({"buildMs": build_ms, "settleMs": settle_ms, "indexBytes": du(&index), "queries": out});
    println!("{report}");
}
