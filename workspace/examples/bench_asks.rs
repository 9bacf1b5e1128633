//! One benchmark writer (`scripts/bench-scale`): `bench_asks ROOT ISSUE N NAME` opens the
//! workspace once (its files, or PostgreSQL as `AGENTX_STORE` / `[store] url` say),
//! waits for a line on stdin (so all writers start together), then runs N `clarify ask`s on
//! ISSUE through the command layer — the whole command: validation, the row or file lock,
//! the statuses, the follow-up monitor — and prints one JSON line: each ask's wall time in
//! microseconds and the id it got.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::time::Instant;

use agentx_clarify_tests::fixtures::engineer_asks;

// The allocator of the agentx binary, whose long-lived process (`agentx mcp`) this writer
// stands for.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(root), Some(issue), Some(n), Some(name)) = (
        args.get(1),
        args.get(2).and_then(|s| s.parse::<u64>().ok()),
        args.get(3).and_then(|s| s.parse::<usize>().ok()),
        args.get(4),
    ) else {
        eprintln!("usage: bench_asks ROOT ISSUE N NAME");
        std::process::exit(2);
    };
    let root = std::path::Path::new(root);
    let ws = agentx_clarify_workspace::Workspace::open(
        root,
        agentx_clarify_runner::ProcessRunner::new(root),
    )
    .expect("open the workspace");
    let store = ws.store().expect("the store");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).expect("stdin");
    let (mut micros, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let req = engineer_asks(
            issue,
            format!("{name} topic {i}"),
            format!("question {i} of {name}?"),
        );
        let t = Instant::now();
        let now = agentx_clarify_store::clock::system_now_ms();
        let m = agentx_clarify_command::ask(&*store, now, &req).expect("ask");
        micros.push(t.elapsed().as_micros());
        ids.push(m.id);
    }
    println!("{}", serde_json::json!({"micros": micros, "ids": ids}));
}
