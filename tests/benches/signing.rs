//! Ed25519 signatures (issue 17): the cost a signature adds to one write, and `verify` of
//! many signed ledgers against the same ledgers unsigned. Ledgers have the benchmarks' shape
//! (`agentx_clarify_tests::fixtures`: three records, eight entries); the signed ones are the
//! same ledgers with every entry signed by its author's key (the hub key for the monitor).
//! Run: `cargo bench -p agentx-clarify-tests --bench signing`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use agentx_clarify_core::ledger::entry_hash;
use agentx_clarify_core::ops::act_with;
use agentx_clarify_core::signing::{sign_hash, PublicKeys, SecretKey, Signers};
use agentx_clarify_core::verify::verify_ledger;
use agentx_clarify_core::verify::verify_signatures;
use agentx_clarify_core::{Action, Config, Ledger};
use agentx_clarify_tests::fixtures::{ask_blocking, ledger, Kind};
use criterion::{criterion_group, criterion_main, Criterion};

const T0: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;

fn signers() -> Signers {
    let mut s = Signers::new();
    for (i, name) in ["agent-x", "engineer", "architect", "product-manager"]
        .iter()
        .enumerate()
    {
        s.insert(name, SecretKey::from_seed(&[i as u8 + 1; 32]))
            .unwrap();
    }
    s
}

/// `l` with every entry signed (and its chain re-hashed, since `signer` is hashed).
fn signed(mut l: Ledger, signers: &Signers) -> Ledger {
    for r in &mut l.clarifications {
        let mut prev = String::new();
        for e in &mut r.thread {
            let (name, key) = signers.for_author(&e.from).unwrap();
            e.signer = Some(name.to_owned());
            let hash = entry_hash(&r.id, &prev, e);
            e.signature = sign_hash(key, &hash);
            e.hash = Some(hash.clone());
            prev = hash;
        }
    }
    l
}

fn ledgers(n: u64) -> Vec<Ledger> {
    (0..n)
        .map(|i| ledger(i, Kind::Clean, T0 + 60 * MIN))
        .collect()
}

fn verify_all(ledgers: &[Ledger], keys: Option<&PublicKeys>) -> usize {
    let mut problems = 0;
    for l in ledgers {
        let file = format!("issue-{}.json", l.issue_number);
        problems += verify_ledger(&file, l).len();
        if let Some(keys) = keys {
            problems += verify_signatures(&file, l, keys, true).len();
        }
    }
    problems
}

fn writes(c: &mut Criterion) {
    let signers = signers();
    let (_, key) = signers.for_author("architect").unwrap();
    let hash = "6488edba584084472cf87160908541654951a87692fafedac1738589aecd5a02";
    c.bench_function("sign/one entry hash", |b| {
        b.iter(|| black_box(sign_hash(key, black_box(hash))))
    });
    let asked = ask_blocking(None, 42, "engineer", "architect", "Cache", "Redis?", T0);
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Redis: sessions must survive a deploy.".into(),
    };
    let config = Config::default();
    let mut group = c.benchmark_group("write/answer");
    for (name, keys) in [
        ("unsigned", Signers::default()),
        ("signed", signers.clone()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(act_with(
                    &asked,
                    "CLR-42-001",
                    &answer,
                    &config,
                    T0 + MIN,
                    &keys,
                ))
            })
        });
    }
    group.finish();
}

fn verify(c: &mut Criterion) {
    let signers = signers();
    let keys = signers.public_keys();
    for n in [1_000u64, 10_000] {
        let plain = ledgers(n);
        let with_keys: Vec<Ledger> = plain.iter().cloned().map(|l| signed(l, &signers)).collect();
        assert_eq!(verify_all(&plain, None), 0);
        assert_eq!(verify_all(&with_keys, Some(&keys)), 0);
        let mut group = c.benchmark_group(format!("verify/{n}"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if n > 1_000 { 20 } else { 5 }));
        group.bench_function("unsigned", |b| {
            b.iter(|| black_box(verify_all(&plain, None)))
        });
        group.bench_function("signed", |b| {
            b.iter(|| black_box(verify_all(&with_keys, Some(&keys))))
        });
        group.finish();
    }
}

criterion_group!(benches, writes, verify);
criterion_main!(benches);
