//! What signing costs a write through the command layer (issue 17): the same `answer` over a
//! `MemStore` without keys and with the workspace's keys (read and parsed by the command,
//! then the entry signed), and reading the keys of a `DiskStore` (`.agentx/keys/`: one
//! directory listing and one owner-only check and read per key file), which every write on
//! disk now does. Run: `cargo bench -p agentx-clarify-tests --bench signed_writes`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use agentx_clarify_command::store::keys::signers;
use agentx_clarify_command::{call, MemStore};
use agentx_clarify_store::DiskStore;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

const T0: i64 = 1_795_341_600_000;

fn keys() -> Value {
    let fixture: Value = serde_json::from_str(include_str!("../fixtures/ed25519.json")).unwrap();
    let mut files = serde_json::Map::new();
    for k in fixture["keys"].as_array().unwrap() {
        let agent = k["agent"].as_str().unwrap();
        files.insert(format!("{agent}.pub"), k["public"].clone());
        files.insert(format!("{agent}.key"), k["seed"].clone());
    }
    Value::Object(files)
}

/// A workspace with one pending record of issue 42, asked at T0.
fn workspace(with_keys: bool) -> MemStore {
    let setup = if with_keys {
        json!({"keys": keys()})
    } else {
        json!({})
    };
    let store = MemStore::from_setup(&setup).unwrap();
    let ask = json!({"issueNumber": 42, "from": "engineer", "to": "architect",
        "topic": "Cache", "question": "Redis?"});
    assert_eq!(call(&store, "ask", &ask, T0)["ok"], true);
    store
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("command layer write");
    for (name, with_keys) in [
        ("answer, unsigned", false),
        ("answer, signed (4 keys)", true),
    ] {
        let store = workspace(with_keys);
        let before = store.files();
        let answer = json!({"id": "CLR-42-001", "from": "architect", "body": "Yes, Redis."});
        g.bench_function(name, |b| {
            b.iter_batched(
                || MemStore::from_files(before.clone()),
                |s| {
                    let out = call(&s, "answer", black_box(&answer), T0 + 60_000);
                    assert_eq!(out["ok"], true);
                    out
                },
                criterion::BatchSize::SmallInput,
            );
        });
    }
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let disk = DiskStore::new(dir.path());
    for k in ["agent-x", "engineer", "architect", "product-manager"] {
        let seed = agentx_clarify_store::random_seed().unwrap();
        agentx_clarify_command::keys::new_key(&disk, k, &seed).unwrap();
    }
    c.bench_function("DiskStore: read and parse 4 key pairs", |b| {
        b.iter(|| black_box(signers(&disk).unwrap()));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
