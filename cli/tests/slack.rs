//! The `slack-app` sink and `/slack/interactions` (issue 44) over real HTTP on loopback: a
//! real `agentx serve` posts to a stand-in of Slack's Web API (`tests/notify/slack_standin.py`)
//! that checks every call against the official `slack-sdk` (its `WebClient` methods'
//! parameters, Block Kit models and views), and interactions are sent to the server signed by
//! the SDK's own `SignatureVerifier`. A click decides as the person whose `slack` id it is and
//! the message is updated; a bad signature, an old timestamp, an unmapped Slack user, a
//! non-decider and a replayed request change nothing; the modal answers a text question; a
//! decision in the inbox updates the Slack message too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_http::*;

const BOT: &str = "xoxb-test-0000";
const SIGNING: &str = "8f742231b10e8888abcd99yyyzzz85a5";

struct Slack {
    child: Child,
    port: u16,
}

impl Slack {
    fn start() -> Slack {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/notify/slack_standin.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(BOT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the Slack stand-in (scripts/setup installs slack-sdk)");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the Slack stand-in did not start: {first:?}"));
        Slack { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let mut cmd = Command::new("curl");
        cmd.args(["-s", "-X", method, &format!("{}{path}", self.url())]);
        if let Some(b) = body {
            cmd.args(["-H", "Content-Type: application/json", "-d", &b.to_string()]);
        }
        let out = cmd.output().expect("curl runs");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn calls(&self) -> Vec<Value> {
        self.request("GET", "/_calls", None)
            .as_array()
            .unwrap()
            .clone()
    }

    /// The calls of `method` once `ready` holds for them (30 s at most).
    fn wait_for(&self, method: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let of: Vec<Value> = self
                .calls()
                .into_iter()
                .filter(|c| c["method"] == method)
                .collect();
            if ready(&of) {
                return of;
            }
            assert!(
                Instant::now() < until,
                "no such {method} within 30 s: {:#?}",
                self.calls()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends `payload` to the server as Slack does, signed with `secret` by slack-sdk.
    fn interact(&self, server: &Server, payload: &Value, extra: Value) -> Value {
        let mut req = json!({
            "url": format!("{}/slack/interactions", server.api_origin()),
            "payload": payload,
            "secret": SIGNING,
        });
        for (k, v) in extra.as_object().unwrap() {
            req[k] = v.clone();
        }
        self.request("POST", "/_interact", Some(&req))
    }
}

impl Drop for Slack {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// alice (a lead, Slack U0ALICE) decides; bob (U0BOB) is a person but no decider; the sink
/// posts to the stand-in.
fn configure(root: &Path, slack: &Slack) {
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\nslack = \"U0ALICE\"\n\n[people.bob]\nslack = \"U0BOB\"\n",
    )
    .unwrap();
    write_config(
        root,
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"team-slack\"\nkind = \"slack-app\"\n\
             channel = \"#decisions\"\ntoken_env = \"AGENTX_SLACK_BOT\"\nsigning_secret_env = \"AGENTX_SLACK_SIGNING\"\n\
             api_url = \"{}\"\n",
            slack.url()
        ),
    );
}

fn started(root: &Path) -> Server {
    let server = Server::start_logged(
        root,
        &[],
        &[("AGENTX_SLACK_BOT", BOT), ("AGENTX_SLACK_SIGNING", SIGNING)],
        &root.join("serve.log"),
    );
    std::thread::sleep(Duration::from_millis(500));
    server
}

/// A button click's payload, as Slack sends it (`block_actions`).
fn click(user: &str, value: &str, action: &str, ts: &str) -> Value {
    json!({
        "type": "block_actions",
        "user": {"id": user, "username": user.to_lowercase(), "team_id": "T0AGENTX"},
        "api_app_id": "A0AGENTX",
        "trigger_id": "1234.5678.abcdef",
        "team": {"id": "T0AGENTX", "domain": "agentx"},
        "container": {"type": "message", "message_ts": ts, "channel_id": "C0AGENTX", "is_ephemeral": false},
        "channel": {"id": "C0AGENTX", "name": "decisions"},
        "message": {"type": "message", "ts": ts, "text": "…"},
        "response_url": "https://hooks.slack.com/actions/T0AGENTX/1/xyz",
        "actions": [{"action_id": action, "block_id": "agentx", "value": value,
                     "type": "button", "action_ts": "1700000001.000001"}],
    })
}

fn last_entry(root: &Path, id: &str) -> Value {
    let shown = json_in(root, &["clarify", "show", id]).json();
    shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

/// Every call the stand-in took passed the SDK's checks.
fn all_valid(slack: &Slack) {
    for c in slack.calls() {
        assert!(c["problem"].is_null(), "{c:#}");
    }
}

/// The posted message of `id`: its `ts` and its buttons' values.
fn posted(slack: &Slack, id: &str) -> (String, Vec<String>) {
    let posts = slack.wait_for("chat.postMessage", |p| {
        p.iter()
            .any(|c| c["args"]["text"].as_str().unwrap_or("").contains(id))
    });
    let n = posts
        .iter()
        .position(|c| c["args"]["text"].as_str().unwrap_or("").contains(id))
        .unwrap();
    let post = &posts[n];
    assert_eq!(post["args"]["channel"], "#decisions");
    let actions = post["args"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .unwrap_or_else(|| panic!("no buttons: {post:#}"));
    let values = actions["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["value"].as_str().map(str::to_owned))
        .collect();
    (format!("1700000000.{:06}", n + 1), values)
}

fn ephemerals(slack: &Slack, user: &str) -> Vec<String> {
    slack
        .calls()
        .into_iter()
        .filter(|c| c["method"] == "chat.postEphemeral" && c["args"]["user"] == user)
        .map(|c| c["args"]["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn wait_ephemeral(slack: &Slack, user: &str, n: usize) -> String {
    slack.wait_for("chat.postEphemeral", |e| {
        e.iter().filter(|c| c["args"]["user"] == user).count() >= n
    });
    ephemerals(slack, user).remove(n - 1)
}

#[test]
fn a_click_decides_as_the_mapped_person_and_every_forgery_changes_nothing() {
    let dir = workspace();
    let root = dir.path();
    let slack = Slack::start();
    configure(root, &slack);
    let server = started(root);
    let id = escalated_closed_choice(root, 4, "Cache <!here>", "Which cache?", "a person decides");
    let (ts, values) = posted(&slack, &id);
    let redis = format!("{id}|1|redis");
    assert_eq!(
        values,
        vec![redis.clone(), format!("{id}|1|lru"), format!("{id}|1")]
    );
    let post = slack
        .wait_for("chat.postMessage", |p| !p.is_empty())
        .remove(0);
    let text = post["args"]["blocks"].to_string();
    assert!(
        text.contains("&lt;!here&gt;") && !text.contains("<!here>"),
        "{text}"
    );
    let ledger = ledger_path(root, 4);
    let before = bytes(&ledger);
    let alice = click("U0ALICE", &redis, "agentx-decide-redis", &ts);

    // Signed with another secret; five minutes and more old: 401, nothing written.
    let r = slack.interact(&server, &alice, json!({"secret": "not-the-secret"}));
    assert_eq!(r["status"], 401, "{r}");
    let old = agentx_clarify_store::clock::system_now_ms() / 1000 - 400;
    let r = slack.interact(&server, &alice, json!({"timestamp": old}));
    assert_eq!(r["status"], 401, "{r}");
    assert_eq!(bytes(&ledger), before);

    // A Slack user who is no person; a person who may not decide: told, nothing written.
    let r = slack.interact(
        &server,
        &click("U0NOBODY", &redis, "agentx-decide-redis", &ts),
        json!({}),
    );
    assert_eq!(r["status"], 200, "{r}");
    let said = wait_ephemeral(&slack, "U0NOBODY", 1);
    assert!(said.contains("no person of this workspace"), "{said}");
    let r = slack.interact(
        &server,
        &click("U0BOB", &redis, "agentx-decide-redis", &ts),
        json!({}),
    );
    assert_eq!(r["status"], 200, "{r}");
    let said = wait_ephemeral(&slack, "U0BOB", 1);
    assert!(said.contains("alice"), "bob hears who may decide: {said}");
    assert_eq!(bytes(&ledger), before);

    // alice's click decides, once: the same signed request again is refused.
    let r = slack.interact(&server, &alice, json!({"replay": true}));
    assert_eq!(r["first"]["status"], 200, "{r}");
    assert_eq!(r["second"]["status"], 401, "{r}");
    let last = last_entry(root, &id);
    assert_eq!(
        (
            last["value"].as_str(),
            last["by"].as_str(),
            last["via"].as_str()
        ),
        (Some("redis"), Some("alice"), Some("slack")),
        "{last}"
    );
    assert_eq!(last["ref"], format!("team-slack/{ts}"));
    // The message now says who decided, without buttons.
    let updates = slack.wait_for("chat.update", |u| !u.is_empty());
    assert_eq!(
        (
            updates[0]["args"]["ts"].as_str(),
            updates[0]["args"]["channel"].as_str()
        ),
        (Some(ts.as_str()), Some("C0AGENTX"))
    );
    let said = updates[0]["args"]["text"].as_str().unwrap();
    assert!(said.starts_with("Decided by alice: Redis — "), "{said}");
    assert!(!updates[0]["args"]["blocks"]
        .to_string()
        .contains("agentx-decide"));
    // A later click (a fresh request) hears what happened.
    let decided = bytes(&ledger);
    let again = click("U0ALICE", &format!("{id}|1|lru"), "agentx-decide-lru", &ts);
    assert_eq!(slack.interact(&server, &again, json!({}))["status"], 200);
    let said = wait_ephemeral(&slack, "U0ALICE", 1);
    assert!(said.starts_with("Already decided by alice at"), "{said}");
    assert_eq!(bytes(&ledger), decided);
    all_valid(&slack);
}

#[test]
fn the_answer_modal_decides_a_text_question() {
    let dir = workspace();
    let root = dir.path();
    let slack = Slack::start();
    configure(root, &slack);
    let server = started(root);
    let asked = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            "6",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Retention",
            "--question",
            "How long do we keep audit logs?",
        ],
    );
    let id = asked.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        json_in(root, &["clarify", "escalate", &id, "-m", "policy"]).code,
        0
    );
    let (ts, values) = posted(&slack, &id);
    assert_eq!(
        values,
        vec![format!("{id}|1")],
        "a text question: only Answer…"
    );
    let open = click("U0ALICE", &format!("{id}|1"), "agentx-answer", &ts);
    assert_eq!(slack.interact(&server, &open, json!({}))["status"], 200);
    let views = slack.wait_for("views.open", |v| !v.is_empty());
    let view = &views[0]["args"]["view"];
    assert_eq!(views[0]["args"]["trigger_id"], "1234.5678.abcdef");
    assert_eq!(view["private_metadata"], format!("{id}|1|C0AGENTX|{ts}"));
    let submit = |text: &str| {
        json!({
            "type": "view_submission",
            "user": {"id": "U0ALICE"},
            "team": {"id": "T0AGENTX"},
            "view": {"id": "V0AGENTX", "type": "modal", "callback_id": view["callback_id"],
                     "private_metadata": view["private_metadata"],
                     "state": {"values": {"note": {"note": {"type": "plain_text_input", "value": text}}}}},
        })
    };
    // An empty answer keeps the modal open with the reason under the box.
    let before = bytes(&ledger_path(root, 6));
    let r = slack.interact(&server, &submit("  "), json!({}));
    let body: Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["response_action"], "errors", "{r}");
    assert_eq!(bytes(&ledger_path(root, 6)), before);
    let r = slack.interact(&server, &submit("Ninety days, then archive."), json!({}));
    assert_eq!(
        (r["status"].as_u64(), r["body"].as_str()),
        (Some(200), Some("")),
        "{r}"
    );
    let last = last_entry(root, &id);
    assert_eq!(
        (
            last["body"].as_str(),
            last["by"].as_str(),
            last["via"].as_str()
        ),
        (
            Some("Ninety days, then archive."),
            Some("alice"),
            Some("slack")
        ),
        "{last}"
    );
    let updates = slack.wait_for("chat.update", |u| !u.is_empty());
    assert!(updates[0]["args"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Decided by alice: Ninety days"));
    all_valid(&slack);
}

#[test]
fn a_decision_in_the_inbox_updates_the_slack_message() {
    let dir = workspace();
    let root = dir.path();
    let slack = Slack::start();
    configure(root, &slack);
    let alice = token(root, "--human", "alice");
    let server = started(root);
    let id = escalated_closed_choice(root, 8, "Cache", "Which cache?", "a person decides");
    let (ts, _) = posted(&slack, &id);
    let r = server.call_bearer(&alice, "decide", json!({"id": id, "value": "lru"}));
    assert_eq!(r.status, 200, "{r:?}");
    let updates = slack.wait_for("chat.update", |u| !u.is_empty());
    assert_eq!(updates[0]["args"]["ts"], ts);
    let said = updates[0]["args"]["text"].as_str().unwrap();
    assert!(
        said.starts_with("Decided by alice: In-process LRU"),
        "{said}"
    );
    // The stale card's button now only tells.
    let late = click(
        "U0ALICE",
        &format!("{id}|1|redis"),
        "agentx-decide-redis",
        &ts,
    );
    assert_eq!(slack.interact(&server, &late, json!({}))["status"], 200);
    let said = wait_ephemeral(&slack, "U0ALICE", 1);
    assert!(said.starts_with("Already decided by alice"), "{said}");
    all_valid(&slack);
}
