//! `/api/v1/call`'s work without HTTP, for `scripts/bench-serve`'s "in-process" column: reads
//! `{"op": …, "input": …}` lines on stdin and runs each through the command layer on the
//! workspace at ROOT exactly as the server's handler does (the workspace opened once, its
//! settings' stamp looked at per call, the clock read per call), printing the milliseconds
//! each took, one per line.
//!
//!   call_in_process ROOT < calls.jsonl
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, Write};
use std::time::Instant;

use serde_json::Value;

fn main() {
    let root = std::path::PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: call_in_process ROOT"),
    );
    let ws = agentx_clarify_a2a::open_workspace_watching(&root).expect("a workspace");
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let call: Value = serde_json::from_str(&line).expect("a JSON call");
        let op = call["op"].as_str().expect("op").to_string();
        let started = Instant::now();
        let now = agentx_clarify_store::clock::system_now_ms();
        let reply = ws.call(&op, &call["input"], now);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(reply["ok"], true, "{reply}");
        writeln!(out, "{ms:.4}").expect("stdout");
    }
}
