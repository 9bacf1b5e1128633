//! The server gives back the memory its large reads took (issue 50 item 11; `scripts/soak` is
//! the ten-minute version): reads of every ledger from many clients at once, then only small
//! requests, and the server's RSS must come back near where it started within seconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::time::{Duration, Instant};

use agentx_clarify_tests::fixtures::{ledger, Kind};
use common::*;
use serde_json::json;
use serve_http::*;

/// Ledgers of finished work (about 3 KB each): a read of every one is a large read.
const LEDGERS: u64 = 3_000;
/// Clients reading at once: each read runs on a thread of its own.
const CLIENTS: usize = 4;
/// How long they read.
const LOAD: Duration = Duration::from_secs(20);
/// How long the server may take to give the memory back once the large reads stop, while a
/// client goes on with small ones (a hub is never silent: pages, the feed): less than the
/// 10 s after which tokio would end an idle blocking thread by default, so what is measured is
/// the server giving back, not threads that happened to end.
const QUIET: Duration = Duration::from_secs(6);
/// What may stay after the reads, over the RSS at the start (MiB).
const KEPT_MIB: u64 = 48;

fn finished_ledgers(root: &std::path::Path, n: u64) {
    let now = wall_ms();
    for i in 1..=n {
        let text = ledger(i, Kind::Finished, now).to_pretty_json();
        std::fs::write(ledger_path(root, u32::try_from(i).unwrap()), text).unwrap();
    }
}

#[test]
fn the_memory_of_large_reads_is_given_back_within_seconds() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(clarifications_dir(root)).unwrap();
    finished_ledgers(root, LEDGERS);
    let person = token(root, "--human", "alice");
    let server = Server::start(root, &["--no-worker"]);
    // The first read of every ledger (the inbox's view is built meanwhile), then the start.
    let first = server.call_bearer(&person, "list", json!({"all": true}));
    assert_eq!(
        first.status,
        200,
        "{}",
        &first.body[..first.body.len().min(300)]
    );
    std::thread::sleep(Duration::from_secs(2));
    let start = server.rss_kib();

    let until = Instant::now() + LOAD;
    let reads: usize = std::thread::scope(|s| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (server, person) = (&server, &person);
                s.spawn(move || {
                    let mut n = 0;
                    while Instant::now() < until {
                        let (op, input) = if (n + c) % 3 == 2 {
                            ("stats", json!({}))
                        } else {
                            ("list", json!({"all": true}))
                        };
                        let r = server.call_bearer(person, op, input);
                        assert_eq!(r.status, 200, "{op}: {}", &r.body[..r.body.len().min(300)]);
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).sum()
    });
    let loaded = server.rss_kib();

    let bound = start + KEPT_MIB * 1024;
    let quiet = Instant::now();
    let mut now = server.rss_kib();
    while now > bound && quiet.elapsed() < QUIET {
        for _ in 0..5 {
            let r = server.call_bearer(&person, "show", json!({"id": "CLR-1-001"}));
            assert_eq!(r.status, 200, "{r:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
        now = server.rss_kib();
    }
    eprintln!(
        "RSS {start} KiB at the start, {loaded} KiB after {reads} reads of {LEDGERS} ledgers, {now} KiB {:.1} s later",
        quiet.elapsed().as_secs_f64()
    );
    assert!(
        now <= bound,
        "RSS {start} KiB at the start, {loaded} KiB after {reads} reads, still {now} KiB {QUIET:?} later (bound: {KEPT_MIB} MiB over the start)"
    );
}
