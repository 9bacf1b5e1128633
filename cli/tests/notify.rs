//! `agentx notify test` against real receivers on loopback: a webhook verified by the official
//! Standard Webhooks library (PyPI `standardwebhooks`, tests/notify/receiver.py), Slack and
//! ntfy payloads, a command sink, and every failure said without a secret.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod notify_receiver;
mod serve_http;

use std::path::Path;
use std::process::Stdio;

use common::*;
use notify_receiver::{agentx_at, at, escalate, Receiver, SECRET};
use serde_json::Value;

fn notify_test(root: &Path, name: &str, env: &[(&str, &str)]) -> Out {
    let mut cmd = agentx();
    cmd.arg(root_arg(root)).args([
        "--json",
        "--now=2026-11-22T10:00:00.000Z",
        "notify",
        "test",
        name,
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Out::from_output(&cmd.output().expect("agentx runs"))
}

#[test]
fn a_webhook_is_signed_as_standard_webhooks_verifies_it() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret_env = \"AGENTX_TEAM_SECRET\"\n",
            receiver.url("/hooks/agentx?token=hunter2")
        ),
    );
    let out = notify_test(ws.path(), "team", &[("AGENTX_TEAM_SECRET", SECRET)]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["status"], 200);
    // The URL's path and query may be its secret: only scheme and host are ever shown.
    assert_eq!(
        v["destination"],
        format!("http://127.0.0.1:{}/…", receiver.port)
    );
    assert!(!out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"));
    assert!(!out.stdout.contains(SECRET));

    let got = receiver.next();
    assert_eq!(
        got["verified"], true,
        "the official library verified it: {got}"
    );
    assert_eq!(got["path"], "/hooks/agentx?token=hunter2");
    assert_eq!(got["headers"]["webhook-id"], v["event"]);
    assert_eq!(got["headers"]["content-type"], "application/json");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["type"], "clarification.test");
    assert_eq!(event["timestamp"], "2026-11-22T10:00:00.000Z");
    assert_eq!(event["data"]["reason"], "agentx notify test");
    for key in [
        "id",
        "issue",
        "from",
        "to",
        "topic",
        "status",
        "severity",
        "reason",
        "question",
        "answer",
        "answerKind",
        "options",
        "url",
    ] {
        assert!(event["data"].get(key).is_some(), "data.{key}: {event}");
    }
}

#[test]
fn a_wrong_secret_fails_verification_at_the_receiver() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"\n",
            receiver.url("/")
        ),
    );
    let out = notify_test(ws.path(), "team", &[]);
    assert_eq!(out.code, 0, "the receiver answers 200 either way: {out:#?}");
    let got = receiver.next();
    assert_eq!(got["verified"], false, "{got}");
    assert!(
        got["error"].as_str().unwrap_or("").contains("Verification"),
        "{got}"
    );
}

#[test]
fn slack_and_ntfy_get_their_own_shapes() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"chat\"\nkind = \"slack\"\nurl = \"{}\"\n\n[[notify]]\nname = \"phone\"\nkind = \"ntfy\"\nurl = \"{}\"\n",
            receiver.url("/services/T0/B0/XYZ"),
            receiver.url("/agentx-topic")
        ),
    );
    let out = notify_test(ws.path(), "chat", &[]);
    assert_eq!(out.code, 0, "{out:#?}");
    let slack = receiver.next();
    let body: Value = serde_json::from_str(slack["body"].as_str().unwrap()).unwrap();
    assert!(body["text"]
        .as_str()
        .unwrap()
        .contains("Test of the notification sink"));
    assert_eq!(body["blocks"][0]["type"], "section");
    assert!(slack["headers"].get("webhook-signature").is_none());

    let out = notify_test(ws.path(), "phone", &[]);
    assert_eq!(out.code, 0, "{out:#?}");
    let ntfy = receiver.next();
    assert_eq!(ntfy["path"], "/agentx-topic");
    assert_eq!(ntfy["headers"]["priority"], "default");
    assert_eq!(ntfy["headers"]["tags"], "agentx,test");
    assert!(ntfy["headers"]["title"].as_str().unwrap().contains("phone"));
}

#[test]
fn a_command_sink_gets_the_event_on_stdin() {
    let ws = workspace();
    let seen = ws.path().join("seen.json");
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"desktop\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"cat > {}\"]\n",
            seen.display()
        ),
    );
    let out = notify_test(ws.path(), "desktop", &[]);
    assert_eq!(out.code, 0, "{out:#?}");
    let event: Value = serde_json::from_slice(&std::fs::read(&seen).unwrap()).unwrap();
    assert_eq!(event["type"], "clarification.test");

    write_config(
        ws.path(),
        "[[notify]]\nname = \"desktop\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo no display >&2; exit 3\"]\n",
    );
    let out = notify_test(ws.path(), "desktop", &[]);
    let v = assert_fails(&out, 1, "IO_ERROR");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no display"),
        "{v}"
    );
}

#[test]
fn a_command_sink_takes_an_event_over_64_kib_without_hanging() {
    let ws = workspace();
    // The sink copies its stdin to its stderr: with neither pipe drained while the event is
    // written, both block at 64 KiB (the deliverer hung for good).
    write_config(
        ws.path(),
        "[clarify]\nmax_body_chars = 100000\n\n[[notify]]\nname = \"desktop\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"cat >&2\"]\n",
    );
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    let question = format!("{}?", "Which cache should the sessions use ".repeat(2_500));
    let ask = agentx_at(
        ws.path(),
        &at(1),
        &[
            "clarify",
            "ask",
            "--issue",
            "7",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Long",
            "--question",
            &question,
        ],
    );
    assert_eq!(ask.code, 0, "{ask:#?}");
    let id = ask.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let esc = agentx_at(
        ws.path(),
        &at(1),
        &["clarify", "escalate", &id, "-m", "a person decides"],
    );
    assert_eq!(esc.code, 0, "{esc:#?}");
    let sent = run_within(
        std::time::Duration::from_secs(20),
        [
            root_arg(ws.path()),
            "--json".to_owned(),
            format!("--now={}", at(2)),
            "notify".to_owned(),
            "send".to_owned(),
        ],
    );
    assert_eq!(sent.code, 0, "{sent:#?}");
    assert_eq!(sent.json()["delivered"], 1, "{sent:#?}");
}

#[test]
fn failures_say_why_without_secrets() {
    let ws = workspace();
    // A receiver answering 500.
    let mut receiver = Receiver::start(&["--fail", "1"]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret_env = \"AGENTX_TEAM_SECRET\"\n",
            receiver.url("/x/hunter2")
        ),
    );
    let out = notify_test(ws.path(), "team", &[("AGENTX_TEAM_SECRET", SECRET)]);
    let v = assert_fails(&out, 1, "IO_ERROR");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("500"),
        "{v}"
    );
    assert_eq!(receiver.next()["status"], 500);
    assert!(!out.stdout.contains("hunter2") && !out.stdout.contains(SECRET));

    // The secret's variable unset.
    let out = notify_test(ws.path(), "team", &[]);
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("AGENTX_TEAM_SECRET"),
        "{v}"
    );

    // Nobody listening (a port just closed).
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"http://user:hunter2@127.0.0.1:{closed}/x\"\n"
        ),
    );
    let out = notify_test(ws.path(), "team", &[]);
    let v = assert_fails(&out, 1, "IO_ERROR");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("could not connect"), "{v}");
    assert!(
        !out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"),
        "{out:#?}"
    );

    // An unknown sink, and a typo in a sink's keys.
    let v = assert_fails(&notify_test(ws.path(), "tema", &[]), 3, "INVALID_INPUT");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("configured: team"),
        "{v}"
    );
    write_config(
        ws.path(),
        "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"https://x.test/\"\nsecret_evn = \"S\"\n",
    );
    let v = assert_fails(&notify_test(ws.path(), "team", &[]), 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean 'secret_env'"),
        "{v}"
    );
}

// ---- The outbox: `notify send` follows the ledgers ----

const NOW: &str = "2026-11-22T10:00:00.000Z";

fn webhook_config(root: &Path, url: &str, extra: &str) {
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{url}\"\nsecret = \"{SECRET}\"\n{extra}"
        ),
    );
}

#[test]
fn an_escalation_is_delivered_once_verified_and_retried_with_the_same_id() {
    let ws = workspace();
    let mut receiver = Receiver::start(&["--fail", "1"]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    // The sink is seen before anything happens: from then on it is told.
    assert_eq!(
        agentx_at(ws.path(), NOW, &["notify", "send"]).json()["delivered"],
        0
    );
    escalate(ws.path(), 42, 1);

    let first = agentx_at(ws.path(), &at(2), &["notify", "send"]);
    let v = first.json();
    assert_eq!(
        (
            v["delivered"].as_u64(),
            v["failed"].as_array().map(Vec::len)
        ),
        (Some(0), Some(1)),
        "{v}"
    );
    let got = receiver.next();
    assert_eq!(got["status"], 500);
    assert_eq!(got["verified"], true);
    let id = got["headers"]["webhook-id"].as_str().unwrap().to_owned();

    let status = agentx_at(ws.path(), &at(2), &["notify", "status"]).json();
    let d = &status["deliveries"][0];
    assert_eq!(d["failing"], true, "{status}");
    assert!(d["lastError"].as_str().unwrap().contains("500"), "{status}");

    // The backoff's 10 s count from the try (which took a few ms of the pass), not from the
    // pass's start: before them nothing is tried; after them the same event is sent again.
    let next = tried_next(&status);
    assert!(
        (T0 + 2 * MINUTE + 10_000..T0 + 2 * MINUTE + 11_000).contains(&next),
        "{status}"
    );
    let early = agentx_at(ws.path(), &(next - 1).to_string(), &["notify", "send"]);
    assert_eq!(early.json()["failed"].as_array().map(Vec::len), Some(0));
    assert_eq!(early.json()["delivered"], 0, "{early:#?}");
    let retry = agentx_at(ws.path(), &next.to_string(), &["notify", "send"]);
    assert_eq!(retry.json()["delivered"], 1, "{retry:#?}");
    let again = receiver.next();
    assert_eq!(again["status"], 200);
    assert_eq!(again["verified"], true);
    assert_eq!(
        again["headers"]["webhook-id"],
        id.as_str(),
        "the same id on every retry"
    );
    let event: Value = serde_json::from_str(again["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["type"], "clarification.escalated");
    assert_eq!(event["data"]["id"], "CLR-42-001");
    assert_eq!(event["data"]["reason"], "a human decides");
    assert_eq!(event["data"]["question"], "Redis or LRU?");

    // Delivered: never again.
    let after = agentx_at(ws.path(), &at(30), &["notify", "send"]).json();
    assert_eq!(
        (after["delivered"].as_u64(), after["pending"].as_u64()),
        (Some(0), Some(0))
    );
}

/// Issue 50's receivers — one that refuses connections, one that answers 500, one that says
/// 410 Gone, one that hangs — each make a failed try that says why, and the retry after the
/// backoff delivers the event once (a 410 is a failure like the others: the next try may
/// reach a receiver set up again; after 24 h the delivery is dead).
#[test]
fn a_receiver_that_refuses_fails_is_gone_or_hangs_gets_the_event_once_later() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for (case, args, says) in [
        ("refused", &[][..], "could not connect"),
        ("500", &["--fail", "1"][..], "answered 500"),
        (
            "410",
            &["--fail", "1", "--status", "410"][..],
            "answered 410",
        ),
        ("hangs", &["--stall", "1"][..], "timed out"),
    ] {
        let ws = workspace();
        let mut receiver = Receiver::start(args);
        let url = if case == "refused" {
            format!("http://127.0.0.1:{closed}/h")
        } else {
            receiver.url("/h")
        };
        webhook_config(ws.path(), &url, "");
        agentx_at(ws.path(), NOW, &["notify", "send"]);
        escalate(ws.path(), 42, 1);
        let first = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
        assert_eq!(
            (
                first["delivered"].as_u64(),
                first["failed"].as_array().map(Vec::len)
            ),
            (Some(0), Some(1)),
            "{case}: {first}"
        );
        let status = agentx_at(ws.path(), &at(2), &["notify", "status"]).json();
        let error = status["deliveries"][0]["lastError"].as_str().unwrap_or("");
        assert!(error.contains(says), "{case}: {status}");
        let tried_id = (case != "refused").then(|| {
            let got = receiver.next();
            got["headers"]["webhook-id"].as_str().unwrap().to_owned()
        });
        if case == "refused" {
            // The receiver is up again (where the sink now points).
            webhook_config(ws.path(), &receiver.url("/h"), "");
        }
        let next = tried_next(&status);
        let retry = agentx_at(ws.path(), &next.to_string(), &["notify", "send"]).json();
        assert_eq!(retry["delivered"], 1, "{case}: {retry}");
        let got = receiver.next();
        assert_eq!(
            (got["status"].as_u64(), got["verified"].as_bool()),
            (Some(200), Some(true))
        );
        if let Some(id) = tried_id {
            assert_eq!(
                got["headers"]["webhook-id"],
                id.as_str(),
                "{case}: the same id"
            );
        }
        let after = agentx_at(ws.path(), &at(30), &["notify", "send"]).json();
        assert_eq!(
            (after["delivered"].as_u64(), after["pending"].as_u64()),
            (Some(0), Some(0)),
            "{case}: once"
        );
    }
}

#[test]
fn a_ladder_step_waits_and_a_resolution_cancels_it() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    webhook_config(ws.path(), &receiver.url("/lead"), "after_minutes = 60\n");
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    escalate(ws.path(), 7, 1);
    escalate(ws.path(), 8, 1);
    // Issue 8 is decided before the hour is up.
    let resolve = agentx_at(
        ws.path(),
        &at(20),
        &["clarify", "resolve", "CLR-8-001", "-m", "Redis."],
    );
    assert_eq!(resolve.code, 0, "{resolve:#?}");

    let before = agentx_at(ws.path(), &at(60), &["notify", "send"]).json();
    assert_eq!(
        (before["delivered"].as_u64(), before["pending"].as_u64()),
        (Some(0), Some(1)),
        "{before}"
    );
    let after = agentx_at(ws.path(), &at(61), &["notify", "send"]).json();
    assert_eq!(after["delivered"], 1, "{after}");
    let got = receiver.next();
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        event["data"]["id"], "CLR-7-001",
        "issue 8 was resolved: nothing for it"
    );
    let later = agentx_at(ws.path(), &at(300), &["notify", "send"]).json();
    assert_eq!(later["delivered"], 0, "{later}");
}

#[test]
fn two_deliverers_at_once_send_each_event_once() {
    let ws = workspace();
    let mut receiver = Receiver::start(&["--slow", "0.05"]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    for issue in 1..=12 {
        escalate(ws.path(), issue, 1);
    }
    let spawn = || {
        let mut cmd = agentx();
        cmd.arg(root_arg(ws.path()))
            .args(["--json", &format!("--now={}", at(2)), "notify", "send"])
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
    assert_eq!(delivered(&a) + delivered(&b), 12, "{a:?} {b:?}");
    let mut ids: Vec<String> = (0..12)
        .map(|_| {
            receiver.next()["headers"]["webhook-id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 12, "no event sent twice");
}

#[test]
fn the_backoff_counts_from_the_try_not_from_the_start_of_the_pass() {
    let ws = workspace();
    // The first try takes 2 s and fails.
    let _receiver = Receiver::start(&["--fail", "1", "--slow", "2"]);
    webhook_config(ws.path(), &_receiver.url("/h"), "");
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    escalate(ws.path(), 42, 1);
    let sent = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(sent["failed"].as_array().map(Vec::len), Some(1), "{sent}");
    let status = agentx_at(ws.path(), &at(2), &["notify", "status"]).json();
    let next = tried_next(&status);
    // The try ended 2 s into the pass: the first backoff (10 s) counts from there. Counted
    // from the pass's start, a receiver that takes a timeout to fail would be retried that
    // much sooner after its failure, and one that takes 10 s at once.
    assert!(
        (T0 + 2 * MINUTE + 12_000..T0 + 2 * MINUTE + 14_000).contains(&next),
        "{status}"
    );
}

#[test]
fn a_deliverer_killed_mid_delivery_is_followed_by_the_next_one() {
    let ws = workspace();
    let mut receiver = Receiver::start(&["--slow", "3"]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    escalate(ws.path(), 42, 1);
    let mut doomed = agentx();
    doomed
        .arg(root_arg(ws.path()))
        .args(["--json", &format!("--now={}", at(2)), "notify", "send"]);
    let mut child = doomed.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    child.kill().unwrap(); // SIGKILL while the receiver holds the request
    child.wait().unwrap();

    // Within the lease (10 s, renewed by a live sender every 3 s) nobody else sends it;
    // after it the next pass does.
    let held = agentx_at(
        ws.path(),
        &(T0 + 2 * MINUTE + 5_000).to_string(),
        &["notify", "send"],
    )
    .json();
    assert_eq!(
        (held["delivered"].as_u64(), held["pending"].as_u64()),
        (Some(0), Some(1)),
        "{held}"
    );
    assert_eq!(
        held["nextDue"], "2026-11-22T10:02:10.000Z",
        "the lease runs out 10 s after it was taken: {held}"
    );
    let next = agentx_at(
        ws.path(),
        &(T0 + 2 * MINUTE + 10_000).to_string(),
        &["notify", "send"],
    )
    .json();
    assert_eq!(
        next["delivered"], 1,
        "delivered by the next run, never zero times: {next}"
    );
    // The killed try may have reached the receiver too: at least once, same id.
    let first = receiver.next();
    assert_eq!(first["headers"]["webhook-id"], "evt_CLR-42-001_1");
}

/// Sets the settings file's modification time to `minutes` after the tests' epoch.
fn config_modified_at(root: &Path, minutes: i64) {
    let at = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(T0 + minutes * MINUTE).unwrap());
    std::fs::File::options()
        .write(true)
        .open(root.join(".agentx/config.toml"))
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[test]
fn configure_escalate_one_pass_delivers() {
    // Issue 49: the first pass used to start the sink's clock, after the escalation that made
    // someone set up the sink, so the one event that mattered was never sent.
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    config_modified_at(ws.path(), 0);
    let id = escalate(ws.path(), 42, 1);
    // Before any pass: `notify status` says what the new sink is owed.
    let status = agentx_at(ws.path(), &at(2), &["notify", "status"]).json();
    let owed = &status["deliveries"][0];
    assert_eq!(owed["id"], format!("evt_{id}_1/team"), "{status}");
    assert_eq!(owed["planned"], false, "{status}");
    assert_eq!(owed["state"], "pending", "{status}");
    let text = Out::from_output(
        &agentx()
            .arg(root_arg(ws.path()))
            .arg(format!("--now={}", at(2)))
            .args(["notify", "status"])
            .output()
            .unwrap(),
    );
    assert!(
        text.stdout
            .contains(&format!("evt_{id}_1/team  escalated on #42  owed")),
        "{text:#?}"
    );
    assert!(
        !ws.path().join(".agentx/state/outbox.json").exists(),
        "status writes nothing"
    );
    // One pass: delivered, verified.
    let v = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
    let status = agentx_at(ws.path(), &at(3), &["notify", "status"]).json();
    assert_eq!(
        status["deliveries"].as_array().map(Vec::len),
        Some(0),
        "{status}"
    );
}

#[test]
fn a_sink_configured_days_before_its_first_pass_is_owed_everything_since() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    let old = escalate(ws.path(), 41, -4 * 24 * 60);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    config_modified_at(ws.path(), -3 * 24 * 60);
    let id = escalate(ws.path(), 42, -2 * 24 * 60);
    let v = agentx_at(ws.path(), &at(0), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    assert_eq!(
        receiver.next()["headers"]["webhook-id"],
        format!("evt_{id}_1")
    );
    let status = agentx_at(ws.path(), &at(0), &["notify", "status"]).json();
    let listed = status["deliveries"].to_string();
    assert!(!listed.contains(&old), "before it was configured: {status}");
}

#[test]
fn a_sink_added_later_is_not_told_the_old_past_and_retry_requeues_the_dead() {
    let ws = workspace();
    // Two days before the sink's first pass, and before it was configured: not owed.
    escalate(ws.path(), 42, 1 - 2 * 24 * 60);
    let mut receiver = Receiver::start(&[]);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    webhook_config(ws.path(), &format!("http://127.0.0.1:{closed}/h"), "");
    config_modified_at(ws.path(), 0);
    let v = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(
        (v["delivered"].as_u64(), v["pending"].as_u64()),
        (Some(0), Some(0)),
        "history is not replayed: {v}"
    );

    escalate(ws.path(), 43, 3);
    // Down for a day: tried by the backoff, then dead.
    let mut minutes = 4;
    while minutes <= 3 + 24 * 60 {
        agentx_at(ws.path(), &at(minutes), &["notify", "send"]);
        minutes += 60;
    }
    agentx_at(ws.path(), &at(3 + 24 * 60), &["notify", "send"]);
    let status = agentx_at(ws.path(), &at(3 + 24 * 60), &["notify", "status"]).json();
    assert_eq!(status["deliveries"][0]["state"], "dead", "{status}");

    // The receiver is back; `notify retry --dead` puts it in line again.
    webhook_config(ws.path(), &receiver.url("/h"), "");
    let r = agentx_at(ws.path(), &at(2000), &["notify", "retry", "--dead"]).json();
    assert_eq!(r["retried"].as_array().map(Vec::len), Some(1), "{r}");
    let v = agentx_at(ws.path(), &at(2000), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    assert_eq!(receiver.next()["headers"]["webhook-id"], "evt_CLR-43-001_1");
}

#[test]
fn the_servers_worker_delivers_without_cron() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    let _server = serve_http::Server::start(ws.path(), &[]);
    // The worker's first pass sees the sink; give it a moment, then escalate by the CLI in
    // real time (the worker runs on the real clock).
    std::thread::sleep(std::time::Duration::from_millis(500));
    let id = serve_http::escalated(ws.path(), 9, "Cache");
    // The change feed wakes the deliverer: the event arrives, verified, with no notify send.
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
}

#[test]
fn a_sink_added_while_serving_is_told_of_an_escalation_right_after_the_edit() {
    // Issue 49: with `agentx serve` running, the escalations between the edit of config.toml
    // and the first pass that saw the new sink were never delivered.
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    let _server = serve_http::Server::start(ws.path(), &[]);
    // The worker's first pass has run and found no sink.
    std::thread::sleep(std::time::Duration::from_millis(500));
    webhook_config(ws.path(), &receiver.url("/h"), "");
    let id = serve_http::escalated(ws.path(), 9, "Cache");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
}

#[test]
fn a_question_asked_back_and_its_original_make_one_notification() {
    // Issue 49: the engineer never answered the architect's question back; both ran out of
    // time and the lead got two pushes saying only "SLA expired".
    let ws = workspace();
    write_config(
        ws.path(),
        "[clarify]\nmax_retries = 0\n\n[[notify]]\nname = \"team\"\nkind = \"command\"\ncommand = [\"true\"]\n",
    );
    let ask = |minutes: i64, args: &[&str]| {
        let mut all = vec!["clarify", "ask", "--issue", "50", "--topic", "Sessions"];
        all.extend_from_slice(args);
        let out = agentx_at(ws.path(), &at(minutes), &all);
        assert_eq!(out.code, 0, "{out:#?}");
    };
    ask(
        0,
        &[
            "--from",
            "engineer",
            "--to",
            "architect",
            "--question",
            "Survive a deploy?",
        ],
    );
    ask(
        10,
        &[
            "--from",
            "architect",
            "--to",
            "engineer",
            "--asked-back-from",
            "CLR-50-001",
            "--question",
            "How many sessions at peak?",
        ],
    );
    let first = agentx_at(ws.path(), &at(61), &["clarify", "monitor"]).json();
    assert_eq!(
        first["report"]["escalated"][0]["reason"],
        "waits on CLR-50-002, asked back and unanswered by engineer",
        "{first}"
    );
    agentx_at(ws.path(), &at(71), &["clarify", "monitor"]);
    let status = agentx_at(ws.path(), &at(72), &["notify", "status"]).json();
    let owed: Vec<(&str, &str)> = status["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["record"].as_str().unwrap(), d["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        owed,
        [("CLR-50-001", "clarification.escalated")],
        "one notification for the pair: {status}"
    );
    let shown = agentx_at(ws.path(), &at(72), &["clarify", "show", "CLR-50-002"]).json();
    assert_eq!(shown["clarification"]["status"], "escalated", "{shown}");
    let sent = agentx_at(ws.path(), &at(72), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
}

#[test]
fn the_outbox_is_owner_only() {
    // docs/security.md: every state document is 0600 — the outbox holds what the sinks are
    // told (questions, reasons), as tokens.json holds the tokens' hashes.
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    webhook_config(ws.path(), "http://127.0.0.1:9/h", "");
    let path = ws.path().join(".agentx/state/outbox.json");
    let mode = || std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(agentx_at(ws.path(), NOW, &["notify", "send"]).code, 0);
    assert_eq!(mode(), 0o600);
    // One an older agentx left readable by others is owner-only after its next write.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::read(&path).unwrap();
    escalate(ws.path(), 42, 1);
    agentx_at(ws.path(), &at(2), &["notify", "send"]);
    assert_ne!(
        std::fs::read(&path).unwrap(),
        before,
        "the outbox was written"
    );
    assert_eq!(mode(), 0o600);
}

#[test]
fn the_outbox_is_never_written_through_a_linked_state_directory() {
    // docs/protocol.md §31: a cloned repository may plant links; the outbox's writer refuses a
    // linked `.agentx/state` as every other writer does, and nothing outside changes.
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim"), b"mine").unwrap();
    webhook_config(ws.path(), "http://127.0.0.1:9/h", "");
    let state = ws.path().join(".agentx/state");
    std::fs::remove_dir_all(&state).unwrap();
    std::os::unix::fs::symlink(outside.path(), &state).unwrap();
    let out = agentx_at(ws.path(), NOW, &["notify", "send"]);
    assert_fails(&out, 1, "IO_ERROR");
    assert!(
        out.stdout.contains("state"),
        "names the directory: {out:#?}"
    );
    let mut listing: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    listing.sort();
    assert_eq!(listing, ["victim"]);
    assert_eq!(
        std::fs::read(outside.path().join("victim")).unwrap(),
        b"mine"
    );
}

#[test]
fn the_inbox_shows_failing_and_dead_deliveries() {
    // The receiver is down: the escalation of issue 43 dies after a day of tries, issue 44's
    // has failed once and waits for its next try. The inbox tells whoever opens it.
    let ws = workspace();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    webhook_config(ws.path(), &format!("http://127.0.0.1:{closed}/h"), "");
    agentx_at(ws.path(), &at(0), &["notify", "send"]);
    escalate(ws.path(), 43, 1);
    let mut minutes = 2;
    while minutes <= 1 + 24 * 60 + 60 {
        agentx_at(ws.path(), &at(minutes), &["notify", "send"]);
        minutes += 60;
    }
    escalate(ws.path(), 44, minutes);
    agentx_at(ws.path(), &at(minutes), &["notify", "send"]);
    let status = agentx_at(ws.path(), &at(minutes), &["notify", "status"]).json();
    let states: Vec<&str> = status["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["state"].as_str())
        .collect();
    assert!(states.contains(&"dead"), "{status}");

    let human = serve_http::token(ws.path(), "--human", "lead");
    let server = serve_http::Server::start(ws.path(), &["--no-worker"]);
    let auth = format!("Bearer {human}");
    let page = server.get("/", &[("Authorization", &auth)]);
    assert_eq!(page.status, 200, "{page:?}");
    let body = &page.body;
    assert!(body.contains("Notifications not delivered"), "{body}");
    assert!(body.contains("1 failing, 1 dead"), "{body}");
    for text in ["CLR-43-001", "CLR-44-001", ">team<", ">escalated<"] {
        assert!(body.contains(text), "{text} not on the page: {body}");
    }
    // Dead first; the error says why without the URL's path.
    let dead = body.find("badge dead").unwrap();
    let failing = body.find("badge failing").unwrap();
    assert!(dead < failing, "{body}");
    assert!(!body.contains(&format!("{closed}/h")), "{body}");
}

#[test]
fn the_next_wakeup_includes_the_outbox() {
    // A failed delivery is retried 10 s later: `clarify wakeup` (what a scheduler sleeps
    // until) says so, before the monitor's own next wake-up (the record's SLA).
    let ws = workspace();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    webhook_config(ws.path(), &format!("http://127.0.0.1:{closed}/h"), "");
    agentx_at(ws.path(), &at(0), &["notify", "send"]);
    escalate(ws.path(), 42, 1);
    // Another question, still pending: the monitor wakes at its SLA.
    let ask = agentx_at(
        ws.path(),
        &at(1),
        &[
            "clarify",
            "ask",
            "--issue",
            "43",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Retention",
            "--question",
            "How long?",
        ],
    );
    assert_eq!(ask.code, 0, "{ask:#?}");
    let before = agentx_at(ws.path(), &at(2), &["clarify", "wakeup"]).json();
    assert_eq!(before["notify"], Value::Null, "nothing tried yet: {before}");
    let sent = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(sent["failed"].as_array().map(Vec::len), Some(1), "{sent}");
    let v = agentx_at(ws.path(), &at(2), &["clarify", "wakeup"]).json();
    let (wakeup, monitor, notify) = (
        v["wakeup"].as_i64().unwrap(),
        v["monitor"].as_i64().unwrap(),
        v["notify"].as_i64().unwrap(),
    );
    // 10 s after the try, which ended a few ms into the pass.
    assert!(
        (T0 + 2 * MINUTE + 10_000..T0 + 2 * MINUTE + 11_000).contains(&notify),
        "{v}"
    );
    assert!(monitor > notify, "{v}");
    assert_eq!(wakeup, notify, "{v}");
}

#[test]
fn with_a_public_url_the_event_links_the_threads_page() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    agentx_at(ws.path(), &at(0), &["notify", "send"]);
    escalate(ws.path(), 42, 1);
    let bad = agentx_at(
        ws.path(),
        &at(2),
        &["notify", "send", "--public-url", "hub.example.com"],
    );
    assert_fails(&bad, 3, "INVALID_INPUT");
    let v = agentx_at(
        ws.path(),
        &at(2),
        &["notify", "send", "--public-url", "https://hub.example.com/"],
    )
    .json();
    assert_eq!(v["delivered"], 1, "{v}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        event["data"]["url"], "https://hub.example.com/clarifications/CLR-42-001",
        "{event}"
    );
}

// ---- Nothing stale is pushed; a decision follows its escalation (issue 52) ----

fn ask_choice(root: &Path, issue: u32, topic: &str, minutes: i64) -> String {
    let ask = agentx_at(
        root,
        &at(minutes),
        &[
            "clarify",
            "ask",
            "--issue",
            &issue.to_string(),
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            topic,
            "--question",
            "Which cache?",
            "--kind",
            "choice",
            "--option",
            "redis=Redis",
            "--option",
            "lru=In-process LRU",
            "--no-other",
        ],
    );
    assert_eq!(ask.code, 0, "{ask:#?}");
    let id = ask.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let esc = agentx_at(
        root,
        &at(minutes),
        &["clarify", "escalate", &id, "-m", "a person decides"],
    );
    assert_eq!(esc.code, 0, "{esc:#?}");
    id
}

fn decide_lru(root: &Path, id: &str, minutes: i64) {
    let out = agentx_at(
        root,
        &at(minutes),
        &[
            "clarify",
            "resolve",
            id,
            "--value",
            "lru",
            "-m",
            "see ADR-7",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn an_escalation_decided_before_its_first_try_is_not_pushed() {
    let ws = workspace();
    let mut receiver = Receiver::start(&[]);
    webhook_config(ws.path(), &receiver.url("/h"), "");
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    let decided = ask_choice(ws.path(), 42, "Cache", 1);
    decide_lru(ws.path(), &decided, 1);
    let v = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(
        (v["delivered"].as_u64(), v["pending"].as_u64()),
        (Some(0), Some(0)),
        "dropped at send time, not left pending: {v}"
    );
    // The next escalation is the first thing the receiver ever gets (verified by the
    // official library): nothing about the decided record was sent before it, and no
    // follow-up either (that sink never heard of it).
    let open = ask_choice(ws.path(), 43, "Queue", 3);
    let v = agentx_at(ws.path(), &at(4), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{open}_1"));
    receiver.nothing_within(std::time::Duration::from_millis(500));
}

#[test]
fn a_decision_follows_its_escalation_to_the_sinks_that_got_it_once() {
    let ws = workspace();
    let mut told = Receiver::start(&[]);
    let mut late = Receiver::start(&[]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n\n\
             [[notify]]\nname = \"lead\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\nafter_minutes = 60\n",
            told.url("/team"),
            late.url("/lead")
        ),
    );
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    let id = ask_choice(ws.path(), 42, "Cache", 1);
    let v = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let escalation = told.next();
    assert_eq!(escalation["verified"], true);
    // Decided within the lead's hour: the lead is never called, and never told the outcome;
    // the team, who got the push, gets one short follow-up.
    decide_lru(ws.path(), &id, 10);
    let v = agentx_at(ws.path(), &at(11), &["notify", "send"]).json();
    assert_eq!(v["delivered"], 1, "{v}");
    let follow_up = told.next();
    assert_eq!(follow_up["verified"], true, "{follow_up}");
    let event: Value = serde_json::from_str(follow_up["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["type"], "clarification.resolved");
    assert_eq!(event["data"]["id"], id.as_str());
    assert_eq!(event["data"]["by"], "human");
    assert_eq!(event["data"]["value"], "lru");
    assert_eq!(event["data"]["label"], "In-process LRU");
    assert_eq!(event["data"]["answer"], "see ADR-7");
    let v = agentx_at(ws.path(), &at(120), &["notify", "send"]).json();
    assert_eq!(
        (v["delivered"].as_u64(), v["pending"].as_u64()),
        (Some(0), Some(0)),
        "once: {v}"
    );
    late.nothing_within(std::time::Duration::from_millis(300));
    told.nothing_within(std::time::Duration::from_millis(300));
}

#[test]
fn an_ntfy_title_arrives_in_utf_8_with_the_options_and_the_decision_replaces_it() {
    let ws = workspace();
    let mut phone = Receiver::start(&[]);
    write_config(
        ws.path(),
        &format!(
            "[[notify]]\nname = \"phone\"\nkind = \"ntfy\"\nurl = \"{}\"\n",
            phone.url("/agentx-topic")
        ),
    );
    agentx_at(ws.path(), NOW, &["notify", "send"]);
    let topic = "Caché für Sitzungen ☕ — 日本語";
    let id = ask_choice(ws.path(), 42, topic, 1);
    assert_eq!(
        agentx_at(ws.path(), &at(2), &["notify", "send"]).json()["delivered"],
        1
    );
    let push = phone.next();
    assert_eq!(push["path"], "/agentx-topic");
    // Decoded as ntfy decodes it (RFC 2047, by Python's standard library): every character kept.
    assert_eq!(
        push["title"],
        format!("{id} escalated: {topic} (engineer → architect)"),
        "{push}"
    );
    assert!(push["headers"]["title"].as_str().unwrap().is_ascii());
    assert_eq!(push["headers"]["x-sequence-id"], id.as_str());
    assert_eq!(push["headers"]["priority"], "high");
    let body = push["body"].as_str().unwrap();
    assert!(
        body.contains("Options:\n• Redis\n• In-process LRU"),
        "{body}"
    );
    decide_lru(ws.path(), &id, 5);
    assert_eq!(
        agentx_at(ws.path(), &at(6), &["notify", "send"]).json()["delivered"],
        1
    );
    let decided = phone.next();
    assert_eq!(
        decided["title"],
        format!("{id} decided by human: In-process LRU")
    );
    assert_eq!(
        decided["headers"]["x-sequence-id"],
        id.as_str(),
        "the same sequence id: the phone replaces the push"
    );
    assert!(decided["headers"]["tags"]
        .as_str()
        .unwrap()
        .contains("resolved"));
}

/// When the first delivery of `notify status --json` may be tried next (epoch ms).
fn tried_next(status: &Value) -> i64 {
    let next = status["deliveries"][0]["next"]
        .as_str()
        .unwrap_or_else(|| panic!("no next try: {status}"));
    agentx_clarify_core::time::parse_ms(next).unwrap_or_else(|| panic!("{next}"))
}

#[test]
fn a_sinks_stderr_on_the_inbox_shows_no_secret() {
    // Issue 48: a command sink's stderr was shown to every reader of the inbox as it was —
    // a token a failing `curl -H "Authorization: Bearer …"` printed included.
    let ws = workspace();
    std::fs::write(
        ws.path().join(".agentx/config.toml"),
        "[[notify]]\nname = \"pager\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo 'curl: (22) 401 sending Authorization: Bearer s3cr3t-value-42 with token=axt_leakedleakedleaked to https://bot:hunter2@hooks.example/p' >&2; exit 3\"]\n",
    )
    .unwrap();
    agentx_at(ws.path(), &at(0), &["notify", "send"]);
    escalate(ws.path(), 45, 1);
    agentx_at(ws.path(), &at(2), &["notify", "send"]);
    let outbox = std::fs::read_to_string(ws.path().join(".agentx/state/outbox.json")).unwrap();
    let human = serve_http::token(ws.path(), "--human", "lead");
    let server = serve_http::Server::start(ws.path(), &["--no-worker"]);
    let auth = format!("Bearer {human}");
    let page = server.get("/", &[("Authorization", &auth)]);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains("Notifications not delivered"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("curl: (22) 401 sending Authorization: Bearer [redacted]"),
        "{}",
        page.body
    );
    for secret in ["s3cr3t-value-42", "axt_leaked", "hunter2"] {
        assert!(!page.body.contains(secret), "{secret} on the page");
        assert!(!outbox.contains(secret), "{secret} kept in the outbox");
    }
}

/// Sinks that speak for people (docs/protocol.md §37, `[[notify]] people`): an escalation goes
/// only to the receivers of the people it is assigned to — here alice's shift, then bob's —
/// each delivery verified by the official Standard Webhooks library.
#[test]
fn a_sink_for_people_hears_only_of_what_is_assigned_to_them() {
    let ws = workspace();
    let mut alice = Receiver::start(&[]);
    let mut bob = Receiver::start(&[]);
    let start = agentx_clarify_core::time::format_ms(T0);
    std::fs::write(
        ws.path().join(".agentx/people.toml"),
        format!("[people.alice]\n[people.bob]\n\n[[rotations]]\nrole = \"lead\"\npeople = [\"alice\", \"bob\"]\nevery = \"1d\"\nstart = \"{start}\"\n"),
    )
    .unwrap();
    write_config(
        ws.path(),
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"alice-hook\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\npeople = [\"alice\"]\n\n[[notify]]\nname = \"bob-hook\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\npeople = [\"bob\"]\n",
            alice.url("/alice"),
            bob.url("/bob")
        ),
    );
    assert_eq!(
        agentx_at(ws.path(), &at(0), &["notify", "send"]).json()["delivered"],
        0
    );
    // On alice's shift: hers only.
    let first = escalate(ws.path(), 42, 1);
    let sent = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    let got = alice.next();
    assert_eq!(got["verified"], true, "{got}");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["data"]["id"], first.as_str());
    bob.nothing_within(std::time::Duration::from_millis(300));
    // A day later, bob's shift: his only.
    let day = 24 * 60;
    let second = escalate(ws.path(), 43, day + 1);
    let sent = agentx_at(ws.path(), &at(day + 2), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    let got = bob.next();
    assert_eq!(got["verified"], true, "{got}");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["data"]["id"], second.as_str());
    alice.nothing_within(std::time::Duration::from_millis(300));
    // Two deliveries in all: none was planned for the sink a record is not assigned to.
    let status = agentx_at(ws.path(), &at(day + 3), &["notify", "status"]).json();
    assert_eq!(status["delivered"], 2, "{status}");
    assert_eq!(status["deliveries"], serde_json::json!([]), "{status}");
}

/// A ladder by person (docs/protocol.md §37, `then`): alice, the lead, is told at once; an
/// escalation nobody has claimed 30 minutes later is assigned to the CTO too (an `assign`
/// entry), whose receiver is told then — and the wake-up says when. A claimed one is not.
#[test]
fn an_unclaimed_escalation_goes_up_the_ladder() {
    let ws = workspace();
    let mut alice = Receiver::start(&[]);
    let mut cto = Receiver::start(&[]);
    std::fs::write(
        ws.path().join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\n\n[people.carol]\nroles = [\"cto\"]\n",
    )
    .unwrap();
    write_config(
        ws.path(),
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"alice-hook\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\npeople = [\"alice\"]\n\n[[notify]]\nname = \"cto-hook\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\npeople = [\"role:cto\"]\nafter_minutes = 30\nthen = \"role:cto\"\n",
            alice.url("/alice"),
            cto.url("/cto")
        ),
    );
    assert_eq!(
        agentx_at(ws.path(), &at(0), &["notify", "send"]).json()["delivered"],
        0
    );
    let left = escalate(ws.path(), 42, 1);
    let taken = escalate(ws.path(), 43, 1);
    let claim = agentx_at(
        ws.path(),
        &at(5),
        &["clarify", "claim", &taken, "--as", "alice"],
    );
    assert_eq!(claim.code, 0, "{claim:#?}");
    let sent = agentx_at(ws.path(), &at(6), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 2, "alice hears of both: {sent}");
    for _ in 0..2 {
        assert_eq!(alice.next()["verified"], true);
    }
    // The wake-up is the ladder's step, 30 minutes after the escalation.
    let wake = agentx_at(ws.path(), &at(7), &["clarify", "wakeup"]).json();
    assert_eq!(wake["wakeup"].as_i64(), Some(T0 + 31 * MINUTE), "{wake}");
    let early = agentx_at(ws.path(), &at(30), &["notify", "send"]).json();
    assert_eq!(early["delivered"], 0, "{early}");
    cto.nothing_within(std::time::Duration::from_millis(200));

    let sent = agentx_at(ws.path(), &at(31), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    let got = cto.next();
    assert_eq!(got["verified"], true, "{got}");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["data"]["id"], left.as_str());
    assert_eq!(
        event["data"]["assigned"],
        serde_json::json!(["alice", "carol"])
    );
    alice.nothing_within(std::time::Duration::from_millis(200));
    let shown = agentx_at(ws.path(), &at(32), &["clarify", "show", &left]).json();
    let last = shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(
        (last["type"].as_str(), last["from"].as_str()),
        (Some("assign"), Some("monitor")),
        "{last}"
    );
    assert_eq!(last["added"], serde_json::json!(["carol"]));
    assert_eq!(
        shown["clarification"]["assigned"],
        serde_json::json!(["alice", "carol"])
    );
    // The claimed record stayed alice's; a second pass adds nothing.
    let kept = agentx_at(ws.path(), &at(32), &["clarify", "show", &taken]).json();
    assert_eq!(
        kept["clarification"]["assigned"],
        serde_json::json!(["alice"])
    );
    let again = agentx_at(ws.path(), &at(40), &["notify", "send"]).json();
    assert_eq!(again["delivered"], 0, "{again}");
    // carol may decide it now.
    let decided = agentx_at(
        ws.path(),
        &at(41),
        &["clarify", "resolve", &left, "--as", "carol", "-m", "Redis."],
    );
    assert_eq!(decided.code, 0, "{decided:#?}");
    assert_eq!(
        agentx_at(ws.path(), &at(42), &["clarify", "verify"]).code,
        0
    );
}

/// A per-person sink (docs/protocol.md §37): one ntfy sink for the leads sends each
/// escalation to the topic of the person it is assigned to — alice's on her shift, bob's on
/// his — never to everyone's.
#[test]
fn a_per_person_sink_reaches_each_persons_own_topic() {
    let ws = workspace();
    let mut phones = Receiver::start(&[]);
    let start = agentx_clarify_core::time::format_ms(T0);
    std::fs::write(
        ws.path().join(".agentx/people.toml"),
        format!("[people.alice]\nntfy = \"alice-7f3a\"\n[people.bob]\nntfy = \"bob-91c2\"\n\n[[rotations]]\nrole = \"lead\"\npeople = [\"alice\", \"bob\"]\nevery = \"1d\"\nstart = \"{start}\"\n"),
    )
    .unwrap();
    write_config(
        ws.path(),
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"phones\"\nkind = \"ntfy\"\nurl = \"{}\"\npeople = [\"role:lead\"]\nper_person = true\n",
            phones.url("/")
        ),
    );
    assert_eq!(
        agentx_at(ws.path(), &at(0), &["notify", "send"]).json()["delivered"],
        0
    );
    escalate(ws.path(), 42, 1);
    let sent = agentx_at(ws.path(), &at(2), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    assert_eq!(phones.next()["path"], "/alice-7f3a");
    phones.nothing_within(std::time::Duration::from_millis(200));
    let day = 24 * 60;
    escalate(ws.path(), 43, day + 1);
    let sent = agentx_at(ws.path(), &at(day + 2), &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    assert_eq!(phones.next()["path"], "/bob-91c2");
    phones.nothing_within(std::time::Duration::from_millis(200));
}
