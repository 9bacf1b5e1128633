//! The files on disk: I/O failures (exit 1), symbolic links never followed, no state
//! directories for a refused request, permissions kept across atomic rewrites, and the sweep of
//! temp files left by crashed writers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::*;

#[test]
fn exit_1_io_errors() {
    let dir = workspace();
    let root = dir.path();
    // A ledger path that is a directory: reading it fails (as root too).
    std::fs::create_dir(ledger_path(root, 5)).unwrap();
    let args = ask_args(5, "T", "Q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 1, "IO_ERROR");
    assert!(
        !clarifications_dir(root).join("issue-5.json.lock").exists(),
        "lock left behind"
    );
    assert_fails(
        &json_in(root, &["clarify", "show", "CLR-5-001"]),
        1,
        "IO_ERROR",
    );
    // Without --json the error goes to stderr.
    let out = run([
        root_arg(root),
        "clarify".into(),
        "show".into(),
        "CLR-5-001".into(),
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.is_empty() && out.stderr.contains("IO_ERROR"),
        "{out:#?}"
    );
    // Other ledgers are unaffected; the monitor reports the bad one and exits 0.
    ask(root, T0, 6, "T", "Q");
    let v = json_at(root, T0, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"][0]["file"], "issue-5.json");
    assert_eq!(v["report"]["errors"][0]["code"], "IO_ERROR");
    std::fs::remove_dir(ledger_path(root, 5)).unwrap();

    // An unreadable ledger (only meaningful when not running as root).
    let path = ledger_path(root, 6);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let out = json_in(root, &["clarify", "show", "CLR-6-001"]);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    if is_root_user() {
        eprintln!("running as root: chmod 000 does not stop reads; skipping that assertion");
        assert_eq!(out.code, 0, "{out:#?}");
    } else {
        assert_fails(&out, 1, "IO_ERROR");
    }
}

#[test]
fn symlinked_ledgers_and_locks_are_refused() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    assert_eq!(json_in(&root, &["init"]).code, 0);
    // The target is a perfectly valid ledger elsewhere; it must not be read through or written.
    let elsewhere = workspace();
    ask(elsewhere.path(), T0, 1, "t", "q");
    let target = ledger_path(elsewhere.path(), 1);
    let target_before = bytes(&target);
    std::os::unix::fs::symlink(&target, ledger_path(&root, 1)).unwrap();
    let args = ask_args(1, "t2", "q2");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    for argv in [
        refs,
        vec![
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=x",
        ],
        vec!["clarify", "escalate", "CLR-1-001"],
        vec!["clarify", "show", "CLR-1-001"],
    ] {
        let v = assert_fails(&json_at(&root, T0, &argv), 1, "IO_ERROR");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("symbolic link"),
            "{v}"
        );
        assert_eq!(
            bytes(&target),
            target_before,
            "{argv:?} touched the symlink's target"
        );
    }
    assert!(std::fs::symlink_metadata(ledger_path(&root, 1))
        .unwrap()
        .file_type()
        .is_symlink());
    // The monitor and verify report it; they never follow it.
    let v = json_at(&root, T0 + 600 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"][0]["file"], "issue-1.json");
    assert_eq!(v["report"]["errors"][0]["code"], "IO_ERROR");
    assert_eq!(json_in(&root, &["clarify", "verify"]).code, 8);
    assert_eq!(bytes(&target), target_before);

    // A symlinked lock file is refused as well (and the link's target is not created).
    let lock_target = outer.path().join("lock-target");
    std::os::unix::fs::symlink(
        &lock_target,
        clarifications_dir(&root).join("issue-2.json.lock"),
    )
    .unwrap();
    let args = ask_args(2, "t", "q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(&root, T0, &refs), 1, "IO_ERROR");
    assert!(!lock_target.exists());
    assert!(!ledger_path(&root, 2).exists());

    // A symlinked status file is refused before any ledger is written.
    let status_target = outer.path().join("status-target.json");
    std::fs::write(&status_target, "{}\n").unwrap();
    std::os::unix::fs::symlink(&status_target, status_path(&root)).unwrap();
    let args = ask_args(3, "t", "q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(&root, T0, &refs), 1, "IO_ERROR");
    assert!(!ledger_path(&root, 3).exists());
    assert_fails(
        &json_at(
            &root,
            T0,
            &["state", "--agent=engineer", "--status=working"],
        ),
        1,
        "IO_ERROR",
    );
    assert_eq!(bytes(&status_target), b"{}\n");
}

#[test]
fn a_refused_request_creates_no_state_directories() {
    let dir = workspace();
    let root = dir.path();
    std::fs::remove_dir_all(root.join(".agentx/state")).unwrap();
    let before = snapshot(root);
    let mut args = ask_args(1, "t", "q");
    args[4] = "--to=reviewer".into();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 4, "SCOPE_VIOLATION");
    let mut args = ask_args(1, "t", "q");
    args.push("--workflow=missing".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 3, "INVALID_WORKFLOW");
    assert_fails(
        &json_at(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-1-001",
                "--from=architect",
                "--body=x",
            ],
        ),
        5,
        "NOT_FOUND",
    );
    assert_eq!(snapshot(root), before, "a refused command created files");
    // An accepted one creates what it needs.
    ask(root, T0, 1, "t", "q");
    assert!(ledger_path(root, 1).is_file() && status_path(root).is_file());
}

#[test]
fn written_files_get_ordinary_permissions_and_keep_their_own() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = workspace();
    let root = dir.path();
    // What a new shared state file gets here: 0644 less the umask the binary inherits (never
    // more, issue 48).
    let probe = root.join("probe");
    std::fs::write(&probe, b"").unwrap();
    let ordinary = mode(&probe) & 0o644;
    ask(root, T0, 1, "t", "q");
    assert_eq!(mode(&ledger_path(root, 1)), ordinary, "new ledger");
    assert_eq!(mode(&status_path(root)), ordinary, "new status file");
    // A rewrite keeps the file's mode (the atomic replace must not reset it to 0600).
    for (path, m) in [(ledger_path(root, 1), 0o640), (status_path(root), 0o604)] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let out = json_at(
        root,
        T0,
        &[
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=a",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(mode(&ledger_path(root, 1)), 0o640);
    assert_eq!(mode(&status_path(root)), 0o604);
}

#[test]
fn monitor_sweeps_temp_files_left_by_crashed_writers() {
    let ws = workspace();
    let dir = clarifications_dir(ws.path());
    let old = dir.join(".agentx-tmp-crashed");
    let fresh = dir.join(".agentx-tmp-in-flight");
    std::fs::write(&old, b"half a ledger").unwrap();
    std::fs::write(&fresh, b"being written").unwrap();
    let aged = std::process::Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(&old)
        .status()
        .unwrap();
    assert!(aged.success());
    let out = json_in(ws.path(), &["clarify", "monitor", "--dry-run"]);
    assert_eq!(out.code, 0);
    assert!(old.exists(), "a dry run writes nothing");
    let out = json_in(ws.path(), &["clarify", "monitor"]);
    assert_eq!(out.code, 0);
    assert!(
        !old.exists(),
        "an hour-old temp file belongs to no live writer"
    );
    assert!(
        fresh.exists(),
        "a fresh one may belong to a writer holding its lock"
    );
}

/// Runs the binary under `umask 000` (a careless shell, a misconfigured service).
fn under_umask_000(root: &Path, args: &[&str]) -> Out {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$0\" \"$@\"")
        .arg(BIN)
        .arg(root_arg(root))
        .arg("--json")
        .args(args)
        .env_remove("AGENTX_STORE")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Out::from_output(&out)
}

#[test]
fn under_umask_000_no_state_file_or_directory_is_writable_by_others() {
    // Issue 48: under `umask 000` ledgers were created 0666 (and directories 0777): any local
    // user could rewrite the record of a decision. Each is created 0644 / 0755 (0600 for the
    // private ones) whatever the umask.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    for args in [
        vec!["init"],
        vec![
            "clarify",
            "ask",
            "--issue=1",
            "--from=engineer",
            "--to=architect",
            "--topic=t",
            "--question=q?",
        ],
        vec![
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=a",
        ],
        vec!["clarify", "list"],
        vec!["clarify", "monitor"],
        vec!["keys", "new", "engineer"],
        vec!["tokens", "new", "--human", "alice"],
        DELEGATE_REQUEST.to_vec(),
    ] {
        let out = under_umask_000(&root, &args);
        assert_eq!(out.code, 0, "{args:?}: {out:#?}");
    }
    let mut seen = 0;
    let mut stack = vec![root.join(".agentx")];
    while let Some(here) = stack.pop() {
        for entry in std::fs::read_dir(&here).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o777;
            assert_eq!(mode & 0o022, 0, "{} is {mode:o}", path.display());
            if meta.is_dir() {
                stack.push(path);
            } else {
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "only {seen} files written");
    let mode = |rel: &str| {
        std::fs::metadata(root.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(".agentx/state/clarifications/issue-1.json"), 0o644);
    assert_eq!(mode(".agentx/state/agent-status.json"), 0o644);
    assert_eq!(mode(".agentx/state/tokens.json"), 0o600);
    assert_eq!(mode(".agentx/keys/engineer.key"), 0o600);
    assert_eq!(mode(".agentx/state/clarifications"), 0o755);
}
