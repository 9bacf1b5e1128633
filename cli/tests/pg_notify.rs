//! Notifications on a PostgreSQL workspace (docs/notifications.md): the outbox lives in the
//! database beside the ledgers it follows (`agentx.state_docs`, migration 8), so deliverers on
//! several machines share it. Real PostgreSQL, the real receiver verifying every delivery with
//! the official Standard Webhooks library.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod notify_receiver;

use std::process::Stdio;

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use notify_receiver::{agentx_at, at, escalate, Receiver, SECRET};
use serde_json::Value;

/// A workspace on a fresh database with one webhook sink to `url`.
fn pg_workspace(url_of_sink: &str) -> (tempfile::TempDir, String) {
    let url = fresh_database("notify");
    let dir = workspace();
    write_config(
        dir.path(),
        &format!(
            "[store]\nurl = \"{url}\"\n\n[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{url_of_sink}\"\nsecret = \"{SECRET}\"\n"
        ),
    );
    let init = json_in(dir.path(), &["store", "init"]);
    assert_eq!(init.code, 0, "{init:#?}");
    (dir, url)
}

#[test]
fn the_outbox_lives_in_the_database_and_two_deliverers_send_each_event_once() {
    let mut receiver = Receiver::start(&["--slow", "0.05"]);
    let (ws, url) = pg_workspace(&receiver.url("/h"));
    let root = ws.path();
    agentx_at(root, &at(0), &["notify", "send"]);
    let id = escalate(root, 42, 1);
    let v = agentx_at(root, &at(2), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
    // Kept in the database, not in the state directory.
    assert!(!root.join(".agentx/state/outbox.json").exists());
    let docs = psql(&url, "SELECT name FROM agentx.state_docs ORDER BY name");
    assert_eq!(docs.trim(), "outbox", "{docs}");

    // Two deliverers at once (two machines' cron): each event is sent once.
    for issue in 1..=8 {
        escalate(root, issue, 3);
    }
    let spawn = || {
        let mut cmd = agentx();
        cmd.arg(root_arg(root))
            .args(["--json", &format!("--now={}", at(4)), "notify", "send"])
            .stdout(Stdio::piped());
        cmd.spawn().expect("agentx runs")
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let delivered = |o: &std::process::Output| {
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["delivered"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(delivered(&a) + delivered(&b), 8, "{a:?} {b:?}");
    let mut ids: Vec<String> = (0..8)
        .map(|_| {
            receiver.next()["headers"]["webhook-id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "no event sent twice");
    let status = agentx_at(root, &at(4), &["notify", "status"]).json();
    assert_eq!(
        status["deliveries"].as_array().map(Vec::len),
        Some(0),
        "{status}"
    );
    assert_eq!(status["delivered"], 9, "{status}");
}

#[test]
fn configure_escalate_one_pass_delivers() {
    // Issue 49: the sink's first pass used to start its clock after the escalation.
    let mut receiver = Receiver::start(&[]);
    let (ws, _url) = pg_workspace(&receiver.url("/h"));
    let root = ws.path();
    let id = escalate(root, 42, 1);
    let status = agentx_at(root, &at(2), &["notify", "status"]).json();
    assert_eq!(
        status["deliveries"][0]["id"],
        format!("evt_{id}_1/team"),
        "{status}"
    );
    assert_eq!(status["deliveries"][0]["planned"], false, "{status}");
    let v = agentx_at(root, &at(2), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
}

#[test]
fn a_deliverer_whose_connection_is_killed_is_followed_by_the_next_one() {
    // The deliverer takes its lease (committed), then waits on a slow receiver; its database
    // connections are terminated meanwhile, so recording the try fails. Nothing is lost: the
    // event is in the ledger, the lease runs out, the next pass delivers it.
    let mut receiver = Receiver::start(&["--slow", "3"]);
    let (ws, url) = pg_workspace(&receiver.url("/h"));
    let root = ws.path();
    agentx_at(root, &at(0), &["notify", "send"]);
    let id = escalate(root, 42, 1);
    let mut doomed = agentx();
    doomed
        .arg(root_arg(root))
        .args(["--json", &format!("--now={}", at(2)), "notify", "send"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = doomed.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    psql(
        &url,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    let out = child.wait_with_output().unwrap();
    // Whether it reconnected to record the try or failed saying why, the next passes settle it.
    let next = agentx_at(root, &at(5), &["notify", "send"]).json();
    let status = agentx_at(root, &at(5), &["notify", "status"]).json();
    assert_eq!(
        status["deliveries"].as_array().map(Vec::len),
        Some(0),
        "delivered by one of the passes, never zero times: {next} {status} {out:?}"
    );
    let first = receiver.next();
    assert_eq!(first["headers"]["webhook-id"], format!("evt_{id}_1"));
    assert_eq!(first["verified"], true, "{first}");
}
