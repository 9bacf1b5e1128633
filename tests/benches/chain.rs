//! Verifying hash chains (`verify` hashes every entry): threads whose timestamps are in the
//! canonical form, as this crate writes them, and the same threads as PowerShell 7 re-spells
//! them (`.94Z`, no fraction), which hashing puts back in canonical form first (docs/protocol.md §16).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use agentx_clarify_core::time::Timestamp;
use agentx_clarify_core::Record;
use agentx_clarify_tests::fixtures::{ledger, Kind};
use criterion::{criterion_group, criterion_main, Criterion};

const T0: i64 = 1_795_341_600_000;

/// 300 records of the benchmark shape (3 per ledger, 3 or 5 entries each).
fn records() -> Vec<Record> {
    (1..=100u64)
        .flat_map(|i| ledger(i, Kind::Clean, T0).clarifications)
        .collect()
}

/// The same records with every timestamp re-spelled the PowerShell way.
fn respelled(records: &[Record]) -> Vec<Record> {
    let mut out = records.to_vec();
    for r in &mut out {
        for e in &mut r.thread {
            // `2026-11-22T10:00:00.940Z` → `…00.94Z`, `….000Z` → `…00Z`.
            let text = e.timestamp.as_str().trim_end_matches('Z');
            let text = text.trim_end_matches('0').trim_end_matches('.');
            e.timestamp = Timestamp::parse(&format!("{text}Z")).unwrap();
            assert!(!e.timestamp.is_canonical());
        }
    }
    out
}

fn chains(c: &mut Criterion) {
    let canonical = records();
    let respelled = respelled(&canonical);
    assert!(respelled
        .iter()
        .all(|r| r.chain_state() == agentx_clarify_core::ledger::ChainState::Intact));
    let entries: usize = canonical.iter().map(|r| r.thread.len()).sum();
    let mut group = c.benchmark_group(format!("chain/{entries}-entries"));
    group.bench_function("canonical", |b| {
        b.iter(|| {
            for r in &canonical {
                black_box(r.chain_state());
            }
        })
    });
    group.bench_function("respelled", |b| {
        b.iter(|| {
            for r in &respelled {
                black_box(r.chain_state());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, chains);
criterion_main!(benches);
