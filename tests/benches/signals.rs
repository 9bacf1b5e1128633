//! Signal blocks in agent output (docs/protocol.md §17): parser throughput on 10 MB of mixed output with
//! 10,000 blocks (target ≥ 100 MB/s), JSON extraction after 1 MB of chatter, and the ingest
//! of 1,000 blocks (plan + execute on in-memory ledgers, what the command layer calls under
//! the ledger lock). `scripts/bench` runs it; docs/benchmarks.md records the figures.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use agentx_clarify_core::config::Config;
use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::signals::{self, Context, Existing};
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::workflow::Workflows;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const T0: i64 = 1_795_341_600_000;

const BLOCK: &str = "[CLARIFICATION_NEEDED]\nagent_id: bg-task-{i}\ntimestamp: 2026-01-11T09:00:00-05:00\nblocked_at: \"Which auth strategy to analyze ({i})\"\nquestions:\n  - \"Analyze OAuth2, JWT, or both? ({i})\"\n  - \"What depth?\"\ncurrent_state: |\n  Checkpoint saved: step 1 completed\n  Files: [a.md, b.md]\n[/CLARIFICATION_NEEDED]\n";
const CHATTER: &str = "tool: read_file src/main.rs (ok)\n    thinking about the cache layer and what to do next...\n[2026-01-11T09:00:00] exec cargo test -p core -- --nocapture\n";

/// `blocks` blocks spread evenly through `size` bytes of chatter.
fn mixed(size: usize, blocks: usize) -> String {
    let mut out = String::with_capacity(size + 4096);
    for i in 0..blocks {
        out.push_str(&BLOCK.replace("{i}", &i.to_string()));
        while out.len() < (i + 1) * (size / blocks) {
            out.push_str(CHATTER);
        }
    }
    out
}

fn parse(c: &mut Criterion) {
    let text = mixed(10 << 20, 10_000);
    let mut g = c.benchmark_group("signals");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("parse 10 MB / 10k blocks", |b| {
        b.iter(|| {
            let p = signals::parse(black_box(&text));
            assert_eq!(p.blocks.len(), 10_000);
            p
        })
    });
    g.finish();

    let mut json = mixed(1 << 20, 100);
    json.push_str("{\n  \"result\": {\"ok\": true, \"items\": [1, 2, 3]}\n}\n");
    let mut g = c.benchmark_group("signals");
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("extract_json after 1 MB of chatter", |b| {
        b.iter(|| signals::extract_json(black_box(&json)).unwrap())
    });
    g.finish();
}

/// The ingest at 250, 500 and 1,000 blocks (the cap, docs/protocol.md §31): linear means the
/// time per block stays flat as the input grows (it was quadratic: every block rewrote the
/// ledger).
fn ingest(c: &mut Criterion) {
    let ctx = Context {
        issue: 42,
        agent: String::from("engineer"),
        parent: Some(String::from("architect")),
    };
    let (config, workflows, manifests) =
        (Config::default(), Workflows::defaults(), Manifests::new());
    let mut g = c.benchmark_group("signals");
    g.sample_size(10);
    for blocks in [250usize, 500, 1_000] {
        let text = mixed(blocks << 10, blocks);
        let parsed = signals::parse(&text);
        g.throughput(Throughput::Elements(blocks as u64));
        g.bench_function(format!("ingest {blocks} blocks"), |b| {
            b.iter(|| {
                let out = signals::ingest(
                    &parsed,
                    &ctx,
                    &Existing::default(),
                    signals::Rules {
                        config: &config,
                        workflows: &workflows,
                        manifests: &manifests,
                    },
                    T0,
                    &Signers::default(),
                )
                .unwrap();
                assert_eq!(out.ledger.as_ref().unwrap().clarifications.len(), blocks);
                out
            })
        });
    }
    g.finish();
}

criterion_group!(benches, parse, ingest);
criterion_main!(benches);
