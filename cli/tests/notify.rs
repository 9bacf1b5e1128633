//! `agentx notify test` against real receivers on loopback: a webhook verified by the official
//! Standard Webhooks library (PyPI `standardwebhooks`, tests/notify/receiver.py), Slack and
//! ntfy payloads, a command sink, and every failure said without a secret.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use common::*;
use serde_json::Value;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The receiver, its port and its output.
struct Receiver {
    child: Child,
    lines: BufReader<ChildStdout>,
    port: u16,
}

impl Receiver {
    fn start(extra: &[&str]) -> Receiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/notify/receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(SECRET)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the receiver (scripts/setup installs standardwebhooks)");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        lines.read_line(&mut first).expect("the receiver's port");
        let port = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the receiver did not start: {first:?}"));
        Receiver { child, lines, port }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The next request the receiver recorded.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).expect("a request line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
            .contains("did you mean secret_env"),
        "{v}"
    );
}
