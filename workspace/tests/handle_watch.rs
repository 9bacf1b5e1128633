//! A watching handle with its file watch (inotify): the settings' stamps are compared only
//! after an event in a settings directory — no `lstat`s per take while nothing moves — and a
//! save is read again once its event arrived (the watch's latency: well under a millisecond
//! on Linux; waited for here), then trusted without a second's re-reading.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_clarify_command::{paths, Files};
use agentx_clarify_runner::ProcessRunner;
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde_json::json;

const NOW: i64 = 1_795_341_600_000;

/// The store once `ready` holds for it, taken again until it does (2 s at most).
fn eventually(ws: &Workspace, ready: impl Fn(&WorkspaceStore) -> bool) -> Arc<WorkspaceStore> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let store = ws.store().unwrap();
        if ready(&store) {
            return store;
        }
        assert!(
            Instant::now() < until,
            "the handle never read the saved settings"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_save_is_read_once_its_event_arrived_and_quiet_takes_keep_the_reading() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let init = Workspace::open(root, ProcessRunner::new(root)).unwrap();
    assert_eq!(init.call("init", &json!({}), NOW)["ok"], true);
    let ws = Workspace::open_watching(root, ProcessRunner::new(root)).unwrap();
    let first = ws.store().unwrap();
    // Just initialised (a racy stamp), yet nothing moved since the watch began: the same
    // reading on every take.
    assert!(Arc::ptr_eq(&first, &ws.store().unwrap()));
    assert!(Arc::ptr_eq(&first, &ws.store().unwrap()));

    std::fs::write(root.join(paths::CONFIG), "[clarify]\nmax_retries = 2\n").unwrap();
    let second = eventually(&ws, |s| s.load_config().unwrap().max_retries == 2);
    // Read once, then kept: a save seen by the watch needs no second of re-reading.
    assert!(Arc::ptr_eq(&second, &ws.store().unwrap()));
    assert_eq!(first.load_config().unwrap().max_retries, 1);

    // A workflow saved atomically (a rename into the directory), and people.toml.
    let flows = root.join(paths::WORKFLOWS_DIR);
    std::fs::write(
        root.join("tmp.toml"),
        "[[steps]]\nid = \"a\"\nagent = \"engineer\"\n",
    )
    .unwrap();
    std::fs::rename(root.join("tmp.toml"), flows.join("quick.toml")).unwrap();
    eventually(&ws, |s| s.load_workflows().unwrap().get("quick").is_some());
    std::fs::write(
        root.join(paths::PEOPLE),
        "[people.alice]\nroles = [\"lead\"]\n",
    )
    .unwrap();
    eventually(&ws, |s| s.load_people().unwrap().is_defined());
}

#[test]
fn a_settings_directory_made_later_is_watched_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let init = Workspace::open(root, ProcessRunner::new(root)).unwrap();
    assert_eq!(init.call("init", &json!({}), NOW)["ok"], true);
    let flows = root.join(paths::WORKFLOWS_DIR);
    std::fs::remove_dir_all(&flows).unwrap();
    let ws = Workspace::open_watching(root, ProcessRunner::new(root)).unwrap();
    ws.store().unwrap();
    std::fs::create_dir(&flows).unwrap();
    eventually(&ws, |s| s.load_workflows().unwrap().get("quick").is_none());
    // Give the take that saw the directory appear time to watch it, then save into it.
    std::thread::sleep(Duration::from_millis(20));
    ws.store().unwrap();
    std::fs::write(
        flows.join("quick.toml"),
        "[[steps]]\nid = \"a\"\nagent = \"engineer\"\n",
    )
    .unwrap();
    eventually(&ws, |s| s.load_workflows().unwrap().get("quick").is_some());
}
