//! Ledger locks on disk: a live foreign lock times out with exit 7 and is left alone; a lock
//! of a dead process, an impossible pid or an old one is taken at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

fn foreign_lock(pid: u64, host: &str, timestamp: i64) -> String {
    json!({"pid": pid, "hostname": host, "timestamp": timestamp, "agent": "someone-else"})
        .to_string()
}

#[test]
fn exit_7_lock_timeout_on_a_fresh_foreign_lock() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    ask(root, T0, 3, "T", "Q");
    let ledger_before = bytes(&ledger_path(root, 3));
    let lock = clarifications_dir(root).join("issue-3.json.lock");
    // Held by a live process (this test) on this host, and by an unknown pid on another host.
    for content in [
        foreign_lock(u64::from(std::process::id()), &this_host(), wall_ms()),
        foreign_lock(999_999_999, "some-other-host.example", wall_ms()),
        json!({"agent": "engineer", "created": chrono::DateTime::from_timestamp_millis(wall_ms()).unwrap().to_rfc3339()}).to_string(),
    ] {
        std::fs::write(&lock, &content).unwrap();
        let started = Instant::now();
        let args = ask_args(3, "Another", "another?");
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = json_at(root, T0, &refs);
        let took = started.elapsed();
        assert_fails(&out, 7, "LOCK_TIMEOUT");
        assert!(took >= Duration::from_millis(200), "gave up after {took:?}");
        assert!(took < Duration::from_secs(4), "waited {took:?} for a 200 ms timeout");
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), content, "foreign lock touched");
        assert_eq!(bytes(&ledger_path(root, 3)), ledger_before, "ledger written without the lock");
        let out = json_at(root, T0, &["clarify", "answer", "CLR-3-001", "--from=architect", "--body=x"]);
        assert_fails(&out, 7, "LOCK_TIMEOUT");
    }
    std::fs::remove_file(&lock).unwrap();
    ask(root, T0, 3, "Another", "another?");
    assert_eq!(
        ledger_ids(&read_ledger(root, 3)),
        ["CLR-3-001", "CLR-3-002"]
    );
}

#[test]
fn dead_pid_and_old_locks_are_taken_at_once() {
    let dir = workspace();
    let root = dir.path();
    // A lock that was not broken at once would be waited on for up to 10 s (then exit 7).
    write_config(root, "[clarify]\nlock_timeout_ms = 10000\n");
    let lock = clarifications_dir(root).join("issue-4.json.lock");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = u64::from(child.id());
    child.wait().unwrap();
    let cases = [
        (
            "dead pid on this host",
            foreign_lock(dead, &this_host(), wall_ms()),
        ),
        (
            "impossible pid",
            foreign_lock(999_999_999, &this_host(), wall_ms()),
        ),
        (
            "live pid, older than stale_lock_ms",
            foreign_lock(
                u64::from(std::process::id()),
                &this_host(),
                wall_ms() - 60 * 60 * 1000,
            ),
        ),
        (
            "old PowerShell lock",
            r#"{"agent":"engineer","created":"2000-01-01T00:00:00Z"}"#.to_owned(),
        ),
    ];
    for (i, (what, content)) in cases.iter().enumerate() {
        std::fs::write(&lock, content).unwrap();
        let started = Instant::now();
        ask(root, T0, 4, &format!("topic {i}"), &format!("q {i}?"));
        let took = started.elapsed();
        // Well under the 10 s lock timeout and the 30 s stale age: the lock was broken at once.
        assert!(took < Duration::from_secs(4), "{what}: took {took:?}");
        assert!(!lock.exists(), "{what}: lock left behind");
    }
    assert_eq!(
        read_ledger(root, 4)["clarifications"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // Leftovers of broken locks are not left in the directory.
    let names: Vec<String> = std::fs::read_dir(clarifications_dir(root))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["issue-4.json"], "{names:?}");
}
