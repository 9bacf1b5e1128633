//! Monitor benchmarks (issue 3): in-memory ledgers of 3 records each — one resolved with 3
//! entries, one answered after 2 rounds, one fresh pending — at 1k, 10k and 100k ledgers,
//! clean and with 1 % stale, 1 % stuck and 0.5 % deadlock pairs; and deadlock detection alone
//! on 100k pending records in long cycles. Run: `cargo bench -p agentx-clarify-tests --bench monitor`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::hint::black_box;

use agentx_clarify_core::monitor::{find_cycle_breaks, monitor, monitor_ledger, WaitEdge};
use agentx_clarify_core::{Config, Ledger, Statuses};
use agentx_clarify_tests::fixtures::{ask_blocking as ask, workspace};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

const T0: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;

fn bench_monitor(c: &mut Criterion) {
    let statuses = Statuses::new();
    let config = Config::default();
    for (label, mixed) in [("clean", false), ("mixed", true)] {
        let mut group = c.benchmark_group(format!("monitor/{label}"));
        for n in [1_000u64, 10_000, 100_000] {
            let ledgers = workspace(n, mixed, T0);
            if n == 100_000 {
                group.sample_size(10);
            }
            group.bench_function(format!("{n}"), |b| {
                b.iter_batched(
                    || ledgers.clone(),
                    |l| black_box(monitor(l, Vec::new(), &statuses, &config, T0)),
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
    }
}

fn bench_deadlock(c: &mut Criterion) {
    let mut group = c.benchmark_group("deadlock");
    group.sample_size(10);
    // SCC search alone: one ring of 100k agents, and 100 rings of 1000.
    let ring = |n: usize, len: usize| -> Vec<WaitEdge> {
        (0..n)
            .map(|i| WaitEdge {
                from: i,
                to: (i / len) * len + (i % len + 1) % len,
                record: i,
            })
            .collect()
    };
    let one = ring(100_000, 100_000);
    let many = ring(100_000, 1_000);
    group.bench_function("scc/100k-one-ring", |b| {
        b.iter(|| {
            black_box(find_cycle_breaks(100_000, &one, |h| {
                *h.iter().max().unwrap()
            }))
        })
    });
    group.bench_function("scc/100k-in-100-rings", |b| {
        b.iter(|| {
            black_box(find_cycle_breaks(100_000, &many, |h| {
                *h.iter().max().unwrap()
            }))
        })
    });
    // The whole monitor on one issue holding 100k pending blocking records in 100 rings.
    let mut l = Ledger::new(7);
    let template = ask(None, 7, "engineer", "architect", "t", "q", T0);
    for i in 0..100_000usize {
        let mut r = template.clarifications[0].clone();
        r.id = format!("CLR-7-{:03}", i + 1);
        r.from = format!("agent-{i}");
        r.to = format!("agent-{}", (i / 1000) * 1000 + (i % 1000 + 1) % 1000);
        l.clarifications.push(r);
    }
    let config = Config::default();
    group.bench_function("monitor/100k-in-100-rings", |b| {
        b.iter_batched(
            || l.clone(),
            |l| black_box(monitor_ledger(l, &Statuses::new(), &config, T0 + MIN)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_monitor, bench_deadlock);
criterion_main!(benches);
