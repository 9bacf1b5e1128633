//! A question to a `preset = "a2a"` agent (the official Python SDK's, `tests/a2a/agent.py`) is
//! routed alike through every door of the hub — the CLI, `agentx mcp` over stdio and `agentx
//! serve`'s `/mcp` over HTTP — because all three open the one workspace handle with the hub's
//! runner and the two MCP transports build their hub by the one function (issue 42: HTTP MCP
//! once routed with the process runner and could not reach an A2A agent).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod a2a_agent;
mod common;
mod mcp_session;
mod serve_http;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use a2a_agent::Agent;
use common::*;
use serde_json::{json, Value};

const WORKFLOW: &str = "[[steps]]\nid = \"build\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_max_rounds = 3\nclarify_sla_minutes = 60\n";

/// The answer of the first record of `issue` once its routing wrote one (within 30 s).
fn answer_of(root: &Path, issue: u32) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let path = ledger_path(root, issue);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let ledger: Value = serde_json::from_str(&text).unwrap();
            let record = &ledger["clarifications"][0];
            if let Some(last) = record["thread"].as_array().and_then(|t| t.last()) {
                if last["type"] != "question" {
                    return json!({"status": record["status"], "last": last});
                }
            }
        }
        assert!(
            Instant::now() < until,
            "issue {issue} was never routed: {:?}",
            std::fs::read_to_string(ledger_path(root, issue))
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `tools/call clarify_ask` with `route: true` over `agentx mcp`'s stdio.
fn ask_over_stdio(root: &Path, issue: u32) -> Value {
    let mut child = agentx()
        .args([root_arg(root).as_str(), "mcp", "--agent=engineer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "doors-test", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "clarify_ask", "arguments": {"issue": issue, "to": "architect",
        "topic": "Cache layer", "question": "Which cache do we use?", "route": true}}}),
    );
    let result = loop {
        let line = lines.next().expect("a reply").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 {
            break v["result"].clone();
        }
    };
    // The routing runs in the server after the reply: keep it up until the answer is in.
    let answered = answer_of(root, issue);
    drop(stdin);
    let _ = child.wait();
    assert_eq!(result["isError"], false, "{result}");
    answered
}

#[test]
fn a_question_to_an_a2a_agent_is_routed_alike_by_the_cli_and_both_mcp_transports() {
    let agent = Agent::start("complete", None);
    let dir = workspace();
    let root = dir.path();
    std::fs::write(root.join(".agentx/workflows/routing.toml"), WORKFLOW).unwrap();
    write_config(
        root,
        &format!("[clarify]\ndefault_workflow = \"routing\"\n\n[agents.architect]\npreset = \"a2a\"\nurl = \"{}\"\n", agent.url),
    );

    // The CLI: ask and route at once.
    let out = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue=41",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache layer",
            "--question=Which cache do we use?",
            "--route",
            "--wait",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["outcome"], "answered", "{out:#?}");
    let by_cli = answer_of(root, 41);

    // `agentx mcp` over stdio.
    let by_stdio = ask_over_stdio(root, 42);

    // `agentx serve`'s /mcp over HTTP, the token naming the engineer.
    let engineer = serve_http::token(root, "--agent", "engineer");
    let server = serve_http::Server::start(root, &["--no-worker"]);
    let mut session = mcp_session::Session::open(&server, &engineer);
    let (reply, asked) = session.call(
        "clarify_ask",
        json!({"issue": 43, "to": "architect", "topic": "Cache layer",
               "question": "Which cache do we use?", "route": true}),
    );
    let asked = asked.unwrap_or_else(|| panic!("a result: {reply:?}"));
    assert_eq!(asked["isError"], false, "{asked}");
    let by_http = answer_of(root, 43);

    for (door, got) in [("cli", &by_cli), ("stdio", &by_stdio), ("http", &by_http)] {
        assert_eq!(got["status"], "answered", "{door}: {got}");
        assert_eq!(got["last"]["type"], "answer", "{door}: {got}");
        assert_eq!(got["last"]["from"], "architect", "{door}: {got}");
        assert_eq!(got["last"]["body"], "Use Redis.", "{door}: {got}");
    }
    // The agent got each record, its id as A2A metadata, from each door.
    let ids: Vec<Value> = agent
        .events()
        .into_iter()
        .filter(|e| e["event"] == "message")
        .map(|e| e["metadata"]["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            json!("CLR-41-001"),
            json!("CLR-42-001"),
            json!("CLR-43-001")
        ]
    );
}
