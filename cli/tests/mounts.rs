//! Full and read-only filesystems (docs/protocol.md §20), on tmpfs mounts: a ledger written before the
//! status file runs out of space is a success with a warning; a stale lock on a read-only
//! filesystem is `IO_ERROR` at once, naming it. Mounting needs root: elsewhere these tests
//! print a note and check nothing (CI runs as root).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod tmpfs;

use std::path::Path;

use common::*;
use serde_json::json;
use tmpfs::Tmpfs;

fn skip_unless_root(what: &str) -> bool {
    if is_root_user() {
        return false;
    }
    println!("NOTE: not running as root: cannot mount tmpfs; skipping {what} (CI runs as root)");
    eprintln!("NOTE: not running as root: cannot mount tmpfs; skipping {what} (CI runs as root)");
    true
}

fn ask(root: &Path, now: i64, issue: u32, topic: &str) -> Out {
    let args = ask_args(issue, topic, "q?");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    json_within(root, now, &refs)
}

#[test]
fn a_full_disk_after_the_ledger_write_is_a_warning_and_before_it_a_failure() {
    if skip_unless_root("the ENOSPC test") {
        return;
    }
    let dir = workspace();
    let root = dir.path();
    // The state directory and the ledgers' directory on two small filesystems, so that the
    // ledgers have room while the status file does not.
    let state = Tmpfs::mount(&root.join(".agentx/state"), "256k");
    let ledgers = Tmpfs::mount(&clarifications_dir(root), "256k");
    assert_eq!(ask(root, T0, 1, "first").code, 0);
    // One block left: the status lock takes it, the status file's temp finds none.
    state.fill_leaving(1);
    let out = ask(root, T0, 2, "second");
    assert_eq!(out.code, 0, "the ledger was written: {out:#?}");
    let v = out.json();
    assert_eq!(v["clarification"]["id"], "CLR-2-001");
    let warning = v["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("issue-2.json was written, but agent-status.json was not updated")
            && warning.contains("No space left on device"),
        "{v}"
    );
    assert!(out.stderr.contains("No space left on device"), "{out:#?}");
    assert_eq!(read_ledger(root, 2)["clarifications"][0]["id"], "CLR-2-001");
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
    // No room for the ledger itself: the command fails and the ledger is as it was.
    ledgers.fill_leaving(0);
    let before = std::fs::read(ledger_path(root, 1)).unwrap();
    let out = ask(root, T0, 1, "third");
    let v = assert_fails(&out, 1, "IO_ERROR");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{v}"
    );
    assert_eq!(std::fs::read(ledger_path(root, 1)).unwrap(), before);
    drop(ledgers);
    drop(state);
}

#[test]
fn a_stale_lock_on_a_read_only_filesystem_is_an_io_error_at_once() {
    if skip_unless_root("the read-only filesystem test") {
        return;
    }
    let dir = workspace();
    let root = dir.path();
    // A wait for the lock would last a minute; the run's 20 s deadline would fail it.
    write_config(root, "[clarify]\nlock_timeout_ms = 60000\n");
    let state = Tmpfs::mount(&root.join(".agentx/state"), "256k");
    std::fs::create_dir(clarifications_dir(root)).unwrap();
    assert_eq!(ask(root, T0, 1, "first").code, 0);
    // A dead holder's lock (a pid that cannot exist), then the filesystem goes read-only.
    let lock = clarifications_dir(root).join("issue-1.json.lock");
    std::fs::write(
        &lock,
        json!({"pid": 999_999_999u64, "hostname": this_host(), "timestamp": wall_ms(), "agent": "gone"})
            .to_string(),
    )
    .unwrap();
    state.remount_read_only();
    let v = assert_fails(&ask(root, T0, 1, "second"), 1, "IO_ERROR");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("read-only filesystem"), "{message}");
    assert!(
        message.contains(&format!(
            "mounted at {}",
            root.join(".agentx/state").display()
        )),
        "{message}"
    );
    // Reading still works.
    let out = json_within(root, T0, &["clarify", "list", "--all"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["clarifications"].as_array().unwrap().len(), 1);
    assert_eq!(json_within(root, T0, &["clarify", "verify"]).code, 0);
    assert_eq!(
        json_within(root, T0, &["clarify", "monitor", "--dry-run"]).code,
        0
    );
    drop(state);
}
