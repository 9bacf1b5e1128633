//! The notification tests' receiver (`tests/notify/receiver.py`): a threaded HTTP server on
//! 127.0.0.1 that verifies every delivery with the official Standard Webhooks library and
//! prints each request as a JSON line; and the steps both notification test files take (the
//! CLI at a given minute, an ask escalated by hand).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::common::{agentx, root_arg, Out, MINUTE, T0};

pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The receiver, its port and its output (read by a thread, so a missing delivery fails the
/// test after a while instead of hanging it).
pub struct Receiver {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    pub port: u16,
}

impl Receiver {
    pub fn start(extra: &[&str]) -> Receiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/notify/receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(SECRET)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the receiver (scripts/setup installs standardwebhooks)");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        lines.read_line(&mut first).expect("the receiver's port");
        let port = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the receiver did not start: {first:?}"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Receiver {
            child,
            lines: rx,
            port,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Nothing arrives within `wait` (what must not be sent is not).
    pub fn nothing_within(&mut self, wait: std::time::Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("nothing should have been delivered, got {line}");
        }
    }

    /// The next request the receiver recorded.
    pub fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a delivery reached the receiver within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `minutes` after the tests' epoch, as `--now` takes it.
pub fn at(minutes: i64) -> String {
    (T0 + minutes * MINUTE).to_string()
}

/// `agentx --json --now=<now> <args>` in the workspace at `root`.
pub fn agentx_at(root: &Path, now: &str, args: &[&str]) -> Out {
    let mut cmd = agentx();
    cmd.arg(root_arg(root))
        .arg("--json")
        .arg(format!("--now={now}"))
        .args(args);
    Out::from_output(&cmd.output().expect("agentx runs"))
}

/// Asks on `issue` and escalates by hand at `minutes`; the record's id.
pub fn escalate(root: &Path, issue: u32, minutes: i64) -> String {
    let now = at(minutes);
    let ask = agentx_at(
        root,
        &now,
        &[
            "clarify",
            "ask",
            "--issue",
            &issue.to_string(),
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Cache",
            "--question",
            "Redis or LRU?",
        ],
    );
    assert_eq!(ask.code, 0, "{ask:#?}");
    let id = ask.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let esc = agentx_at(
        root,
        &now,
        &["clarify", "escalate", &id, "-m", "a human decides"],
    );
    assert_eq!(esc.code, 0, "{esc:#?}");
    id
}
