//! The pure `request` + `answer` pair through the JSON facade — the same calls the Node binding
//! makes per pair, minus the crossing into JavaScript. `scripts/bench` compares the two.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use agentx_clarify_core::api::call;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const T0: i64 = 1_795_341_600_000;

fn pair(c: &mut Criterion) {
    c.bench_function("api/request+answer", |b| {
        b.iter(|| {
            let asked = call("request", &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
                "topic": "Session cache", "question": "Redis or an in-process LRU for the session cache?", "now": T0}));
            let answered = call("answer", &json!({"ledger": asked["ledger"], "statuses": asked["statuses"],
                "id": "CLR-42-001", "from": "architect", "body": "Redis: sessions must survive a deploy.", "now": T0 + 60_000}));
            black_box(answered)
        })
    });
}

criterion_group!(benches, pair);
criterion_main!(benches);
