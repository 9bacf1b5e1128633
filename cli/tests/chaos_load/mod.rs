//! kill -9 of `agentx serve` under load, shared by the file store's and PostgreSQL's fault
//! suites (`chaos.rs`, `pg_chaos.rs`): clients decide escalated records through the API as
//! fast as they can, the server is killed (SIGKILL, no grace) at a random moment, started
//! again, and the clients go on with what was not answered. What must hold (issue 50's core
//! promise, as SQLite's crash tests and Jepsen's checks of what was acknowledged ask it):
//! every decision answered 2xx is in its ledger (none **lost**), and no record holds two
//! (none **doubled**) — a client that lost its answer in the kill and asks again is refused.
#![allow(dead_code)]

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;
use crate::serve_http::{try_request, Server};

/// What a run of kills found (the figures issue 50 asks for).
#[derive(Debug, Default)]
pub struct Figures {
    pub kills: usize,
    /// Decisions answered 2xx.
    pub acknowledged: usize,
    /// Acknowledged, but not in the ledger afterwards.
    pub lost: usize,
    /// Records with more than one decision.
    pub doubled: usize,
}

/// One decision through the API: `Some(status)`, or `None` when the server could not be
/// reached (it was killed).
fn decide(port: u16, human: &str, id: &str) -> Option<u16> {
    let body = json!({"op": "decide", "input": {"id": id, "message": "ok"}}).to_string();
    let headers = vec![
        ("Host".to_owned(), format!("127.0.0.1:{port}")),
        ("Authorization".to_owned(), format!("Bearer {human}")),
    ];
    let r = try_request(port, "POST", "/api/v1/call", &headers, body.as_bytes())?;
    // A connection cut mid-answer reads as no status at all.
    (r.status != 0).then_some(r.status)
}

/// `clients` clients deciding `ids` on a server killed with SIGKILL `kills` times, each at a
/// moment of its round's choosing and started again, the last one left to finish; then the
/// ledgers read for what was lost or doubled.
pub fn kill_under_load(
    root: &Path,
    human: &str,
    ids: &[String],
    kills: usize,
    clients: usize,
) -> Figures {
    let todo: Mutex<VecDeque<String>> = Mutex::new(ids.iter().cloned().collect());
    let acknowledged: Mutex<BTreeSet<String>> = Mutex::default();
    for round in 0..=kills {
        let mut server = Server::start(root, &[]);
        let port = server.port;
        let down = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..clients {
                s.spawn(|| {
                    while !down.load(Ordering::SeqCst) {
                        let Some(id) = todo.lock().unwrap().pop_front() else {
                            return;
                        };
                        match decide(port, human, &id) {
                            Some(200..=299) => {
                                acknowledged.lock().unwrap().insert(id);
                            }
                            // Decided by a request whose answer the kill took: never twice.
                            Some(409) => {}
                            // Unanswered, or the store was busy: asked again later.
                            _ => todo.lock().unwrap().push_back(id),
                        }
                    }
                });
            }
            // Killed at a moment of the round's choosing (the last round runs to the end).
            let started = Instant::now();
            let after = Duration::from_millis(150 + (round as u64 * 137) % 600);
            while started.elapsed() < after && !todo.lock().unwrap().is_empty() {
                std::thread::sleep(Duration::from_millis(5));
            }
            if round < kills {
                let _ = server.child.kill();
                let _ = server.child.wait();
            } else {
                while !todo.lock().unwrap().is_empty()
                    && started.elapsed() < Duration::from_secs(120)
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            down.store(true, Ordering::SeqCst);
        });
    }
    let acknowledged = acknowledged.into_inner().unwrap();
    let mut figures = Figures {
        kills,
        acknowledged: acknowledged.len(),
        ..Figures::default()
    };
    for id in ids {
        let shown = json_in(root, &["clarify", "show", id]).json();
        let decisions = shown["clarification"]["thread"].as_array().map_or(0, |t| {
            t.iter().filter(|e| e["type"] == "resolution").count()
        });
        if decisions > 1 {
            figures.doubled += 1;
        }
        if acknowledged.contains(id) && decisions == 0 {
            figures.lost += 1;
        }
    }
    figures
}
