//! Faults a user meets (issue 12, docs/protocol.md §20), through the real binary: locks that claim a
//! future time, lock timeouts that say who holds the lock, failures after the ledger write
//! (warnings, exit 0), FIFOs and directories where files belong (refused at once, never
//! hanging: every run here has a deadline), corrupt ledgers that listings must not hide, and
//! `--root` naming nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use common::*;
use serde_json::{json, Value};

fn argv(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn ask_within(root: &Path, now: i64, issue: u32, topic: &str) -> Out {
    json_within(
        root,
        now,
        &argv(&ask_args(issue, topic, &format!("what now about {topic}?"))),
    )
}

fn set_mtime(path: &Path, ago: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - ago).unwrap();
}

fn records(root: &Path, issue: u32) -> usize {
    read_ledger(root, issue)["clarifications"]
        .as_array()
        .map_or(0, Vec::len)
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success(), "mkfifo {path:?}");
}

fn live_lock(agent: &str) -> String {
    json!({"pid": std::process::id(), "hostname": this_host(), "timestamp": wall_ms(), "agent": agent})
        .to_string()
}

#[test]
fn a_future_dated_lock_is_stale_by_its_mtime() {
    let dir = workspace();
    let root = dir.path();
    // A timeout far below the 30 s stale age: only breaking the lock at once can succeed.
    write_config(root, "[clarify]\nlock_timeout_ms = 300\n");
    assert_eq!(ask_within(root, T0, 1, "first").code, 0);
    let lock = clarifications_dir(root).join("issue-1.json.lock");
    std::fs::write(&lock, r#"{"agent":"x","created":"2999-01-01T00:00:00Z"}"#).unwrap();
    // Fresh by its mtime: respected.
    assert_fails(&ask_within(root, T0, 1, "second"), 7, "LOCK_TIMEOUT");
    set_mtime(&lock, Duration::from_secs(3600));
    let out = ask_within(root, T0, 1, "second");
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(records(root, 1), 2);
    assert!(!lock.exists());
}

#[test]
fn lock_timeouts_name_the_lock_file_its_holder_and_its_age() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    assert_eq!(ask_within(root, T0, 1, "first").code, 0);
    let lock = clarifications_dir(root).join("issue-1.json.lock");
    std::fs::write(&lock, live_lock("architect")).unwrap();
    set_mtime(&lock, Duration::from_secs(2));
    let v = assert_fails(&ask_within(root, T0, 1, "second"), 7, "LOCK_TIMEOUT");
    let message = v["error"]["message"].as_str().unwrap();
    let holder = format!(
        "agent 'architect' (pid {} on host {})",
        std::process::id(),
        this_host()
    );
    assert!(message.contains(&lock.display().to_string()), "{message}");
    assert!(message.contains(&holder), "{message}");
    assert!(message.contains("within 200 ms"), "{message}");
    let age: u64 = message
        .rsplit("for ")
        .next()
        .and_then(|t| t.strip_suffix(" ms so far"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no age in {message}"));
    assert!((2000..60_000).contains(&age), "{message}");
    // A core message names no CLI flag.
    assert!(!message.contains("--"), "{message}");
}

#[test]
fn a_status_file_failure_after_the_ledger_write_is_a_warning_and_exit_0() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    let status_lock = root.join(".agentx/state/agent-status.json.lock");
    std::fs::write(&status_lock, live_lock("someone")).unwrap();
    let out = ask_within(root, T0, 1, "first");
    assert_eq!(
        out.code, 0,
        "the record is written, so the ask succeeded: {out:#?}"
    );
    let v = out.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["clarification"]["id"], "CLR-1-001");
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{v}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with(
            "issue-1.json was written, but agent-status.json was not updated: could not lock"
        ),
        "{w}"
    );
    assert!(
        out.stderr.contains("warning") && out.stderr.contains("agent-status.json"),
        "{out:#?}"
    );
    assert_eq!(records(root, 1), 1);
    // A caller that retries with its idempotency key gets the same record, never a second one.
    let keyed = ask_args(2, "keyed", "k?");
    let args = [argv(&keyed), vec!["--idempotency-key=k1"]].concat();
    let first = json_within(root, T0, &args).json();
    assert_eq!(first["warnings"].as_array().unwrap().len(), 1);
    let again = json_within(root, T0, &args).json();
    assert_eq!(again["idempotent"], true);
    assert_eq!(records(root, 2), 1);
    // Text mode: the thread on stdout, the warning on stderr, exit 0.
    let mut text_args = vec![root_arg(root), format!("--now={T0}")];
    text_args.extend(ask_args(3, "text", "t?"));
    let out = run_within(Duration::from_secs(20), text_args);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("CLR-3-001"), "{out:#?}");
    assert!(
        out.stderr.contains("agent-status.json was not updated"),
        "{out:#?}"
    );
    std::fs::remove_file(&status_lock).unwrap();
}

#[test]
fn the_follow_up_monitors_errors_stay_in_its_report() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    assert_eq!(ask_within(root, T0, 2, "will go stale").code, 0);
    // Held while the follow-up monitor of an ask on issue 1 wants to mark CLR-2-001 stale.
    let lock = clarifications_dir(root).join("issue-2.json.lock");
    std::fs::write(&lock, live_lock("someone")).unwrap();
    let out = ask_within(root, T0 + 120 * MINUTE, 1, "later");
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["monitor"]["errors"][0]["file"], "issue-2.json", "{v}");
    assert_eq!(v["monitor"]["errors"][0]["code"], "LOCK_TIMEOUT", "{v}");
    assert_eq!(v["warnings"], json!([]), "{v}");
    std::fs::remove_file(&lock).unwrap();
}

#[test]
fn fifos_and_directories_where_files_belong_are_refused_at_once() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(ask_within(root, T0, 1, "fine").code, 0);
    mkfifo(&ledger_path(root, 3));
    std::fs::create_dir(ledger_path(root, 4)).unwrap();
    let named = |v: &Value, file: &str, what: &str| {
        let errors = v["errors"].as_array().unwrap_or_else(|| panic!("{v}"));
        assert!(
            errors.iter().any(|e| e["file"] == file
                && e["code"] == "IO_ERROR"
                && e["message"].as_str().unwrap().contains(what)),
            "{file} as {what}: {v}"
        );
    };
    // Listings report them (JSON and stderr) and go on.
    for args in [
        vec!["clarify", "list"],
        vec!["clarify", "stats"],
        vec!["ready"],
    ] {
        let out = json_within(root, T0, &args);
        assert_eq!(out.code, 0, "{args:?}: {out:#?}");
        let v = out.json();
        named(
            &v,
            "issue-3.json",
            "a FIFO (named pipe), not a regular file",
        );
        named(&v, "issue-4.json", "a directory, not a regular file");
        assert!(out.stderr.contains("issue-3.json"), "{args:?}: {out:#?}");
    }
    // verify reports them as problems.
    let out = json_within(root, T0, &["clarify", "verify"]);
    assert_eq!(out.code, 8, "{out:#?}");
    assert!(out.stdout.contains("FIFO"), "{out:#?}");
    // Every ask runs the follow-up monitor over them: it reports, it does not hang.
    let out = ask_within(root, T0, 1, "again");
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["monitor"]["errors"][0]["file"], "issue-3.json", "{v}");
    json_within(root, T0, &["clarify", "monitor", "--dry-run"]).json();
    // The issue itself: refused, naming the file.
    let v = assert_fails(&ask_within(root, T0, 3, "on the fifo"), 1, "IO_ERROR");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("issue-3.json"),
        "{v}"
    );
    assert_fails(
        &json_within(root, T0, &["clarify", "list", "--issue=3"]),
        1,
        "IO_ERROR",
    );
    assert_fails(
        &json_within(root, T0, &["clarify", "show", "CLR-3-001"]),
        1,
        "IO_ERROR",
    );
    // migrate reports it and leaves it alone.
    let out = json_within(root, T0, &["migrate"]);
    assert_eq!(out.code, 0, "{out:#?}");
    named(&out.json(), "issue-3.json", "FIFO");
}

#[test]
fn a_fifo_among_workflows_fails_only_the_requests_that_use_it() {
    let dir = workspace();
    let root = dir.path();
    mkfifo(&root.join(".agentx/workflows/evil.toml"));
    let out = ask_within(root, T0, 1, "feature workflow");
    assert_eq!(out.code, 0, "{out:#?}");
    let evil = ask_args(1, "evil", "e?");
    let args = [argv(&evil), vec!["--workflow=evil"]].concat();
    let v = assert_fails(&json_within(root, T0, &args), 1, "IO_ERROR");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("evil.toml"),
        "{v}"
    );
}

#[test]
fn a_fifo_as_settings_or_statuses_is_refused_naming_it() {
    for (file, name) in [
        (".agentx/config.toml", "config.toml"),
        (".agentx/state/agent-status.json", "agent-status.json"),
    ] {
        let dir = workspace();
        let root = dir.path();
        let path = root.join(file);
        let _ = std::fs::remove_file(&path);
        mkfifo(&path);
        let v = assert_fails(&ask_within(root, T0, 1, "q"), 1, "IO_ERROR");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(name) && message.contains("FIFO"),
            "{message}"
        );
        assert!(!ledger_path(root, 1).exists(), "{file}: nothing written");
    }
}

#[test]
fn corrupt_and_misfiled_ledgers_are_never_hidden() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(ask_within(root, T0, 2, "good").code, 0);
    // Truncated.
    assert_eq!(ask_within(root, T0, 1, "will be torn").code, 0);
    let text = std::fs::read_to_string(ledger_path(root, 1)).unwrap();
    std::fs::write(ledger_path(root, 1), &text[..text.len() / 2]).unwrap();
    // Misfiled: issue 7's ledger in issue-5.json.
    assert_eq!(ask_within(root, T0, 7, "misfiled").code, 0);
    std::fs::rename(ledger_path(root, 7), ledger_path(root, 5)).unwrap();

    for issue in ["1", "5"] {
        let file = format!("issue-{issue}.json");
        let v = assert_fails(
            &json_within(root, T0, &["clarify", "list", &format!("--issue={issue}")]),
            8,
            "LEDGER_CORRUPT",
        );
        assert!(
            v["error"]["message"].as_str().unwrap().contains(&file),
            "{v}"
        );
        assert_fails(
            &json_within(root, T0, &["clarify", "show", &format!("--issue={issue}")]),
            8,
            "LEDGER_CORRUPT",
        );
    }
    assert_fails(
        &json_within(root, T0, &["clarify", "show", "CLR-5-001"]),
        8,
        "LEDGER_CORRUPT",
    );
    assert_fails(
        &json_within(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-5-001",
                "--from=architect",
                "--body=x",
            ],
        ),
        8,
        "LEDGER_CORRUPT",
    );
    assert_fails(&ask_within(root, T0, 5, "more"), 8, "LEDGER_CORRUPT");

    for args in [
        vec!["clarify", "list", "--all"],
        vec!["clarify", "stats"],
        vec!["ready"],
    ] {
        let out = json_within(root, T0, &args);
        assert_eq!(out.code, 0, "{args:?}: {out:#?}");
        let v = out.json();
        let errors: Vec<(&str, &str)> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["file"].as_str().unwrap(), e["code"].as_str().unwrap()))
            .collect();
        assert_eq!(
            errors,
            [
                ("issue-1.json", "LEDGER_CORRUPT"),
                ("issue-5.json", "LEDGER_CORRUPT")
            ],
            "{args:?}: {v}"
        );
        assert!(
            out.stderr.contains("issue-1.json") && out.stderr.contains("issue-5.json"),
            "{args:?}: {out:#?}"
        );
    }
    let v = json_within(root, T0, &["clarify", "list", "--all"]).json();
    assert_eq!(v["clarifications"].as_array().unwrap().len(), 1, "{v}");
    let v = json_within(root, T0, &["clarify", "stats"]).json();
    assert_eq!(v["stats"]["total"], 1, "{v}");
    // Without --json too.
    let out = run_within(
        Duration::from_secs(20),
        [root_arg(root), "clarify".into(), "list".into()],
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stderr
            .contains("issue-1.json could not be read [LEDGER_CORRUPT]"),
        "{out:#?}"
    );
}

#[test]
fn a_root_that_does_not_exist_is_an_error_except_for_init() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let root = root_arg(&missing);
    for args in [
        vec!["clarify", "list"],
        vec!["clarify", "stats"],
        vec!["clarify", "verify"],
        vec!["clarify", "monitor"],
        vec!["clarify", "show", "CLR-1-001"],
        vec![
            "clarify",
            "ask",
            "--issue=1",
            "--from=engineer",
            "--to=architect",
            "--topic=t",
            "--question=q",
        ],
        vec!["ready"],
        vec!["state"],
        vec!["hook", "start", "engineer"],
        vec!["migrate"],
    ] {
        let mut all = vec![root.as_str(), "--json"];
        all.extend(&args);
        let out = run_within(Duration::from_secs(20), &all);
        let v = assert_fails(&out, 1, "IO_ERROR");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("does not exist"),
            "{args:?}: {v}"
        );
        assert!(!missing.exists(), "{args:?} created the root");
    }
    // Without --json: on stderr.
    let out = run_within(Duration::from_secs(20), [root.as_str(), "clarify", "list"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.is_empty() && out.stderr.contains("IO_ERROR"),
        "{out:#?}"
    );
    // A file is no root either.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert_fails(&json_in(&file, &["clarify", "list"]), 1, "IO_ERROR");
    // init creates it.
    let out = run_within(Duration::from_secs(20), [root.as_str(), "--json", "init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(missing.join(".agentx/workflows").is_dir());
    assert_eq!(json_in(&missing, &["clarify", "list"]).code, 0);
}

/// Issue 12, item 7: a settings or workflow file that is not UTF-8 is `CONFIG_INVALID` (exit 3)
/// naming the file and the byte offset, through the binary, not `IO_ERROR`.
#[test]
fn files_that_are_not_utf8_are_config_invalid_with_the_byte_offset() {
    let dir = workspace();
    let root = dir.path();
    let args = ask_args(1, "T", "Q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // Latin-1 "é" (0xE9) at byte 11 of the settings.
    let config = root.join(".agentx/config.toml");
    let good = std::fs::read(&config).unwrap();
    std::fs::write(&config, b"# caf\xe9 au lait\n").unwrap();
    let v = assert_fails(&json_at(root, T0, &refs), 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("config.toml"), "{message}");
    assert!(message.contains("byte offset 5"), "{message}");
    std::fs::write(&config, good).unwrap();
    // The same in a workflow file the request uses.
    let feature = root.join(".agentx/workflows/feature.toml");
    let mut bytes = std::fs::read(&feature).unwrap();
    bytes.splice(0..0, b"# \xff\n".iter().copied());
    std::fs::write(&feature, bytes).unwrap();
    let v = assert_fails(&json_at(root, T0, &refs), 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("feature.toml"), "{message}");
    assert!(message.contains("byte offset 2"), "{message}");
    assert!(!ledger_path(root, 1).exists(), "nothing written");
}
