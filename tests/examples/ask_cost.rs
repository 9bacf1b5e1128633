//! The core's share of one `clarify ask` on an issue that already holds `N` records: parse the
//! ledger file's bytes, decide the request (validation, idempotency, scope, and since issue 28
//! the fingerprint check), seal, and write the pretty JSON — what the command does between
//! reading and writing the file. Prints the median and p90 over many asks, for the side by
//! side of docs/benchmarks.md (issue 28: run it on the commit before and after).
//! Usage: cargo run --release -p agentx-clarify-tests --example ask_cost [N] [ASKS]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use agentx_clarify_core::ops::request_owned;
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::{act, Action, Config, Ledger, NewRequest, Workflows};

const T0: i64 = 1_795_341_600_000;

fn asked(n: usize) -> NewRequest {
    NewRequest {
        issue_number: 42,
        from: "engineer".into(),
        to: if n.is_multiple_of(2) {
            "architect"
        } else {
            "product-manager"
        }
        .into(),
        topic: format!("Topic {n}"),
        question: format!("Question number {n}: which cache layer do we use for sessions?"),
        field: Some(format!("storage.field{}", n % 7)),
        ..NewRequest::default()
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let asks: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(400);
    let config = Config::default();
    let workflows = Workflows::defaults();
    let signers = Signers::default();
    // A ledger of n records, every second one answered and resolved (finished work).
    let mut ledger: Option<Ledger> = None;
    for k in 0..n {
        let Ok(a) = request_owned(ledger.take(), &asked(k), &config, &workflows, T0, &signers)
        else {
            eprintln!("setup ask {k} refused");
            return;
        };
        let mut l = a.ledger;
        if k.is_multiple_of(2) {
            let answer = Action::Answer {
                from: if k.is_multiple_of(2) {
                    "architect"
                } else {
                    "product-manager"
                }
                .into(),
                body: "Redis, see ADR-7.".into(),
            };
            if let Ok(x) = act(&l, &a.id, &answer, &config, T0 + 1) {
                let resolve = Action::Resolve {
                    from: None,
                    message: None,
                };
                if let Ok(y) = act(&x.ledger, &a.id, &resolve, &config, T0 + 2) {
                    l = y.ledger;
                } else {
                    l = x.ledger;
                }
            }
        }
        ledger = Some(l);
    }
    let bytes = ledger.map(|l| l.to_pretty_json()).unwrap_or_default();
    let mut times = Vec::with_capacity(asks);
    let mut sink = 0usize;
    for k in 0..asks {
        let start = Instant::now();
        let Ok(current) = Ledger::parse("issue-42.json", bytes.as_bytes(), Some(42)) else {
            eprintln!("parse failed");
            return;
        };
        let req = asked(n + 1 + k);
        let Ok(applied) =
            request_owned(Some(current), &req, &config, &workflows, T0 + 10, &signers)
        else {
            eprintln!("ask refused");
            return;
        };
        sink += applied.ledger.to_pretty_json().len();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((p * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
    println!(
        "{n} records ({} KB): ask p50 {:.3} ms  p90 {:.3} ms  ({asks} asks; {sink} bytes written)",
        bytes.len() / 1024,
        at(0.5),
        at(0.9)
    );
}
