//! The change feed of every state store (docs/protocol.md §21), with another process writing:
//! the `agentx` binary asks and delegates while this process holds a cursor, and each write
//! is reported once, after the revision it follows. Under PostgreSQL the writer's `NOTIFY`
//! reaches a listening cursor at once, and a cursor with no signal does not ask the database at
//! all; the file store's wake fires on the kernel's file events. Either wakes a reader waiting
//! with no timer (an hour) by the time the writer's process exits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use agentx_clarify_command::{Changed, State};
use agentx_clarify_store_any::{open_at, Location};
use agentx_clarify_tests::pg::fresh_database;
use common::*;

fn ask(root: &Path, issue: u32, topic: &str) {
    let args = ask_args(issue, topic, &format!("{topic}?"));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = json_at(root, T0, &refs);
    assert_eq!(out.code, 0, "{out:#?}");
}

/// Looks until something is reported (a write shows within `limit`), then checks that
/// nothing more is.
fn next<S: State>(store: &S, cursor: &mut S::Cursor, limit: Duration) -> Changed {
    let started = Instant::now();
    loop {
        if let Some(c) = store.changes(cursor).unwrap() {
            assert_eq!(store.changes(cursor).unwrap(), None, "reported twice");
            return c;
        }
        assert!(
            started.elapsed() < limit,
            "no change reported within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Three writes by other processes, each reported once and after the last revision.
fn each_write_once<S: State>(store: &S, root: &Path) {
    let mut cursor = store.feed().unwrap();
    // What was there before the cursor is never reported.
    assert_eq!(store.changes(&mut cursor).unwrap(), None);
    let r0 = store.revision(&cursor);
    ask(root, 4, "Cache");
    let c = next(store, &mut cursor, Duration::from_secs(5));
    assert_eq!(c.issues, vec![4]);
    assert!(c.revision > r0, "{c:?} after {r0}");
    assert_eq!(store.revision(&cursor), c.revision);
    let out = json_at(root, T0, &DELEGATE_REQUEST);
    assert_eq!(out.code, 0, "{out:#?}");
    let d = next(store, &mut cursor, Duration::from_secs(5));
    assert_eq!(d.issues, vec![42]);
    assert!(d.revision > c.revision, "{d:?} after {c:?}");
    ask(root, 9, "Queue");
    ask(root, 4, "Retry");
    let mut seen = Vec::new();
    let mut last = d.revision;
    while seen.len() < 2 {
        let e = next(store, &mut cursor, Duration::from_secs(5));
        assert!(e.revision > last);
        last = e.revision;
        seen.extend(e.issues);
    }
    seen.sort_unstable();
    assert_eq!(seen, vec![4, 9]);
    assert_eq!(store.changes(&mut cursor).unwrap(), None);
}

#[test]
fn the_file_store_reports_other_processes_writes_once() {
    let dir = workspace();
    ask(dir.path(), 1, "Before");
    let store = open_at(dir.path(), Location::Files).unwrap();
    each_write_once(&store, dir.path());
}

#[test]
fn postgres_reports_other_processes_writes_once_and_signals_them_at_once() {
    let url = fresh_database("feed");
    let dir = workspace();
    std::fs::write(
        dir.path().join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let out = json_in(dir.path(), &["store", "init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    ask(dir.path(), 1, "Before");
    let store = open_at(dir.path(), Location::Postgres(url.clone())).unwrap();
    each_write_once(&store, dir.path());

    woken_by_another_process(&store, dir.path());
}

#[test]
fn the_file_store_wakes_its_reader_on_another_process_write() {
    let dir = workspace();
    ask(dir.path(), 1, "Before");
    let store = open_at(dir.path(), Location::Files).unwrap();
    woken_by_another_process(&store, dir.path());
}

/// Another process writes while this one waits on its cursor's wake with no timeout to speak
/// of (an hour): the wake fires (file events, `NOTIFY`), and the next look reports the write
/// once — seen by the time the writer's process has exited, or within 100 ms of it.
fn woken_by_another_process<S: State>(store: &S, root: &Path) {
    let mut cursor = store.feed().unwrap();
    let wake = store.wake(&mut cursor).expect("this store signals");
    assert_eq!(store.changes(&mut cursor).unwrap(), None);
    let before = store.revision(&cursor);
    let root = root.to_path_buf();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        ask(&root, 7, "Signal");
        Instant::now()
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = wake.clone();
    // A watchdog instead of the hour: a wake that never fires fails the test in 30 s.
    std::thread::spawn(move || {
        let _ = tx.send(waiter.wait_past(0, Duration::from_secs(3600)));
    });
    let fired = rx.recv_timeout(Duration::from_secs(30));
    assert!(fired.is_ok_and(|n| n > 0), "no signal");
    let c = loop {
        let seen = wake.count();
        if let Some(c) = store.changes(&mut cursor).unwrap() {
            if c.issues.contains(&7) {
                break c;
            }
        }
        wake.wait_past(seen, Duration::from_secs(3600));
    };
    let woken = Instant::now();
    let wrote = writer.join().unwrap();
    assert!(
        woken.saturating_duration_since(wrote) < Duration::from_millis(100),
        "the write was seen {:?} after the writer exited",
        woken.saturating_duration_since(wrote)
    );
    assert_eq!(c.issues, vec![7]);
    assert!(c.revision > before);
    while let Some(late) = store.changes(&mut cursor).unwrap() {
        // The writer's statuses may come in a later look; its ledger is never reported twice.
        assert!(!late.issues.contains(&7), "{late:?}");
    }
}
