//! Routing to A2A agents (docs/protocol.md §27) with real parts: the `agentx` binary routes to
//! agents built with the official Python SDK (`a2a-sdk`, `tests/a2a/agent.py`, installed by
//! `scripts/setup`) on loopback. Each agent records what it received (the message, its
//! metadata, a `CancelTask`), so the tests see both sides.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod a2a_agent;
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use a2a_agent::Agent;
use common::{json_in, read_ledger, Out};
use serde_json::Value;

const WORKFLOW: &str = "[[steps]]\nid = \"build\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_max_rounds = 3\nclarify_sla_minutes = 60\n";

/// A workspace whose architect is the A2A agent at `url` (plus `extra` lines in its table).
fn workspace(url: &str, extra: &str) -> tempfile::TempDir {
    let dir = common::workspace();
    let root = dir.path();
    std::fs::write(root.join(".agentx/workflows/routing.toml"), WORKFLOW).unwrap();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[clarify]\ndefault_workflow = \"routing\"\n\n[agents.architect]\npreset = \"a2a\"\nurl = \"{url}\"\n{extra}"),
    )
    .unwrap();
    dir
}

fn ask(root: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "clarify",
        "ask",
        "--issue=42",
        "--from=engineer",
        "--to=architect",
        "--topic=Cache layer",
        "--question=Which cache do we use?",
    ];
    args.extend_from_slice(extra);
    let out = json_in(root, &args);
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn route(root: &Path, id: &str) -> Out {
    json_in(root, &["clarify", "route", id])
}

fn record(root: &Path, id: &str) -> Value {
    read_ledger(root, 42)["clarifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not in the ledger"))
}

fn last_entry(record: &Value) -> Value {
    record["thread"].as_array().unwrap().last().unwrap().clone()
}

#[test]
fn a_completed_task_is_the_answer_and_gets_the_record_as_metadata() {
    let agent = Agent::start("complete", None);
    let dir = workspace(&agent.url, "");
    let root = dir.path();
    let id = ask(root, &[]);
    let out = route(root, &id);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["outcome"], "answered", "{v}");
    let answer = last_entry(&record(root, &id));
    assert_eq!(answer["type"], "answer");
    assert_eq!(answer["from"], "architect");
    assert_eq!(answer["body"], "Use Redis.");
    let got = agent.wait_for("message");
    assert_eq!(got["metadata"]["id"], id.as_str());
    assert_eq!(got["metadata"]["issue"].as_f64(), Some(42.0));
    let text = got["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("# Clarification request {id}")),
        "{text}"
    );
    assert!(text.contains("Which cache do we use?"), "{text}");
}

#[test]
fn a_completion_without_artifact_answers_with_the_agent_message() {
    let agent = Agent::start("message", None);
    let dir = workspace(&agent.url, "");
    let root = dir.path();
    let id = ask(root, &[]);
    let v = route(root, &id).json();
    assert_eq!(v["outcome"], "answered", "{v}");
    assert_eq!(
        last_entry(&record(root, &id))["body"],
        "Use the in-process LRU."
    );
}

#[test]
fn input_required_asks_back() {
    let agent = Agent::start("ask", None);
    let dir = workspace(&agent.url, "");
    let root = dir.path();
    let id = ask(root, &[]);
    let out = route(root, &id);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["outcome"], "asked-back", "{v}");
    let back = &v["askedBack"];
    assert_eq!(back["from"], "architect");
    assert_eq!(back["to"], "engineer");
    assert_eq!(back["askedBack"], id.as_str());
    let body = back["thread"][0]["body"].as_str().unwrap();
    assert!(
        body.contains("Which region must the cache survive a restart in?"),
        "{body}"
    );
}

#[test]
fn failed_and_rejected_tasks_are_agent_errors() {
    for (mode, says) in [
        ("fail", "the A2A task failed: the model is overloaded"),
        ("reject", "the A2A task was rejected: not my area"),
    ] {
        let agent = Agent::start(mode, None);
        let dir = workspace(&agent.url, "");
        let root = dir.path();
        let id = ask(root, &[]);
        let out = route(root, &id);
        assert_eq!(out.code, 9, "{mode}: {out:#?}");
        let v = out.json();
        assert_eq!(v["error"]["code"], "AGENT_ERROR");
        assert_eq!(v["clarification"]["status"], "escalated");
        let entry = last_entry(&record(root, &id));
        assert_eq!(entry["type"], "escalation");
        assert_eq!(entry["from"], "agent-x");
        let body = entry["body"].as_str().unwrap();
        assert_eq!(body, format!("agent error: {says}"), "{mode}");
    }
}

#[test]
fn a_task_that_never_finishes_times_out_and_is_canceled() {
    let agent = Agent::start("hang", None);
    let dir = workspace(&agent.url, "timeout_seconds = 2\n");
    let root = dir.path();
    let id = ask(root, &[]);
    let started = Instant::now();
    let out = route(root, &id);
    let took = started.elapsed();
    assert_eq!(out.code, 9, "{out:#?}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(15),
        "{took:?}"
    );
    let body = last_entry(&record(root, &id))["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        body.starts_with("agent error: timed out after 2 s; CancelTask sent for task "),
        "{body}"
    );
    let sent = agent.wait_for("message");
    let canceled = agent.wait_for("cancel");
    assert_eq!(canceled["taskId"], sent["taskId"], "the task it was sent");
    assert!(body.ends_with(sent["taskId"].as_str().unwrap()), "{body}");
}

#[test]
fn a_choice_question_records_the_option_value() {
    let agent = Agent::start("choice", None);
    let dir = workspace(&agent.url, "");
    let root = dir.path();
    let id = ask(
        root,
        &[
            "--kind=choice",
            "--option=redis=Redis",
            "--option=lru=In-process LRU",
        ],
    );
    let out = route(root, &id);
    assert_eq!(out.code, 0, "{out:#?}");
    let answer = last_entry(&record(root, &id));
    assert_eq!(answer["type"], "answer");
    assert_eq!(answer["value"], "lru", "{answer}");
    let text = agent.wait_for("message")["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("lru"),
        "the options are in the prompt: {text}"
    );
}

#[test]
fn the_bearer_token_comes_from_token_env() {
    let agent = Agent::start("complete", Some("s3cret-a2a"));
    let dir = workspace(&agent.url, "token_env = \"ARCH_A2A_TOKEN\"\n");
    let root = dir.path();
    let id = ask(root, &[]);
    // Not set: refused before anything is written.
    let out = route(root, &id);
    assert_ne!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json()["error"]["code"],
        "RUNNER_UNAVAILABLE",
        "{out:#?}"
    );
    assert!(!out.stdout.contains("s3cret"));
    assert_eq!(record(root, &id)["status"], "pending");
    // Set: the agent accepts the call.
    let mut cmd = common::agentx();
    cmd.env("ARCH_A2A_TOKEN", "s3cret-a2a").args([
        common::root_arg(root).as_str(),
        "--json",
        "clarify",
        "route",
        &id,
    ]);
    let out = Out::from_output(&cmd.output().unwrap());
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["outcome"], "answered");
    assert!(agent.events().iter().all(|e| e["event"] != "unauthorized"));
    // The run log names the variable, never the token.
    let runs = root.join(".agentx/state/runs");
    for f in std::fs::read_dir(&runs).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(!text.contains("s3cret"), "{text}");
    }
}

/// A listener on loopback that counts the connections it gets and answers none of them: where
/// a hostile card would send the hub's requests.
struct Collector {
    url: String,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Collector {
    fn start() -> Collector {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/rpc", listener.local_addr().unwrap());
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = std::sync::Arc::clone(&hits);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(stream);
            }
        });
        Collector { url, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[test]
fn the_token_goes_only_to_the_configured_origin_or_one_allowed() {
    // Issue 48: the runner sent its bearer token to whatever host the agent's card named.
    let collector = Collector::start();
    let agent = Agent::start_with(
        "complete",
        Some("s3cret-a2a"),
        &[("AGENT_CARD_URL", &collector.url)],
    );
    let dir = workspace(&agent.url, "token_env = \"ARCH_A2A_TOKEN\"\n");
    let root = dir.path();
    let id = ask(root, &[]);
    let with_token = |root: &Path, id: &str| {
        let mut cmd = common::agentx();
        cmd.env("ARCH_A2A_TOKEN", "s3cret-a2a").args([
            common::root_arg(root).as_str(),
            "--json",
            "clarify",
            "route",
            id,
        ]);
        Out::from_output(&cmd.output().unwrap())
    };
    let out = with_token(root, &id);
    assert_eq!(out.code, 9, "{out:#?}");
    let v = out.json();
    assert_eq!(v["error"]["code"], "AGENT_ERROR", "{v}");
    let origin = collector.url.trim_end_matches("/rpc");
    let body = last_entry(&record(root, &id))["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        body.contains(&format!("on another origin, {origin}")),
        "{body}"
    );
    assert!(body.contains("allow_card_origins"), "{body}");
    assert_eq!(collector.hits(), 0, "a request went to the card's origin");
    assert!(agent.events().iter().all(|e| e["event"] != "message"));

    // The card names another agent whose origin the table trusts: the token goes there.
    let other = Agent::start("complete", Some("s3cret-a2a"));
    let pointing = Agent::start_with(
        "complete",
        Some("s3cret-a2a"),
        &[("AGENT_CARD_URL", &format!("{}/", other.url))],
    );
    let trusted = format!(
        "token_env = \"ARCH_A2A_TOKEN\"\nallow_card_origins = [\"{}\"]\n",
        other.url
    );
    let dir = workspace(&pointing.url, &trusted);
    let root = dir.path();
    let id = ask(root, &[]);
    let out = with_token(root, &id);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["outcome"], "answered");
    assert!(other.events().iter().any(|e| e["event"] == "message"));
    assert!(other.events().iter().all(|e| e["event"] != "unauthorized"));
    assert!(pointing.events().iter().all(|e| e["event"] != "message"));
    // An entry that is not an origin is the settings' error, naming the key.
    let dir = workspace(
        &agent.url,
        "allow_card_origins = [\"http://127.0.0.1:1/path\"]\n",
    );
    let id = ask(dir.path(), &[]);
    let out = route(dir.path(), &id);
    assert_eq!(out.code, 3, "{out:#?}");
    assert!(out.stdout.contains("allow_card_origins"), "{out:#?}");
}
