//! Crash safety (SPEC §8): writers killed with SIGKILL at random moments never leave a torn
//! ledger, a `.agentx-tmp-*` leftover is never taken for a ledger, and the lock a dead writer
//! leaves behind is broken at once (dead pid), so the next command succeeds promptly — far
//! below the 30 s stale-lock age.
//!
//! `AGENTX_TEST_SLOW_WRITE_MS=200` makes the store sleep a random 0..200 ms inside the locked
//! section, before and after writing the temp file (cli/src/store/atomic.rs), so a kill after a
//! random 0..300 ms lands before, inside and after the locked write. Set `AGENTX_CRASH_SEED`
//! to replay a run.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const RUNS: usize = 60;
const SLOW_WRITE_MS: u64 = 200;
const MAX_KILL_DELAY_MS: u64 = 300;
/// Far below `stale_lock_ms` (30 s): only dead-pid detection can recover this fast.
const RECOVERY_LIMIT: Duration = Duration::from_secs(5);

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The lock files present in the state directories.
fn locks_left(root: &Path) -> Vec<String> {
    let mut locks: Vec<String> = names_in(&clarifications_dir(root))
        .into_iter()
        .chain(names_in(&root.join(".agentx/state")))
        .filter(|n| n.ends_with(".lock"))
        .collect();
    locks.sort();
    locks
}

/// The ledger's records, or none when the file does not exist yet. The file must parse.
fn records(root: &Path) -> Vec<Value> {
    let path = ledger_path(root, 1);
    match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{path:?}: {e}"),
        Ok(bytes) => {
            let v: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!("torn ledger: {e}\n{}", String::from_utf8_lossy(&bytes))
            });
            v["clarifications"].as_array().cloned().unwrap_or_default()
        }
    }
}

fn status_of(records: &[Value], id: &str) -> String {
    records
        .iter()
        .find(|r| r["id"] == id)
        .and_then(|r| r["status"].as_str())
        .unwrap_or("")
        .to_owned()
}

#[test]
fn sigkilled_writers_never_tear_a_ledger_and_their_locks_are_broken_at_once() {
    let seed = std::env::var("AGENTX_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    println!("crash seed {seed} (AGENTX_CRASH_SEED={seed} replays it)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = workspace();
    let root = dir.path();

    let mut killed = 0usize;
    let mut finished = 0usize;
    let mut inside_lock = 0usize;
    let mut ledger_writes_seen = 0usize;
    let mut max_recovery = Duration::ZERO;
    let mut total_recovery = Duration::ZERO;
    let mut slowest: Vec<(Duration, usize, Vec<String>)> = Vec::new();
    // The record an `answer` run targets: a pending one made by the previous recovery ask.
    let mut pending: Option<String> = None;
    let started = Instant::now();

    for run in 0..RUNS {
        let before = records(root);
        let answer_target = pending.clone().filter(|_| run % 3 == 2);
        let args: Vec<String> = match &answer_target {
            Some(id) => vec![
                "clarify".into(),
                "answer".into(),
                "--from=architect".into(),
                format!("--body=answer in run {run}"),
                "--".into(),
                id.clone(),
            ],
            None => ask_args(1, &format!("crash run {run}"), &format!("question {run}?")),
        };
        let mut child = agentx()
            .env("AGENTX_TEST_SLOW_WRITE_MS", SLOW_WRITE_MS.to_string())
            .arg(root_arg(root))
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn agentx");
        std::thread::sleep(Duration::from_millis(rng.u64(0..MAX_KILL_DELAY_MS)));
        // SIGKILL (a no-op if it already exited; it stays a zombie until waited for).
        child.kill().expect("kill");
        let status = child.wait().expect("wait");
        let what = format!("run {run} (seed {seed}, {})", args[1]);
        if status.signal() == Some(libc::SIGKILL) {
            killed += 1;
        } else {
            finished += 1;
            assert_eq!(status.code(), Some(0), "{what}: finished but failed");
        }
        let locks = locks_left(root);
        if !locks.is_empty() {
            assert!(
                status.signal().is_some(),
                "{what}: exited but left {locks:?}"
            );
            inside_lock += 1;
        }

        // The ledger is the old one or the new one, never torn.
        let after = records(root);
        match &answer_target {
            None => {
                assert!(
                    after.len() == before.len() || after.len() == before.len() + 1,
                    "{what}: {} records before, {} after",
                    before.len(),
                    after.len()
                );
                ledger_writes_seen += after.len() - before.len();
            }
            Some(id) => {
                assert_eq!(after.len(), before.len(), "{what}");
                let s = status_of(&after, id);
                assert!(s == "pending" || s == "answered", "{what}: {id} is {s}");
                ledger_writes_seen += usize::from(s == "answered");
            }
        }
        let ids: Vec<String> = after
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect();
        let expected: Vec<String> = (1..=after.len()).map(|n| format!("CLR-1-{n:03}")).collect();
        assert_eq!(ids, expected, "{what}: ids");

        // verify is clean and sees exactly the real ledger: no temp file taken for one.
        let out = json_in(root, &["clarify", "verify"]);
        assert_eq!(out.code, 0, "{what}: verify after the kill: {out:#?}");
        assert!(!out.stdout.contains(".agentx-tmp-"), "{what}: {out:#?}");
        let listed = json_in(root, &["clarify", "list", "--all"]).json();
        assert_eq!(
            listed["clarifications"].as_array().unwrap().len(),
            after.len(),
            "{what}: list sees another ledger"
        );
        if let Ok(text) = std::fs::read_to_string(status_path(root)) {
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|e| panic!("{what}: torn agent-status.json: {e}\n{text}"));
        }

        // The next ask succeeds promptly, whatever the dead writer left behind.
        let recovery = Instant::now();
        let out = json_at(
            root,
            T0,
            &[
                "clarify",
                "ask",
                "--issue=1",
                "--from=engineer",
                "--to=architect",
                &format!("--topic=recovery {run}"),
                &format!("--question=recovered after run {run}?"),
                "--non-blocking",
            ],
        );
        let took = recovery.elapsed();
        assert_eq!(
            out.code, 0,
            "{what}: the next ask failed (locks {locks:?}): {out:#?}"
        );
        assert!(
            took < RECOVERY_LIMIT,
            "{what}: the next ask took {took:?} (locks left: {locks:?})"
        );
        max_recovery = max_recovery.max(took);
        slowest.push((took, run, locks.clone()));
        total_recovery += took;
        pending = out.json()["clarification"]["id"]
            .as_str()
            .map(str::to_owned);
        assert!(
            locks_left(root).is_empty(),
            "{what}: locks remain after recovery: {:?}",
            locks_left(root)
        );
    }

    // The monitor does not trip over leftovers either, and the final state verifies.
    let v = json_at(root, T0, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"], serde_json::json!([]), "{v}");
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
    let temps = names_in(&clarifications_dir(root))
        .into_iter()
        .chain(names_in(&root.join(".agentx/state")))
        .filter(|n| n.starts_with(".agentx-tmp-"))
        .count();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    slowest.truncate(3);
    println!(
        "crash: {RUNS} runs in {:.1?}: {killed} killed ({inside_lock} inside a lock: a lock file was left behind; {} outside any lock), {finished} finished before the kill; {ledger_writes_seen} killed-or-finished writes reached the ledger; {temps} orphaned temp file(s) ignored; recovery (next ask) max {max_recovery:.0?}, mean {:.0?}; slowest recoveries (time, run, locks left): {slowest:?}",
        started.elapsed(),
        killed - inside_lock,
        total_recovery / u32::try_from(RUNS).unwrap()
    );
    assert!(
        killed > 0,
        "no run was killed: the kill delays are too long"
    );
}
