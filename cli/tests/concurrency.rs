//! Many `agentx` processes at once on the same workspace (docs/protocol.md §8): no lost update, no
//! duplicate id, no `LOCK_TIMEOUT` under modest contention (8 writers), and `verify` clean
//! afterwards. The scenarios run one at a time (a process-wide mutex) so each wall time printed
//! is that scenario's own; timings are reported, never asserted.
//!
//! The workspaces set `lock_timeout_ms = 30000` (the stale-lock age) instead of the 5 s
//! default: these are debug binaries, about ten times slower than release, on machines whose
//! cores the test shares with 8 of its own processes and whatever else runs, and a polling lock
//! gives no FIFO order, so the slowest of 400 waits can approach 5 s there (p50 ~0.25 s, max
//! 2–4.6 s observed on 2 loaded cores). Each scenario prints p50/p99/max per invocation, so the
//! headroom against the 5 s default stays visible.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const PROCESSES: usize = 8;
const ASKS_PER_PROCESS: usize = 50;

/// Serialises the scenarios of this file.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One finished invocation: what ran, how it exited, what it printed.
struct Run {
    what: String,
    out: Out,
    took: Duration,
}

impl Run {
    fn new(what: String, root: &Path, now: i64, args: &[String]) -> Run {
        let started = Instant::now();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = json_at(root, now, &refs);
        Run {
            what,
            out,
            took: started.elapsed(),
        }
    }
}

/// Median, 99th percentile and maximum of the invocation times.
fn latencies(runs: &[Run]) -> String {
    let mut t: Vec<Duration> = runs.iter().map(|r| r.took).collect();
    t.sort();
    let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    format!(
        "per invocation p50 {:.0?}, p99 {:.0?}, max {:.0?}",
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

fn run_json(root: &Path, now: i64, args: &[String]) -> Out {
    Run::new(String::new(), root, now, args).out
}

/// `PROCESSES` threads, each a sequential loop of `ASKS_PER_PROCESS` `clarify ask` processes;
/// `issue_of(p, i)` picks the issue of process `p`'s `i`-th ask.
fn ask_storm(root: &Path, issue_of: impl Fn(usize, usize) -> u32 + Sync) -> Vec<Run> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..PROCESSES)
            .map(|p| {
                let issue_of = &issue_of;
                scope.spawn(move || {
                    (0..ASKS_PER_PROCESS)
                        .map(|i| {
                            let issue = issue_of(p, i);
                            let args = ask_args(
                                issue,
                                &format!("writer {p} topic {i}"),
                                &format!("question {i} of writer {p} on issue {issue}?"),
                            );
                            Run::new(
                                format!("writer {p} ask {i} (issue {issue})"),
                                root,
                                T0,
                                &args,
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer thread panicked"))
            .collect()
    })
}

/// Every run exited 0 with `ok: true`; returns the ids the asks reported.
fn assert_all_ok(runs: &[Run]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut ids = Vec::new();
    for r in runs {
        match r.out.try_json() {
            Ok(v) if r.out.code == 0 && v["ok"] == true => {
                if let Some(id) = v["clarification"]["id"].as_str() {
                    ids.push(id.to_owned());
                }
            }
            Ok(v) => failures.push(format!("{}: exit {} {}", r.what, r.out.code, v["error"])),
            Err(why) => failures.push(format!("{}: {why}: {:?}", r.what, r.out)),
        }
    }
    let timeouts = failures
        .iter()
        .filter(|f| f.contains("LOCK_TIMEOUT"))
        .count();
    assert!(
        failures.is_empty(),
        "{} of {} runs failed ({timeouts} LOCK_TIMEOUT):\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
    ids
}

fn assert_verify_clean(root: &Path) {
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0, "verify: {out:#?}");
    assert_eq!(out.json()["problems"], serde_json::json!([]));
    // The status file, written by every process under its own lock, is intact JSON.
    let text = std::fs::read_to_string(status_path(root)).expect("agent-status.json");
    serde_json::from_str::<Value>(&text).expect("agent-status.json parses");
}

/// A fresh workspace for a scenario (see the module doc for the lock timeout).
fn scenario_workspace() -> tempfile::TempDir {
    let dir = workspace();
    std::fs::write(
        dir.path().join(".agentx/config.toml"),
        "[clarify]\nlock_timeout_ms = 30000\n",
    )
    .unwrap();
    dir
}

fn expected_ids(issue: u32, n: usize) -> Vec<String> {
    (1..=n).map(|s| format!("CLR-{issue}-{s:03}")).collect()
}

/// No lock or temp file may outlive the processes.
fn assert_no_leftovers(root: &Path) {
    let leftovers: Vec<PathBuf> = [clarifications_dir(root), root.join(".agentx/state")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.contains(".lock") || name.starts_with(".agentx-tmp-")
        })
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

#[test]
fn eight_writers_fifty_asks_each_on_one_issue() {
    let _serial = serial();
    let dir = scenario_workspace();
    let root = dir.path();
    let started = Instant::now();
    let runs = ask_storm(root, |_, _| 1);
    let wall = started.elapsed();
    assert_eq!(runs.len(), PROCESSES * ASKS_PER_PROCESS);
    let reported = assert_all_ok(&runs);

    let total = PROCESSES * ASKS_PER_PROCESS;
    let unique: BTreeSet<&String> = reported.iter().collect();
    assert_eq!(reported.len(), total);
    assert_eq!(unique.len(), total, "an id was handed out twice");
    let ledger = read_ledger(root, 1);
    let ids = ledger_ids(&ledger);
    assert_eq!(
        ids,
        expected_ids(1, total),
        "ids on disk are not CLR-1-001..{total}"
    );
    let on_disk: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(on_disk, unique, "reported ids differ from the ledger's");
    // Every request made it, exactly once.
    let topics: BTreeSet<&str> = ledger["clarifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["topic"].as_str().unwrap())
        .collect();
    assert_eq!(topics.len(), total);
    assert_verify_clean(root);
    assert_no_leftovers(root);
    println!(
        "scenario a: {PROCESSES} processes x {ASKS_PER_PROCESS} asks on one issue: {} records, {} unique ids, every exit 0, verify clean; wall time {wall:.2?}; {}",
        ids.len(),
        unique.len(),
        latencies(&runs)
    );
}

#[test]
fn eight_writers_fifty_asks_each_over_eight_issues() {
    let _serial = serial();
    let dir = scenario_workspace();
    let root = dir.path();
    let issues = u32::try_from(PROCESSES).unwrap();
    // Process p's i-th ask goes to issue (p + i) mod 8 + 1: at any moment the writers are on
    // different ledgers, and each issue receives exactly 50 asks.
    let issue_of = |p: usize, i: usize| u32::try_from((p + i) % PROCESSES).unwrap() + 1;
    let started = Instant::now();
    let runs = ask_storm(root, issue_of);
    let wall = started.elapsed();
    let reported = assert_all_ok(&runs);
    assert_eq!(
        reported.iter().collect::<BTreeSet<_>>().len(),
        PROCESSES * ASKS_PER_PROCESS
    );
    let mut per_ledger = BTreeMap::new();
    for issue in 1..=issues {
        let ids = ledger_ids(&read_ledger(root, issue));
        assert_eq!(ids, expected_ids(issue, ASKS_PER_PROCESS), "issue {issue}");
        per_ledger.insert(issue, ids.len());
    }
    assert_verify_clean(root);
    assert_no_leftovers(root);
    println!(
        "scenario b: {PROCESSES} processes x {ASKS_PER_PROCESS} asks over {issues} issues: records per ledger {per_ledger:?}, every exit 0, verify clean; wall time {wall:.2?}; {}",
        latencies(&runs)
    );
}

#[test]
fn concurrent_answers_and_monitors_lose_nothing() {
    let _serial = serial();
    let dir = scenario_workspace();
    let root = dir.path();
    const RECORDS: usize = 64;
    const MONITORS: usize = 4;
    const MONITOR_RUNS: usize = 10;
    // Half the records are asked at T0 (SLA 60 min: stale at T0+90), half at T0+50 (not yet).
    let setup = Instant::now();
    for n in 0..RECORDS {
        let at = if n < RECORDS / 2 {
            T0
        } else {
            T0 + 50 * MINUTE
        };
        let out = run_json(
            root,
            at,
            &ask_args(
                1,
                &format!("subject {n}"),
                &format!("question about subject {n}?"),
            ),
        );
        assert_eq!(out.code, 0, "setup ask {n}: {out:#?}");
    }
    let setup = setup.elapsed();
    let now = T0 + 90 * MINUTE;
    let ids = expected_ids(1, RECORDS);
    let body = |id: &str| format!("answer to {id}");

    let started = Instant::now();
    let (answers, monitors) = std::thread::scope(|scope| {
        let answerers: Vec<_> = (0..PROCESSES)
            .map(|p| {
                // Writer p answers records p, p+8, p+16, …: both halves, interleaved.
                let mine: Vec<String> = ids.iter().skip(p).step_by(PROCESSES).cloned().collect();
                scope.spawn(move || {
                    mine.iter()
                        .map(|id| {
                            let args = vec![
                                "clarify".to_owned(),
                                "answer".into(),
                                format!("--from=architect"),
                                format!("--body={}", body(id)),
                                "--".into(),
                                id.clone(),
                            ];
                            Run::new(format!("answer {id}"), root, now, &args)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let monitors: Vec<_> = (0..MONITORS)
            .map(|m| {
                scope.spawn(move || {
                    (0..MONITOR_RUNS)
                        .map(|i| {
                            Run::new(
                                format!("monitor {m} run {i}"),
                                root,
                                now,
                                &["clarify".into(), "monitor".into()],
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let answers: Vec<Run> = answerers
            .into_iter()
            .flat_map(|h| h.join().expect("answer thread"))
            .collect();
        let monitors: Vec<Run> = monitors
            .into_iter()
            .flat_map(|h| h.join().expect("monitor thread"))
            .collect();
        (answers, monitors)
    });
    let wall = started.elapsed();
    assert_all_ok(&answers);
    assert_all_ok(&monitors);

    // Every id any run reported as made stale, across the monitor runs and the monitors that
    // follow each answer.
    let mut reported_stale = BTreeSet::new();
    for r in answers.iter().chain(&monitors) {
        let v = r.out.json();
        let report = if v.get("report").is_some() {
            &v["report"]
        } else {
            &v["monitor"]
        };
        assert_eq!(report["errors"], serde_json::json!([]), "{}: {v}", r.what);
        for id in report["stale"].as_array().unwrap() {
            assert!(
                reported_stale.insert(id.as_str().unwrap().to_owned()),
                "{id} was made stale twice"
            );
        }
    }

    let ledger = read_ledger(root, 1);
    let records = ledger["clarifications"].as_array().unwrap();
    assert_eq!(ledger_ids(&ledger), ids);
    let mut went_stale = BTreeSet::new();
    for (n, r) in records.iter().enumerate() {
        let id = r["id"].as_str().unwrap();
        let thread = r["thread"].as_array().unwrap();
        let of_type = |t: &str| thread.iter().filter(|e| e["type"] == t).count();
        let answers: Vec<&Value> = thread.iter().filter(|e| e["type"] == "answer").collect();
        assert_eq!(answers.len(), 1, "{id}: answers lost or doubled: {r}");
        assert_eq!(answers[0]["body"], body(id).as_str(), "{id}");
        assert_eq!(answers[0]["from"], "architect");
        assert_eq!(r["status"], "answered", "{id}: {r}");
        assert_eq!(
            thread.last().unwrap()["type"],
            "answer",
            "{id}: nothing may follow the answer"
        );
        let stale = of_type("stale");
        assert!(stale <= 1, "{id}: stale {stale} times");
        assert_eq!(stale, of_type("retry"), "{id}: a stale without its retry");
        assert_eq!(of_type("escalation"), 0, "{id}");
        if stale == 1 {
            assert!(n < RECORDS / 2, "{id} was not due yet but went stale");
            went_stale.insert(id.to_owned());
        }
    }
    assert_eq!(
        went_stale, reported_stale,
        "stale entries on disk differ from what the runs reported"
    );
    assert_verify_clean(root);
    assert_no_leftovers(root);
    println!(
        "scenario c: {RECORDS} answers by {PROCESSES} processes + {} monitor runs by {MONITORS} processes on one ledger: every answer present, {} of {} due records went stale before their answer, verify clean; setup {setup:.2?}, wall time {wall:.2?}; answers {}; monitors {}",
        MONITORS * MONITOR_RUNS,
        went_stale.len(),
        RECORDS / 2,
        latencies(&answers),
        latencies(&monitors)
    );
}
