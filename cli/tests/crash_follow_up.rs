//! Crash safety of the follow-up's index (docs/protocol.md §29): a writer killed between its ledger and
//! its index entries never hides work from the next command. An `ask` that closes a wait-for
//! cycle (its follow-up would break it) runs under `strace`, which kills it with SIGKILL on
//! entry to the N-th call of one syscall — write, fsync, rename, unlink, mkdir, for every N
//! until the ask completes — so the sweep visits every state a crash can leave between the
//! index's keys (due time, cycle, requester) and the ledger. After each kill, a command on
//! another issue two hours later (both records past their SLA) must find everything due: a
//! full `clarify monitor --dry-run` at that instant finds nothing left (a superset read by the
//! follow-up is allowed, never less), and its report names the stale records.
//!
//! Needs `strace` (scripts/setup installs it) and ptrace permission.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

const TRACED: &str =
    "write,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat";
const INJECTED: [&str; 7] = [
    "write", "fsync", "rename", "renameat", "unlinkat", "mkdir", "mkdirat",
];
const MAX_CALLS: usize = 200;
/// Both records' 60-minute SLA has passed.
const LATER: i64 = T0 + 120 * MINUTE;

/// The feature workflow with a way back (architect → engineer), so two blocking requests can
/// wait on each other.
const WORKFLOW: &str = r#"
[[steps]]
id = "architecture"
agent = "architect"
can_clarify = ["product-manager", "engineer"]
clarify_sla_minutes = 60

[[steps]]
id = "implement"
agent = "engineer"
can_clarify = ["architect", "product-manager"]
clarify_sla_minutes = 60
"#;

fn blocking_ask(issue: u32, from: &str, to: &str) -> Vec<String> {
    vec![
        "clarify".into(),
        "ask".into(),
        format!("--issue={issue}"),
        format!("--from={from}"),
        format!("--to={to}"),
        format!("--topic=from {from}"),
        format!("--question=What does {to} need?"),
    ]
}

fn strace_available() {
    let ok = Command::new("strace")
        .args(["-qq", "-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "strace is missing or cannot trace here (ptrace): run scripts/setup, which installs it"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp");
    assert!(status.success());
}

/// Holds a shared lock on `.agentx/index/writers`, as a writer of the store does while it
/// works, until dropped.
fn writer_at_work(root: &Path) -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(root.join(".agentx/index/writers"))
        .expect("open the writers' lock");
    file.lock_shared()
        .expect("a shared lock on the writers' file");
    file
}

fn argv(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn count(report: &Value, kind: &str) -> usize {
    report[kind].as_array().map_or(0, Vec::len)
}

#[test]
fn a_writer_killed_between_its_ledger_and_its_index_hides_nothing_from_the_next_command() {
    strace_available();
    let template = workspace();
    std::fs::write(
        template.path().join(".agentx/workflows/feature.toml"),
        WORKFLOW,
    )
    .unwrap();
    // Issue 5: the engineer waits on the architect; finished work on 1–3 around it.
    for issue in 1..=3 {
        let out = json_at(
            template.path(),
            T0 - 10 * MINUTE,
            &argv(&ask_args(issue, "t", "q")),
        );
        assert_eq!(out.code, 0, "{out:#?}");
        let id = format!("CLR-{issue}-001");
        let answer = ["clarify", "answer", &id, "--from=architect", "--body=yes"];
        let out = json_at(template.path(), T0 - 9 * MINUTE, &answer);
        assert_eq!(out.code, 0, "{out:#?}");
        let resolve = ["clarify", "resolve", &id];
        let out = json_at(template.path(), T0 - 8 * MINUTE, &resolve);
        assert_eq!(out.code, 0, "{out:#?}");
    }
    let first = json_at(
        template.path(),
        T0,
        &argv(&blocking_ask(5, "engineer", "architect")),
    );
    assert_eq!(first.code, 0, "{first:#?}");

    let mut runs = 0;
    let mut killed_after_ledger = 0;
    let mut cycles_found_later = 0;
    for syscall in INJECTED {
        for n in 1..=MAX_CALLS {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            copy_dir(template.path(), root);
            // A copy's directories are new (the index's stamp names the directory's inode):
            // a full pass makes the index trusted again before the kill.
            assert_eq!(json_in(root, &["clarify", "list"]).code, 0);
            let what = format!("kill at {syscall} #{n}");
            // The way back closes a cycle on issue 5.
            let status = Command::new("strace")
                .args(["-f", "-qq", "-o", "/dev/null", "-e"])
                .arg(format!("trace={TRACED}"))
                .arg("-e")
                .arg(format!("inject={syscall}:signal=SIGKILL:when={n}"))
                .arg(BIN)
                .arg(root_arg(root))
                .arg("--json")
                .arg(format!("--now={}", T0 + MINUTE))
                .args(blocking_ask(5, "architect", "engineer"))
                .env_remove("AGENTX_NOW")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run strace");
            let killed = status.signal() == Some(libc::SIGKILL)
                || status.code() == Some(128 + libc::SIGKILL);
            if !killed {
                assert_eq!(status.code(), Some(0), "{what}: the ask failed: {status:?}");
            }
            runs += 1;
            let records = read_ledger(root, 5)["clarifications"]
                .as_array()
                .map_or(0, Vec::len);
            if killed && records == 2 {
                killed_after_ledger += 1;
            }

            // A command on another issue a minute later (nothing due yet: only the cycle's
            // key leads there), then one two hours later (every record past its SLA), each
            // by an agent with no part in issue 5.
            for (at, issue) in [(T0 + 2 * MINUTE, 8), (LATER, 9)] {
                // Another writer at work meanwhile (its shared lock on the index's `writers`)
                // vouches for the directory's change: the next command trusts the index
                // instead of rebuilding it, so only the keys the killed writer left lead it.
                let other = writer_at_work(root);
                let next = json_at(root, at, &argv(&ask_args(issue, "later", "anything?")));
                drop(other);
                assert_eq!(next.code, 0, "{what}: {next:#?}");
                let report = next.json()["monitor"].clone();
                assert_eq!(report["errors"], serde_json::json!([]), "{what}: {report}");
                if at == LATER {
                    // Every record of issue 5 still open was past its SLA: found.
                    assert!(count(&report, "stale") >= 1, "{what}: {report}");
                }
                if count(&report, "deadlocks") > 0 {
                    cycles_found_later += 1;
                }
                // Nothing is left for a full pass at the same instant.
                let full = json_at(root, at, &["clarify", "monitor", "--dry-run"]);
                assert_eq!(full.code, 0, "{what}: {full:#?}");
                let full = full.json()["report"].clone();
                for kind in [
                    "stale",
                    "retried",
                    "escalated",
                    "stuck",
                    "deadlocks",
                    "abandoned",
                ] {
                    assert_eq!(count(&full, kind), 0, "{what} at {at}: {kind} left: {full}");
                }
            }
            if !killed {
                break;
            }
            assert!(n < MAX_CALLS, "{what}: the ask never completed");
        }
    }
    println!(
        "follow-up crash sweep: {runs} runs, {killed_after_ledger} killed after the ledger \
         write, {cycles_found_later} cycles left by a kill found by the next command"
    );
    assert!(
        killed_after_ledger > 0,
        "no kill landed between the ledger write and the follow-up: the sweep misses the gap"
    );
    assert!(
        cycles_found_later > 0,
        "no kill left a cycle for the next command: the sweep misses the cycle's key"
    );
}
