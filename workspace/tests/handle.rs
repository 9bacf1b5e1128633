//! The workspace handle: settings read once, read again by a watching handle only after a
//! settings file moved, and the layout checked on every look — here by the settings' stamps
//! alone (`AGENTX_FEED_WATCH=off`, as where watching is unavailable); `handle_watch.rs`
//! tests the same handle with its file watch.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;

use agentx_clarify_command::{paths, Files};
use agentx_clarify_runner::ProcessRunner;
use agentx_clarify_workspace::Workspace;
use serde_json::json;

const NOW: i64 = 1_795_341_600_000;

/// Every test of this process compares stamps at every look, as a handle without a file
/// watch does (the variable is read when a watching handle opens).
fn by_stamps() {
    std::env::set_var("AGENTX_FEED_WATCH", "off");
}

fn init(root: &Path) {
    by_stamps();
    let ws = Workspace::open(root, ProcessRunner::new(root)).unwrap();
    assert_eq!(ws.call("init", &json!({}), NOW)["ok"], true);
}

fn write(root: &Path, file: &str, text: &str) {
    std::fs::write(root.join(file), text).unwrap();
}

/// Sets the settings files' times a minute back, as if saved then: a stamp with a time under
/// a second old is never trusted (the kernel's clock for file times is coarse).
fn settle(root: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let mut all = vec![root.join(paths::CONFIG)];
    for dir in [paths::WORKFLOWS_DIR, paths::AGENTS_DIR] {
        let dir = root.join(dir);
        all.extend(std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()));
        all.push(dir);
    }
    for p in all {
        let f = std::fs::File::open(&p).unwrap();
        f.set_times(std::fs::FileTimes::new().set_modified(old))
            .unwrap();
    }
}

#[test]
fn a_command_handle_keeps_the_settings_it_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    write(root, paths::CONFIG, "[clarify]\nmax_retries = 3\n");
    let ws = Workspace::open(root, ProcessRunner::new(root)).unwrap();
    let store = ws.store().unwrap();
    assert_eq!(store.load_config().unwrap().max_retries, 3);
    write(root, paths::CONFIG, "[clarify]\nmax_retries = 4\n");
    // A command reads its settings as they are when it starts (docs/protocol.md §21).
    assert_eq!(ws.store().unwrap().load_config().unwrap().max_retries, 3);
}

#[test]
fn a_watching_handle_reads_again_what_was_saved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    settle(root);
    let ws = Workspace::open_watching(root, ProcessRunner::new(root)).unwrap();
    let first = ws.store().unwrap();
    assert!(first.files.settings().sinks().unwrap().is_empty());
    // Nothing moved: the same reading (no file is read again).
    assert!(std::sync::Arc::ptr_eq(&first, &ws.store().unwrap()));

    write(
        root,
        paths::CONFIG,
        "[clarify]\nmax_retries = 2\n\n[[notify]]\nname = \"team\"\nkind = \"command\"\ncommand = [\"true\"]\n",
    );
    let second = ws.store().unwrap();
    assert_eq!(second.load_config().unwrap().max_retries, 2);
    // Just saved: read again on every look until it has been still for a second.
    assert!(!std::sync::Arc::ptr_eq(&second, &ws.store().unwrap()));
    settle(root);
    let second = ws.store().unwrap();
    assert!(std::sync::Arc::ptr_eq(&second, &ws.store().unwrap()));
    assert_eq!(second.files.settings().sinks().unwrap()[0].name, "team");
    // The reading a call already holds stays as it was.
    assert_eq!(first.load_config().unwrap().max_retries, 1);

    assert!(second.load_workflows().unwrap().get("quick").is_none());
    // A workflow saved atomically (a rename into the directory) shows too.
    let flows = root.join(paths::WORKFLOWS_DIR);
    std::fs::write(
        root.join("tmp.toml"),
        "[[steps]]\nid = \"a\"\nagent = \"engineer\"\n",
    )
    .unwrap();
    std::fs::rename(root.join("tmp.toml"), flows.join("quick.toml")).unwrap();
    let third = ws.store().unwrap();
    assert!(third.load_workflows().unwrap().get("quick").is_some());
    assert!(second.load_workflows().unwrap().get("quick").is_none());
}

#[test]
fn a_watching_handle_checks_the_layout_on_every_look() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    let ws = Workspace::open_watching(root, ProcessRunner::new(root)).unwrap();
    ws.store().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let state = root.join(paths::STATE_DIR.trim_end_matches('/'));
    std::fs::rename(&state, elsewhere.path().join("state")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("state"), &state).unwrap();
    let e = ws.store().unwrap_err();
    assert_eq!(e.code(), "IO_ERROR", "{e}");
    let shown = ws.call("list", &json!({}), NOW);
    assert_eq!(shown["error"]["code"], "IO_ERROR", "{shown}");
}

#[test]
fn a_part_that_does_not_parse_fails_only_what_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    write(
        root,
        paths::CONFIG,
        "[github]\nrepo = \"not-a-repo\"\n\n[agents.architect]\nnope = 1\n",
    );
    let ws = Workspace::open(root, ProcessRunner::new(root)).unwrap();
    let store = ws.store().unwrap();
    assert_eq!(
        store.files.settings().github().unwrap_err().code(),
        "CONFIG_INVALID"
    );
    assert_eq!(
        store.load_runner_config().unwrap_err().code(),
        "CONFIG_INVALID"
    );
    // The commands that need neither GitHub Mode nor a runner go on.
    assert!(store.load_config().is_ok());
    assert_eq!(ws.call("list", &json!({}), NOW)["ok"], true);
}

#[test]
fn people_toml_is_one_more_settings_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    init(root);
    settle(root);
    let ws = Workspace::open_watching(root, ProcessRunner::new(root)).unwrap();
    // No people.toml: no people, as before people existed.
    let first = ws.store().unwrap();
    assert!(!first.load_people().unwrap().is_defined());
    assert!(std::sync::Arc::ptr_eq(&first, &ws.store().unwrap()));

    write(
        root,
        paths::PEOPLE,
        "[people.alice]\nroles = [\"lead\"]\n[people.bob]\nroles = [\"lead\"]\n",
    );
    // A saved people.toml moves the stamp: the next look reads it.
    let second = ws.store().unwrap();
    assert_eq!(second.load_people().unwrap().names(), ["alice", "bob"]);
    assert!(!first.load_people().unwrap().is_defined());

    // The settings every command reads carry the people.
    assert!(second.load_config().unwrap().people.is_some());
    assert!(first.load_config().unwrap().people.is_none());

    // An agent's name cannot be a person's; a broken people.toml fails the settings, as a
    // broken config.toml does (who decides is part of every write that can escalate).
    write(root, paths::PEOPLE, "[people.architect]\n");
    let third = ws.store().unwrap();
    let e = third.load_people().unwrap_err();
    assert_eq!(e.code(), "CONFIG_INVALID", "{e}");
    assert!(
        e.to_string()
            .starts_with(".agentx/people.toml:1:9: 'architect' is an agent"),
        "{e}"
    );
    assert_eq!(third.load_config().unwrap_err().code(), "CONFIG_INVALID");
}
