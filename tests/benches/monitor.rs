//! Monitor benchmarks (issue 3): in-memory ledgers of 3 records each — one resolved with 3
//! entries, one answered after 2 rounds, one fresh pending — at 1k, 10k and 100k ledgers,
//! clean and with 1 % stale, 1 % stuck and 0.5 % deadlock pairs; and deadlock detection alone
//! on 100k pending records in long cycles; and one issue of 400 and 1,600 records asked in
//! one direction. The `clean` and `mixed` passes start with the
//! ledgers out of the caches (see [`Evictor`]); `clean-warm` starts right after the clone that
//! made them, as earlier versions of this file did, to show what the cache does. Run: `cargo bench -p agentx-clarify-tests --bench monitor`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::hint::black_box;
use std::time::Duration;

use agentx_clarify_core::monitor::{find_cycle_breaks, monitor, monitor_ledger, WaitEdge};
use agentx_clarify_core::{Config, Ledger, Statuses};
use agentx_clarify_tests::fixtures::{ask_blocking as ask, workspace};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

const T0: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;

/// Writes over a buffer twice the size of the last-level cache, one cache line at a time in a
/// shuffled order, so that what was read before is no longer cached. The monitor passes start
/// cold at every size: otherwise the 1k workspace (about 4 MB) is still in the 32 MiB L3 from
/// the clone that has just made it while 10k (40 MB) and 100k are not, and the 1k→10k ratio
/// measures the cache rather than the monitor. (A sequential sweep is not enough: the L3's
/// replacement policy resists scans and kept part of the 1k workspace in about one pass of
/// three.)
struct Evictor {
    words: Vec<u64>,
    order: Vec<usize>,
}

const WORDS_PER_LINE: usize = 8;

impl Evictor {
    fn new() -> Self {
        let l3 = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index3/size")
            .ok()
            .and_then(|s| s.trim().strip_suffix('K')?.parse::<usize>().ok())
            .map_or(32 << 20, |k| k << 10);
        let lines = 2 * l3 / 64;
        let mut order: Vec<usize> = (0..lines).collect();
        // Fisher–Yates with xorshift64: any fixed scattering will do.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        Evictor {
            words: vec![1; lines * WORDS_PER_LINE],
            order,
        }
    }

    fn run(&mut self) {
        for &line in &self.order {
            let w = &mut self.words[line * WORDS_PER_LINE];
            *w = w.wrapping_mul(3);
        }
        black_box(&self.words);
    }
}

fn bench_monitor(c: &mut Criterion) {
    let statuses = Statuses::new();
    let config = Config::default();
    let mut evictor = Evictor::new();
    for (label, mixed, cold) in [
        ("clean", false, true),
        ("mixed", true, true),
        ("clean-warm", false, false),
    ] {
        let mut group = c.benchmark_group(format!("monitor/{label}"));
        // Eviction costs ~10 ms a pass, outside the timing: keep the wall time in bounds.
        group.measurement_time(Duration::from_secs(if cold { 2 } else { 5 }));
        for n in [1_000u64, 10_000, 100_000] {
            let ledgers = workspace(n, mixed, T0);
            if n == 100_000 {
                group.sample_size(10);
            }
            group.bench_function(format!("{n}"), |b| {
                b.iter_batched(
                    || {
                        let copy = ledgers.clone();
                        if cold {
                            evictor.run();
                        }
                        copy
                    },
                    |l| black_box(monitor(l, Vec::new(), &statuses, &config, T0)),
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
}

/// One issue asked many times in one direction (the storm of `scripts/bench-scale`): the pass
/// an ask's follow-up monitor makes over the ledger it holds, so its cost per record matters.
fn bench_one_issue(c: &mut Criterion) {
    let statuses = Statuses::new();
    let config = Config::default();
    let mut group = c.benchmark_group("monitor/one-issue");
    for n in [400u64, 1_600] {
        let mut ledger = None;
        for i in 0..n {
            let topic = format!("storm topic {i}");
            let next = ask(
                ledger.as_ref(),
                1,
                "engineer",
                "architect",
                &topic,
                "Which?",
                T0,
            );
            ledger = Some(next);
        }
        let ledger = ledger.unwrap();
        group.bench_function(format!("{n}"), |b| {
            b.iter_batched(
                || ledger.clone(),
                |l| black_box(monitor_ledger(l, &statuses, &config, T0 + MIN)),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
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

criterion_group!(benches, bench_monitor, bench_one_issue, bench_deadlock);
criterion_main!(benches);
