//! The hub as an A2A 1.0 agent (docs/protocol.md §27) with real parts: a real `agentx serve`
//! on loopback, driven by the official Python SDK's client (`tests/a2a/hub_client.py`), and
//! the CLI answering in the same workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod mcp_session;
mod serve_http;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_http::*;

/// The SDK client process: one JSON command per line in, JSON lines out.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    /// Lines read while waiting for another kind.
    held: Vec<Value>,
}

impl Client {
    fn start(base: &str, token: &str) -> Client {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/a2a/hub_client.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(base)
            .arg(token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs (scripts/setup installs a2a-sdk)");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|_| json!({"unparsed": line}));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            lines,
            held: Vec::new(),
        }
    }

    /// The next line that has `key` (others are kept for later), within 30 s.
    fn next_with(&mut self, key: &str) -> Value {
        if let Some(i) = self.held.iter().position(|v| v.get(key).is_some()) {
            return self.held.remove(i);
        }
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let v = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {key} line; held: {:?}", self.held));
            if v.get(key).is_some() {
                return v;
            }
            self.held.push(v);
        }
    }

    fn send(&mut self, cmd: Value) {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Runs a command answered by one line (a task, a card or an error).
    fn call(&mut self, cmd: Value) -> Value {
        self.send(cmd);
        loop {
            if let Some(i) = self.held.iter().position(|v| {
                v.get("task").is_some() || v.get("card").is_some() || v.get("error").is_some()
            }) {
                return self.held.remove(i);
            }
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no answer; held: {:?}", self.held));
            self.held.push(v);
        }
    }

    fn task(&mut self, cmd: Value) -> Value {
        let v = self.call(cmd);
        assert!(v.get("task").is_some(), "{v}");
        v["task"].clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ledger_record(root: &Path, issue: u32, id: &str) -> Value {
    read_ledger(root, issue)["clarifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not in the ledger"))
}

fn answer(root: &Path, id: &str, flags: &[&str]) {
    let mut args = vec!["clarify", "answer", id, "--from=architect"];
    args.extend_from_slice(flags);
    let out = json_in(root, &args);
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn calls_need_an_agent_token_and_the_card_is_public() {
    let dir = workspace();
    let root = dir.path();
    let human = token(root, "--human", "alice");
    let revoked = token(root, "--agent", "engineer");
    assert_eq!(json_in(root, &["tokens", "revoke", "engineer"]).code, 0);
    let server = Server::start(root, &["--no-worker"]);
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"CLR-7-001"}}"#;
    let plain = [("Content-Type", "application/json")];
    let r = server.send("POST", "/a2a", &plain, body);
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    let bad = [
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer axt_unknown"),
    ];
    assert_eq!(server.send("POST", "/a2a", &bad, body).status, 401);
    let gone = format!("Bearer {revoked}");
    let as_revoked = [
        ("Content-Type", "application/json"),
        ("Authorization", gone.as_str()),
    ];
    assert_eq!(server.send("POST", "/a2a", &as_revoked, body).status, 401);
    let person = format!("Bearer {human}");
    let as_person = [
        ("Content-Type", "application/json"),
        ("Authorization", person.as_str()),
    ];
    assert_eq!(server.send("POST", "/a2a", &as_person, body).status, 403);
    let card = server.get("/.well-known/agent-card.json", &[]);
    assert_eq!(card.status, 200);
    assert_eq!(card.json()["skills"][0]["id"], "clarify");
}

#[test]
fn an_a2a_client_asks_and_follows_the_answer() {
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);

    // The card as the SDK parsed it.
    let card = client.call(json!({"op": "card"}));
    let card = &card["card"];
    assert_eq!(card["skills"][0]["id"], "clarify", "{card}");
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/a2a", server.api_origin())
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");

    // SendMessage: a record in the ledger, asked as the token's agent.
    let task = client.task(json!({"op": "send", "text": "Redis or an in-process LRU?",
        "metadata": {"to": "architect", "issue": 7, "topic": "Cache layer"}}));
    assert_eq!(task["id"], "CLR-7-001", "{task}");
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING");
    let record = ledger_record(root, 7, "CLR-7-001");
    assert_eq!(record["from"], "engineer");
    assert_eq!(record["to"], "architect");
    assert_eq!(record["topic"], "Cache layer");
    assert_eq!(record["thread"][0]["body"], "Redis or an in-process LRU?");

    // Streaming: the task now, then the answer when the CLI writes it.
    client.send(json!({"op": "subscribe", "id": "CLR-7-001"}));
    let first = client.next_with("stream");
    assert_eq!(
        first["stream"]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{first}"
    );
    answer(root, "CLR-7-001", &["--body=Use Redis."]);
    let artifact = client.next_with("stream");
    assert_eq!(
        artifact["stream"]["artifactUpdate"]["artifact"]["parts"][0]["text"], "Use Redis.",
        "{artifact}"
    );
    let status = client.next_with("stream");
    assert_eq!(
        status["stream"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{status}"
    );
    assert_eq!(client.next_with("streamEnd")["streamEnd"], "CLR-7-001");

    // GetTask after the answer: completed, with the answer as the artifact.
    let done = client.task(json!({"op": "get", "id": "CLR-7-001"}));
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["artifacts"][0]["name"], "answer");
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], "Use Redis.");
}

#[test]
fn choices_questions_back_and_cancel() {
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let other = token(root, "--agent", "reviewer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);

    // A choice question: the value comes back with the artifact.
    let task = client.task(json!({"op": "send", "text": "Which cache?", "metadata": {
        "to": "architect", "issue": 8, "topic": "Cache", "answerKind": "choice",
        "options": [{"value": "redis", "label": "Redis"}, {"value": "lru", "label": "In-process LRU"}]}}));
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(ledger_record(root, 8, &id)["answerKind"], "choice");
    answer(root, &id, &["--value=lru"]);
    let done = client.task(json!({"op": "get", "id": id}));
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let art = &done["artifacts"][0];
    assert_eq!(art["parts"][0]["text"], "In-process LRU", "{art}");
    assert_eq!(art["parts"][1]["data"]["value"], "lru", "{art}");
    assert_eq!(art["metadata"]["value"], "lru", "{art}");

    // The target asks back: input-required with its question; the reply on the same task
    // answers it as the asker.
    let task = client.task(json!({"op": "send", "text": "Where does the cache live?",
        "metadata": {"to": "architect", "issue": 9, "topic": "Cache placement"}}));
    let id = task["id"].as_str().unwrap().to_owned();
    let back = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue=9",
            "--from=architect",
            "--to=engineer",
            "--topic=Re: Cache placement",
            "--question=Which region must it survive a restart in?",
            &format!("--asked-back-from={id}"),
        ],
    );
    assert_eq!(back.code, 0, "{back:#?}");
    let back_id = back.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = client.task(json!({"op": "get", "id": id}));
    assert_eq!(
        waiting["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{waiting}"
    );
    assert_eq!(
        waiting["status"]["message"]["parts"][0]["text"],
        "Which region must it survive a restart in?"
    );
    // The target cannot give the input the asker owes.
    let architect = token(root, "--agent", "architect");
    let mut target = Client::start(&server.api_origin(), &architect);
    let refused = target.call(json!({"op": "send", "text": "anywhere", "taskId": id}));
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or("")
            .contains("only the agent that asked"),
        "{refused}"
    );
    assert_eq!(ledger_record(root, 9, &back_id)["status"], "pending");
    let replied = client.task(json!({"op": "send", "text": "eu-west-1", "taskId": id}));
    assert_eq!(
        replied["status"]["state"], "TASK_STATE_WORKING",
        "{replied}"
    );
    let answered_back = ledger_record(root, 9, &back_id);
    assert_eq!(answered_back["status"], "answered");
    let reply = answered_back["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (reply["from"].as_str(), reply["body"].as_str()),
        (Some("engineer"), Some("eu-west-1"))
    );

    // Another agent cannot see the engineer's task.
    let mut stranger = Client::start(&server.api_origin(), &other);
    let hidden = stranger.call(json!({"op": "get", "id": id}));
    assert!(
        hidden["error"].as_str().unwrap_or("").contains("not found"),
        "{hidden}"
    );

    // CancelTask abandons; a second cancel is refused.
    let canceled = client.task(json!({"op": "cancel", "id": id}));
    assert_eq!(
        canceled["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    assert_eq!(ledger_record(root, 9, &id)["status"], "abandoned");
    let again = client.call(json!({"op": "cancel", "id": id}));
    assert!(again.get("error").is_some(), "{again}");
}

/// A message's metadata is `ask`'s input: a misspelt key is refused with the nearest known
/// one, and a `now` is refused (only the server's clock dates a write on a network door).
#[test]
fn metadata_takes_no_now_and_names_a_misspelt_key() {
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);
    for (metadata, expected) in [
        (
            json!({"to": "architect", "issue": 4, "topic": "Cache", "now": "2099-01-01T00:00:00Z"}),
            "`now` is not accepted here",
        ),
        (
            json!({"to": "architect", "issue": 4, "topic": "Cache", "blockng": false}),
            "unknown field `metadata.blockng`; did you mean `blocking`?",
        ),
    ] {
        let refused = client.call(json!({"op": "send", "text": "Redis?", "metadata": metadata}));
        let error = refused["error"].as_str().unwrap_or("").to_owned();
        assert!(error.contains(expected), "{refused}");
        assert!(error.contains("INVALID_INPUT"), "{refused}");
    }
    assert!(!ledger_path(root, 4).exists(), "nothing was asked");
    let task = client.task(json!({"op": "send", "text": "Redis?",
        "metadata": {"to": "architect", "issue": 4, "topic": "Cache", "blocking": false}}));
    assert_eq!(task["id"], "CLR-4-001", "{task}");
    let record = ledger_record(root, 4, "CLR-4-001");
    assert!(
        !record["thread"][0]["timestamp"]
            .as_str()
            .unwrap()
            .starts_with("2099"),
        "{record}"
    );
}

#[test]
fn a_streaming_send_follows_the_question_to_its_decision() {
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);
    client.send(json!({"op": "sendStream", "text": "Ship on Friday?",
        "metadata": {"to": "architect", "issue": 11.0, "topic": "Release", "answerKind": "confirm"}}));
    let first = client.next_with("stream");
    let task = &first["stream"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{first}");
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(ledger_record(root, 11, &id)["answerKind"], "confirm");
    // A person escalates, then decides: working with the reason, then completed.
    let out = json_in(
        root,
        &[
            "clarify",
            "escalate",
            &id,
            "--message=needs the release manager",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let escalated = client.next_with("stream");
    let status = &escalated["stream"]["statusUpdate"]["status"];
    assert_eq!(status["state"], "TASK_STATE_WORKING", "{escalated}");
    assert!(
        status["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("needs the release manager"),
        "{escalated}"
    );
    let out = json_in(
        root,
        &[
            "clarify",
            "resolve",
            &id,
            "--value=no",
            "-m",
            "Not this week.",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let artifact = client.next_with("stream");
    let art = &artifact["stream"]["artifactUpdate"]["artifact"];
    assert_eq!(art["name"], "decision", "{artifact}");
    assert_eq!(art["parts"][1]["data"]["value"], false, "{artifact}");
    let done = client.next_with("stream");
    assert_eq!(
        done["stream"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(client.next_with("streamEnd")["streamEnd"], "sendStream");
}

/// `tests/a2a/hub_client.mjs` (the official JS SDK, `@a2a-js/sdk`): one call, one JSON line.
fn js(server: &Server, token: &str, op: &str, arg: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/a2a/hub_client.mjs");
    let out = Command::new("node")
        .arg(script)
        .args([server.api_origin().as_str(), token, op, arg])
        .stdin(Stdio::null())
        .output()
        .expect("node runs (scripts/setup installs tests/a2a's @a2a-js/sdk)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_js_sdk_client_asks_and_reads_the_answer() {
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let sent = js(
        &server,
        &agent,
        "send",
        r#"{"text": "Redis or an in-process LRU?", "metadata": {"to": "architect", "issue": 42, "topic": "Cache layer"}}"#,
    );
    assert_eq!(sent["id"], "CLR-42-001", "{sent}");
    assert_eq!(sent["state"], "TASK_STATE_WORKING");
    assert_eq!(ledger_record(root, 42, "CLR-42-001")["from"], "engineer");
    answer(root, "CLR-42-001", &["--body=Use Redis."]);
    let got = js(&server, &agent, "get", "CLR-42-001");
    assert_eq!(got["state"], "TASK_STATE_COMPLETED", "{got}");
    assert_eq!(got["text"], "Use Redis.");
}

#[test]
fn route_true_has_the_hub_run_the_target() {
    let dir = workspace();
    let root = dir.path();
    // A program given as a path is inside the workspace (docs/protocol.md §31).
    let agents = common::install_agents(root);
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[agents.architect]\ncommand = [\"{agents}/plain\"]\nenv = {{ AGENT_ANSWER = \"Use Redis.\" }}\n"
        ),
    )
    .unwrap();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);
    let task = client.task(json!({"op": "send", "text": "Which cache?",
        "metadata": {"to": "architect", "issue": 12, "topic": "Cache", "route": true}}));
    let id = task["id"].as_str().unwrap().to_owned();
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let now = client.task(json!({"op": "get", "id": id}));
        if now["status"]["state"] == "TASK_STATE_COMPLETED" {
            assert_eq!(
                now["artifacts"][0]["parts"][0]["text"], "Use Redis.",
                "{now}"
            );
            break;
        }
        assert!(Instant::now() < until, "not routed: {now}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = ledger_record(root, 12, &id)["thread"][1].clone();
    assert_eq!(
        (answer["type"].as_str(), answer["from"].as_str()),
        (Some("answer"), Some("architect"))
    );
}

/// The error line's text with `id` taken out: what tells two refusals apart besides it.
fn without(v: &Value, id: &str) -> String {
    v["error"].as_str().unwrap_or_default().replace(id, "<id>")
}

#[test]
fn an_agent_sees_the_issues_it_takes_part_in_and_nothing_else() {
    // Issue 48, items 9 and 12: one rule on every door (an agent sees the records of the
    // issues it takes part in), and another agent's task reads as a missing one, word for word.
    let dir = workspace();
    let root = dir.path();
    let engineer = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &engineer);
    let mine = client.task(json!({"op": "send", "text": "Which cache?",
        "metadata": {"to": "architect", "issue": 5, "topic": "Cache"}}));
    assert_eq!(mine["id"], "CLR-5-001");
    // Another question of issue 5 (the engineer takes part in it), and one of issue 6 (no part).
    for (issue, from, to) in [
        (5, "architect", "product-manager"),
        (6, "architect", "product-manager"),
    ] {
        let out = json_in(
            root,
            &[
                "clarify",
                "ask",
                &format!("--issue={issue}"),
                &format!("--from={from}"),
                &format!("--to={to}"),
                "--topic=Scope",
                "--question=Which scope?",
            ],
        );
        assert_eq!(out.code, 0, "{out:#?}");
    }
    let same_issue = client.task(json!({"op": "get", "id": "CLR-5-002"}));
    assert_eq!(same_issue["metadata"]["from"], "architect", "{same_issue}");
    let hidden = client.call(json!({"op": "get", "id": "CLR-6-001"}));
    let missing = client.call(json!({"op": "get", "id": "CLR-6-002"}));
    assert!(
        hidden["error"].as_str().unwrap_or("").contains("not found"),
        "{hidden}"
    );
    assert_eq!(
        without(&hidden, "CLR-6-001"),
        without(&missing, "CLR-6-002")
    );
    let other_issue = client.call(json!({"op": "get", "id": "CLR-77-001"}));
    assert_eq!(
        without(&hidden, "CLR-6-001"),
        without(&other_issue, "CLR-77-001")
    );
    let cancel = client.call(json!({"op": "cancel", "id": "CLR-6-001"}));
    assert_eq!(
        without(&cancel, "CLR-6-001"),
        without(
            &client.call(json!({"op": "cancel", "id": "CLR-6-002"})),
            "CLR-6-002"
        )
    );
    assert_eq!(ledger_record(root, 6, "CLR-6-001")["status"], "pending");

    // The same on /mcp: the engineer's list holds issue 5 only; issue 6 is as if missing.
    let mut mcp = mcp_session::Session::open(&server, &engineer);
    let (_, listed) = mcp.call("clarify_list", json!({"all": true}));
    let ids: Vec<String> = listed.unwrap()["structuredContent"]["clarifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["CLR-5-001", "CLR-5-002"]);
    // Search follows the same rule: issue 6's "Which scope?" is not among the hits.
    let (_, found) = mcp.call("clarify_search", json!({"query": "which scope"}));
    let hits: Vec<String> = found.unwrap()["structuredContent"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(hits, ["CLR-5-002"]);
    let shown = |mcp: &mut mcp_session::Session, args: Value| {
        mcp.call("clarify_show", args).1.unwrap()["structuredContent"].clone()
    };
    let seen = shown(&mut mcp, json!({"id": "CLR-5-002"}));
    assert_eq!(seen["clarification"]["from"], "architect", "{seen}");
    let hidden = shown(&mut mcp, json!({"id": "CLR-6-001"}));
    let missing = shown(&mut mcp, json!({"id": "CLR-6-002"}));
    assert_eq!(hidden["code"], "NOT_FOUND", "{hidden}");
    assert_eq!(
        hidden["message"]
            .as_str()
            .unwrap()
            .replace("CLR-6-001", "<id>"),
        missing["message"]
            .as_str()
            .unwrap()
            .replace("CLR-6-002", "<id>")
    );
    let ledger = shown(&mut mcp, json!({"issue": 6}));
    let nothing = shown(&mut mcp, json!({"issue": 66}));
    assert_eq!(
        ledger["message"].as_str().unwrap().replace("#6 ", "#<n> "),
        nothing["message"]
            .as_str()
            .unwrap()
            .replace("#66 ", "#<n> ")
    );
    let (_, audit) = mcp.call("clarify_audit", json!({"id": "CLR-6-001"}));
    assert_eq!(audit.unwrap()["structuredContent"]["code"], "NOT_FOUND");
    let (_, wait) = mcp.call(
        "clarify_wait",
        json!({"id": "CLR-6-001", "timeoutSeconds": 1}),
    );
    assert_eq!(wait.unwrap()["structuredContent"]["code"], "NOT_FOUND");
    let read = json!({"jsonrpc": "2.0", "id": 70, "method": "resources/read",
        "params": {"uri": "agentx://issues/6"}});
    let r = mcp_session::post(&server, Some(&engineer), Some(&mcp.id), &read);
    let messages = mcp_session::messages(&r);
    let reply = messages.iter().find(|m| m["id"] == 70).unwrap();
    assert!(reply.get("error").is_some(), "{reply}");
    assert!(!r.body.contains("Which scope?"), "{}", r.body);
    let list = json!({"jsonrpc": "2.0", "id": 71, "method": "resources/list"});
    let r = mcp_session::post(&server, Some(&engineer), Some(&mcp.id), &list);
    assert!(
        r.body.contains("CLR-5-002") && !r.body.contains("CLR-6-001"),
        "{}",
        r.body
    );
}

#[test]
fn a_subscription_ends_when_its_token_is_revoked() {
    // Issue 48, item 11: an A2A subscription opened before the revocation still delivered the
    // answer.
    let dir = workspace();
    let root = dir.path();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);
    let task = client.task(json!({"op": "send", "text": "Which cache?",
        "metadata": {"to": "architect", "issue": 14, "topic": "Cache"}}));
    let id = task["id"].as_str().unwrap().to_owned();
    client.send(json!({"op": "subscribe", "id": id}));
    let first = client.next_with("stream");
    assert_eq!(first["stream"]["task"]["id"], id.as_str(), "{first}");
    assert_eq!(json_in(root, &["tokens", "revoke", "engineer"]).code, 0);
    answer(root, &id, &["--body=Use Redis."]);
    let end = client.next_with("streamEnd");
    assert_eq!(end["streamEnd"], id.as_str());
    let delivered: Vec<&Value> = client
        .held
        .iter()
        .filter(|v| v.get("stream").is_some())
        .collect();
    assert!(
        delivered.is_empty(),
        "delivered after the revocation: {delivered:?}"
    );
}

#[test]
fn routing_takes_turns_on_every_door() {
    // Issue 48, item 4: 20 A2A messages with `route: true` started 20 runners at once with
    // `[mcp] max_routes = 2`. One bound for every door: /a2a and /mcp share its turns.
    let dir = workspace();
    let root = dir.path();
    let trace = root.join("runs.log");
    let script = format!(
        "echo start >> {t}; sleep 0.3; echo end >> {t}; echo Redis.",
        t = trace.display()
    );
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[mcp]\nmax_routes = 2\n\n[agents.architect]\ncommand = [\"sh\", \"-c\", {script:?}]\nanswer = \"text\"\n"
        ),
    )
    .unwrap();
    let agent = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut client = Client::start(&server.api_origin(), &agent);
    let (a2a, mcp) = (20, 4);
    for n in 0..a2a {
        let task = client.task(json!({"op": "send", "text": format!("Redis for part {n}?"),
            "metadata": {"to": "architect", "issue": 30, "topic": format!("Part {n}"), "route": true}}));
        assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{task}");
    }
    let mut session = mcp_session::Session::open(&server, &agent);
    for n in 0..mcp {
        let (_, r) = session.call(
            "clarify_ask",
            json!({"issue": 31, "to": "architect", "topic": format!("Piece {n}"),
                   "question": format!("Redis for piece {n}?"), "route": true, "blocking": false}),
        );
        assert_eq!(r.unwrap()["isError"], false);
    }
    let ends = || {
        std::fs::read_to_string(&trace)
            .unwrap_or_default()
            .lines()
            .filter(|l| *l == "end")
            .count()
    };
    let until = Instant::now() + Duration::from_secs(60);
    while ends() < a2a + mcp {
        assert!(
            Instant::now() < until,
            "the routings did not finish: {}",
            ends()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (mut running, mut most) = (0i32, 0i32);
    for line in std::fs::read_to_string(&trace).unwrap().lines() {
        running += if line == "start" { 1 } else { -1 };
        most = most.max(running);
    }
    assert_eq!(
        most, 2,
        "at most [mcp] max_routes = 2 at once, and that many"
    );
    // Each was answered, in turn.
    for n in 1..=a2a {
        let id = format!("CLR-30-{n:03}");
        assert_eq!(ledger_record(root, 30, &id)["status"], "answered", "{id}");
    }
}

#[test]
fn an_ask_carries_what_other_issues_decided_that_the_asker_may_see() {
    // Issue 45: `related` on the A2A ask path too, in the task's metadata, narrowed to the
    // issues the asking agent takes part in (docs/protocol.md §36).
    let dir = workspace();
    let root = dir.path();
    let engineer = token(root, "--agent", "engineer");
    let architect = token(root, "--agent", "architect");
    let asked = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            "7",
            "--from",
            "engineer",
            "--to",
            "product-manager",
            "--topic",
            "Cache layer",
            "--question",
            "Redis or in-process?",
            "--field",
            "cache.layer",
        ],
    );
    assert_eq!(asked.code, 0, "{asked:#?}");
    let answered = json_in(
        root,
        &[
            "clarify",
            "answer",
            "CLR-7-001",
            "--from",
            "product-manager",
            "--body",
            "Redis.",
        ],
    );
    assert_eq!(answered.code, 0, "{answered:#?}");
    let resolved = json_in(
        root,
        &["clarify", "resolve", "CLR-7-001", "--from", "engineer"],
    );
    assert_eq!(resolved.code, 0, "{resolved:#?}");
    let server = Server::start(root, &["--no-worker"]);

    let mut client = Client::start(&server.api_origin(), &engineer);
    let task = client.task(
        json!({"op": "send", "text": "Redis or in-process for the cache?",
        "metadata": {"to": "architect", "issue": 8, "topic": "Cache", "field": "cache.layer"}}),
    );
    assert_eq!(task["id"], "CLR-8-001", "{task}");
    let related = &task["metadata"]["related"];
    assert_eq!(related[0]["id"], "CLR-7-001", "{task}");
    assert_eq!(related[0]["decision"]["text"], "Redis.", "{task}");
    assert_eq!(related[0]["decision"]["by"], "engineer", "{task}");
    // The architect took no part in issue 7: nothing of it reaches them.
    let mut other = Client::start(&server.api_origin(), &architect);
    let task = other.task(
        json!({"op": "send", "text": "Redis or in-process for the cache?",
        "metadata": {"to": "product-manager", "issue": 9, "topic": "Cache", "field": "cache.layer"}}),
    );
    assert_eq!(task["id"], "CLR-9-001", "{task}");
    assert_eq!(task["metadata"]["related"], json!([]), "{task}");
}
