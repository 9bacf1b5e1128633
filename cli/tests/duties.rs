//! Worker duties leased (docs/protocol.md §23.5): two servers with workers on one store run
//! each monitor pass on one of them — the one holding the monitor duty's lease — and a holder
//! stopped or killed mid-hold loses the duty to the other within 15 s (the lease's 10 s TTL
//! and the other's look every 2 s). The holder's
//! pass is stretched by `AGENTX_TEST_DUTY_HOLD_MS` (5 s), so the second server's worker
//! reliably tries while the first holds the lease.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::path::Path;
use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use serve_http::*;

/// Each server's pass holds the duty this long (the serve crate's test-only pause).
const HOLD: (&str, &str) = ("AGENTX_TEST_DUTY_HOLD_MS", "5000");
const RAN_STALE: &str = "worker: monitor ran (stale 1,";
const HELD: &str = "the monitor duty is held by";

/// Asks a question on `issue` two hours ago, so the monitor finds it past its SLA at once.
fn ask_stale(root: &Path, issue: &str) {
    let past = wall_ms() - 2 * 60 * 60 * 1000;
    let asked = json_at(
        root,
        past,
        &[
            "clarify",
            "ask",
            "--issue",
            issue,
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Old",
            "--question",
            "Still there?",
        ],
    );
    assert_eq!(asked.code, 0, "{asked:#?}");
}

/// How many `stale` entries the monitor wrote on `issue`'s record.
fn stale_entries(root: &Path, issue: &str) -> usize {
    let shown = json_in(root, &["clarify", "show", "--issue", issue]).json();
    shown["ledger"]["clarifications"][0]["thread"]
        .as_array()
        .map_or(0, |t| {
            t.iter()
                .filter(|e| e["from"] == "monitor" && e["type"] == "stale")
                .count()
        })
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

/// Two servers with workers on the workspace at `root`: the stale record is marked once, one
/// server's log says it ran that pass, and the other's says once that the duty was held.
fn two_servers_run_one_pass(root: &Path) {
    ask_stale(root, "3");
    let logs = tempfile::tempdir().unwrap();
    let (la, lb) = (logs.path().join("a.log"), logs.path().join("b.log"));
    let _a = Server::start_logged(root, &[], &[HOLD], &la);
    let _b = Server::start_logged(root, &[], &[HOLD], &lb);
    wait_for(Duration::from_secs(20), "the stale record marked", || {
        stale_entries(root, "3") > 0
    });
    wait_for(
        Duration::from_secs(10),
        "a log saying the duty was held",
        || log_of(&la).contains(HELD) || log_of(&lb).contains(HELD),
    );
    // Time for a second pass to show if the lease did not keep it out (the held worker
    // looks again 2 s later and holds 5 s if it takes the lease).
    std::thread::sleep(Duration::from_secs(9));
    assert_eq!(stale_entries(root, "3"), 1);
    let (a, b) = (log_of(&la), log_of(&lb));
    let ran: Vec<bool> = [&a, &b].iter().map(|l| l.contains(RAN_STALE)).collect();
    assert_eq!(ran.iter().filter(|r| **r).count(), 1, "A:\n{a}\nB:\n{b}");
    // Without the lease both servers' first passes would run (the second acting on nothing).
    let passes =
        a.matches("worker: monitor ran").count() + b.matches("worker: monitor ran").count();
    assert_eq!(passes, 1, "one pass in all:\nA:\n{a}\nB:\n{b}");
    let waiter = if ran[0] { &b } else { &a };
    assert_eq!(waiter.matches(HELD).count(), 1, "said once:\n{waiter}");
}

#[test]
fn two_servers_on_one_workspace_do_not_both_run_a_pass() {
    let dir = workspace();
    two_servers_run_one_pass(dir.path());
}

/// A workspace whose state is a fresh PostgreSQL database; returns its URL.
fn on_postgres(root: &Path, prefix: &str) -> String {
    let url = fresh_database(prefix);
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    url
}

#[test]
fn two_servers_on_one_database_run_each_monitor_pass_once() {
    let dir = workspace();
    on_postgres(dir.path(), "duties_once");
    two_servers_run_one_pass(dir.path());
}

fn signal(server: &Server, sig: &str) {
    let sent = std::process::Command::new("kill")
        .args([sig, &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn a_holder_stopped_mid_hold_loses_the_monitor_duty_within_its_ttl() {
    let dir = workspace();
    let root = dir.path();
    let url = on_postgres(root, "duties_stop");
    ask_stale(root, "3");
    let logs = tempfile::tempdir().unwrap();
    let (la, lb) = (logs.path().join("a.log"), logs.path().join("b.log"));
    let a = Server::start_logged(root, &[], &[HOLD], &la);
    let holder = format!(
        "SELECT count(*) FROM agentx.leases WHERE id = 'CLR-0-001' AND pid = {}",
        a.child.id()
    );
    wait_for(
        Duration::from_secs(20),
        "A holding the monitor duty",
        || psql(&url, &holder) == "1",
    );
    signal(&a, "-STOP");
    let stopped = Instant::now();
    // B holds no longer than its pass takes, so the figure is the failover's alone.
    let _b = Server::start_logged(root, &[], &[], &lb);
    ask_stale(root, "4");
    // The lease's TTL (10 s, from A's take) and B's next look (2 s); the wait allows more so
    // a slow start of B fails the bound below, not the wait.
    let limit = Duration::from_secs(30);
    wait_for(limit, "B marking the newly due record", || {
        stale_entries(root, "4") > 0
    });
    let moved = stopped.elapsed();
    eprintln!("the monitor duty moved to B {moved:?} after A stopped");
    // A live holder that stopped answering (what a network partition looks like) keeps the
    // lease for its TTL: within 15 s all the same (issue 51).
    assert!(
        moved < Duration::from_secs(15),
        "the duty moved {moved:?} after A stopped"
    );
    assert!(log_of(&lb).contains(HELD), "B found it held first");
    signal(&a, "-CONT");
    // A's pass goes on after the rest of its hold (≤ 5 s) and finds the work done.
    std::thread::sleep(Duration::from_secs(7));
    assert_eq!(stale_entries(root, "3"), 1);
    assert_eq!(stale_entries(root, "4"), 1);
}

/// A holder killed with `kill -9` mid-hold on `root`'s store: a second server runs the next
/// monitor pass within 15 s of the kill (issue 51). `holding` says when A holds the lease.
fn a_killed_holder_loses_the_duty_within_15_s(root: &Path, holding: impl Fn(u32) -> bool) {
    ask_stale(root, "3");
    let logs = tempfile::tempdir().unwrap();
    let (la, lb) = (logs.path().join("a.log"), logs.path().join("b.log"));
    let mut a = Server::start_logged(root, &[], &[HOLD], &la);
    let pid = a.child.id();
    wait_for(
        Duration::from_secs(20),
        "A holding the monitor duty",
        || holding(pid),
    );
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    let _b = Server::start_logged(root, &[], &[], &lb);
    ask_stale(root, "4");
    wait_for(
        Duration::from_secs(30),
        "B marking the newly due record",
        || stale_entries(root, "4") > 0,
    );
    let moved = killed.elapsed();
    eprintln!("the monitor duty moved to B {moved:?} after A was killed");
    assert!(
        moved < Duration::from_secs(15),
        "the duty moved {moved:?} after the kill"
    );
    // A never wrote its pass; B marked both records once.
    assert_eq!(stale_entries(root, "3"), 1);
    assert_eq!(stale_entries(root, "4"), 1);
}

#[test]
fn a_holder_killed_mid_hold_loses_the_monitor_duty_within_15_s_on_postgresql() {
    let dir = workspace();
    let root = dir.path();
    let url = on_postgres(root, "duties_kill");
    a_killed_holder_loses_the_duty_within_15_s(root, |pid| {
        psql(
            &url,
            &format!("SELECT count(*) FROM agentx.leases WHERE id = 'CLR-0-001' AND pid = {pid}"),
        ) == "1"
    });
}

#[test]
fn a_holder_killed_mid_hold_loses_the_monitor_duty_within_15_s_on_files() {
    let dir = workspace();
    let root = dir.path().to_path_buf();
    a_killed_holder_loses_the_duty_within_15_s(&root, |_| {
        // The lease file of the monitor duty exists while A holds it.
        root.join(".agentx/state/clarifications/CLR-0-001.lease")
            .exists()
    });
}
