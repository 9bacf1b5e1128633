//! One process reads `config.toml` once (issue 42), seen under `strace -f -e trace=openat`:
//! `clarify ask` and a delivery pass (`notify send`) open it once; `agentx serve` once at start
//! and again only after the file changed — and the `[[notify]]` sink added while it serves is
//! used by its next delivery pass, no restart (the webhook verified by the official Standard
//! Webhooks library, as the notification tests verify theirs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod notify_receiver;
mod serve_http;

use std::time::Duration;

use common::*;
use notify_receiver::{agentx_at, at, escalate, Receiver, SECRET};

const CONFIG: &str = ".agentx/config.toml";

fn traced_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a directory for the trace")
}

#[test]
fn clarify_ask_reads_the_settings_once() {
    let dir = workspace();
    let root = dir.path();
    // A runner table and a typo too: the runner tables, the store picker, the typo warnings
    // and the command all take their part from the one reading.
    write_config(
        root,
        "[clarify]\nmax_retrys = 2\n\n[agents.architect]\ncommand = [\"true\"]\n",
    );
    let traces = traced_dir();
    let trace = traces.path().join("ask.trace");
    let out = agentx_traced(&trace)
        .arg(root_arg(root))
        .arg("--json")
        .args(ask_args(42, "Cache", "Redis or LRU?"))
        .output()
        .expect("strace runs agentx");
    let out = Out::from_output(&out);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(
        out.stderr.contains("did you mean `max_retries`?"),
        "{out:#?}"
    );
    assert_eq!(opens(&trace, CONFIG), 1, "config.toml opened once");
    for flow in ["feature", "story", "bug"] {
        let name = format!(".agentx/workflows/{flow}.toml");
        assert_eq!(opens(&trace, &name), 1, "{name} opened once");
    }
}

#[test]
fn a_delivery_pass_reads_the_settings_once() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n\n[[notify]]\nname = \"desk\"\nkind = \"command\"\ncommand = [\"true\"]\n",
            receiver.url("/h")
        ),
    );
    // The sinks are seen before anything happens: from then on they are told.
    assert_eq!(agentx_at(root, &at(0), &["notify", "send"]).code, 0);
    let id = escalate(root, 42, 1);
    let traces = traced_dir();
    let trace = traces.path().join("send.trace");
    let out = agentx_traced(&trace)
        .arg(root_arg(root))
        .args(["--json", &format!("--now={}", at(2)), "notify", "send"])
        .output()
        .expect("strace runs agentx");
    let out = Out::from_output(&out);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["delivered"], 2, "{out:#?}");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    assert_eq!(got["headers"]["webhook-id"], format!("evt_{id}_1"));
    assert_eq!(opens(&trace, CONFIG), 1, "config.toml opened once");
}

#[test]
fn serve_reads_the_settings_at_start_and_again_only_after_they_changed() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    let human = serve_http::token(root, "--human", "lead");
    // Saved a minute ago: the server trusts its first reading at once.
    settle_settings(root);
    let traces = traced_dir();
    let trace = traces.path().join("serve.trace");
    let mut cmd = agentx_traced(&trace);
    cmd.arg(root_arg(root))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let server = serve_http::Server::spawn(cmd);
    let list = |server: &serve_http::Server| {
        let r = server.call_bearer(&human, "list", serde_json::json!({"all": true}));
        assert_eq!(r.status, 200, "{r:?}");
    };
    // Requests, pages, the worker, the deliverer and the feed: all on the one reading.
    for _ in 0..5 {
        list(&server);
        assert_eq!(
            server
                .get("/", &[("Authorization", &format!("Bearer {human}"))])
                .status,
            200
        );
    }
    let asked = serve_http::escalated(root, 7, "Before");
    std::thread::sleep(Duration::from_millis(600));
    list(&server);
    assert_eq!(opens(&trace, CONFIG), 1, "read once at start ({asked})");

    // A sink added while serving (a save the server notices by the file's stamp alone).
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n",
            receiver.url("/late")
        ),
    );
    // A change wakes the deliverer, whose pass reads the new settings and sees the sink;
    // the escalation after it is the sink's.
    let args = ask_args(8, "After", "Which region?");
    let ask = json_in(root, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(ask.code, 0, "{ask:#?}");
    let id = ask.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    std::thread::sleep(Duration::from_millis(1500));
    let esc = json_in(
        root,
        &["clarify", "escalate", &id, "-m", "a person decides"],
    );
    assert_eq!(esc.code, 0, "{esc:#?}");
    // A new sink is owed what happened since it was configured, never less than the last
    // 24 h (issue 49): the escalation before the edit comes too, then the one after it.
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let got = receiver.next();
            assert_eq!(got["verified"], true, "{got}");
            assert_eq!(got["path"], "/late");
            got["headers"]["webhook-id"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert!(ids.contains(&format!("evt_{id}_1")), "{ids:?}");
    assert!(ids.contains(&format!("evt_{asked}_1")), "{ids:?}");
    // The save is more than a second old now: one more look settles the reading.
    list(&server);
    let after_edit = opens(&trace, CONFIG);
    assert!(after_edit >= 2, "read again after the edit: {after_edit}");

    // Still since: not read again however many requests come.
    for _ in 0..5 {
        list(&server);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        opens(&trace, CONFIG),
        after_edit,
        "not read again while unchanged"
    );
}
