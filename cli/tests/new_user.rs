//! What a new user trips over (docs/protocol.md): a runner that cannot start is a
//! configuration problem (`RUNNER_UNAVAILABLE`, nothing written), a question whose runner
//! failed can be sent back (`clarify reopen --route`), the MCP server says where it is,
//! typos in settings are pointed out, and a closed pipe ends a command quietly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;

use common::{agentx, assert_fails, json_in, root_arg, snapshot, write_config};
use serde_json::{json, Value};

/// `clarify ask` engineer → architect on issue 42 (the default feature workflow allows it).
fn ask(root: &Path) -> String {
    let out = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache layer",
            "--question=Redis or in-process?",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `preset = "claude"` where no `claude` is installed, and a script that is not executable:
/// `route` refuses with RUNNER_UNAVAILABLE (exit 3) naming the program and where it looked,
/// and writes nothing — no escalation, no run log, no lease.
#[test]
fn a_runner_that_cannot_start_writes_nothing() {
    let dir = common::workspace();
    let root = dir.path();
    let empty = tempfile::tempdir().unwrap();
    let id = ask(root);
    write_config(
        root,
        &format!(
            "[agents.architect]\npreset = \"claude\"\nenv = {{ PATH = {:?} }}\n",
            empty.path().display().to_string()
        ),
    );
    let before = snapshot(root);
    let out = json_in(root, &["clarify", "route", &id]);
    let v = assert_fails(&out, 3, "RUNNER_UNAVAILABLE");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`claude` was not found on PATH")
            && message.contains(&empty.path().display().to_string()),
        "{message}"
    );
    assert_eq!(snapshot(root), before, "route wrote something");

    let script = root.join("agent.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    write_config(
        root,
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"./agent.sh\"]\n",
    );
    let before = snapshot(root);
    let out = json_in(root, &["clarify", "route", &id]);
    let v = assert_fails(&out, 3, "RUNNER_UNAVAILABLE");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("agent.sh is not executable"),
        "{v}"
    );
    assert_eq!(snapshot(root), before, "route wrote something");
    // The question is still the architect's, pending.
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["status"], "pending");
}

/// A runner that failed escalated the question; once it is fixed, a human sends it back with
/// `clarify reopen --route` and the agent answers. Only a human may reopen.
#[test]
fn reopen_route_sends_a_failed_question_back() {
    let dir = common::workspace();
    let root = dir.path();
    let agents = common::install_agents(root);
    let runner = |mode: &str| {
        format!(
            "[agents.architect]\npreset = \"claude\"\ncommand = [\"{agents}/claude\"]\nenv = {{ AGENT_MODE = {mode:?}, AGENT_ANSWER = \"Redis.\" }}\n"
        )
    };
    write_config(root, &runner("crash"));
    let id = ask(root);
    let failed = json_in(root, &["clarify", "route", &id]);
    assert_eq!(failed.code, 9, "{failed:#?}");
    assert_eq!(failed.json()["clarification"]["status"], "escalated");

    write_config(root, &runner("answer"));
    let by_agent = json_in(
        root,
        &["clarify", "reopen", &id, "--from=engineer", "--route"],
    );
    assert_fails(&by_agent, 4, "NOT_PARTICIPANT");
    let reopened = json_in(
        root,
        &[
            "clarify",
            "reopen",
            &id,
            "-m",
            "The runner is fixed.",
            "--route",
        ],
    );
    assert_eq!(reopened.code, 0, "{reopened:#?}");
    let v = reopened.json();
    assert_eq!(v["outcome"], "answered", "{v}");
    let thread = v["clarification"]["thread"].as_array().unwrap();
    let kinds: Vec<&str> = thread.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["question", "escalation", "reopen", "answer"], "{v}");
    assert_eq!(thread[2]["from"], "human");
    assert_eq!(thread[2]["body"], "The runner is fixed.");
    assert_eq!(thread[3]["body"], "Redis.");
}

/// Outside any workspace `agentx mcp` refuses to start (exit 2), naming the directories it
/// searched, before any protocol output.
#[test]
fn mcp_outside_a_workspace_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("project/src");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = agentx()
        .current_dir(&cwd)
        .args(["mcp", "--agent", "engineer"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:#?}");
    assert!(out.stdout.is_empty(), "protocol output: {out:#?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for searched in [cwd.as_path(), &dir.path().join("project"), dir.path()] {
        assert!(
            stderr.contains(&searched.display().to_string()),
            "{searched:?} not named: {stderr}"
        );
    }
    // Its help offers only what it reads.
    let help = agentx().args(["mcp", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--agent") && help.contains("--root"),
        "{help}"
    );
    for ignored in ["--now", "--json", "--color"] {
        assert!(!help.contains(ignored), "{ignored} offered: {help}");
    }
}

/// `agentx mcp` in a workspace with the agent from `AGENTX_AGENT`: one session that asks a
/// question, and what it said on stderr.
fn mcp_session(root: &Path, agent: &str) -> (Value, String) {
    let mut child = agentx()
        .current_dir(root)
        .args(["mcp", "--issue", "42"])
        .env("AGENTX_AGENT", agent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        writeln!(
            input,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        input.flush().unwrap();
        if id == 1 {
            writeln!(
                input,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .unwrap();
            input.flush().unwrap();
        }
        loop {
            let mut line = String::new();
            assert!(
                output.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    };
    request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "new-user-test", "version": "1"}}),
    );
    let asked = request(
        2,
        "tools/call",
        json!({"name": "clarify_ask", "arguments": {"to": "architect", "topic": "Cache", "question": "Redis?"}}),
    );
    drop(input);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (asked["structuredContent"].clone(), stderr)
}

/// `--agent` defaults to `AGENTX_AGENT`; the server logs its root and agent, and warns when the
/// agent has no step in any workflow (a typo).
#[test]
fn mcp_takes_its_agent_from_agentx_agent() {
    let dir = common::workspace();
    let root = dir.path();
    let (asked, stderr) = mcp_session(root, "engineer");
    assert_eq!(asked["ok"], true, "{asked}");
    assert_eq!(asked["clarification"]["from"], "engineer", "{asked}");
    assert!(
        stderr.contains("serving agent 'engineer'") && stderr.contains(&root.display().to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");

    let (_, stderr) = mcp_session(root, "enginer");
    assert!(
        stderr.contains("warning: agent 'enginer' has no step in any workflow"),
        "{stderr}"
    );
}

/// An agent's token names the agent over HTTP as `--agent` does on stdio: minting one for an
/// agent no workflow step runs warns the same way (issue 49).
#[test]
fn a_token_for_an_agent_with_no_step_warns_as_stdio_does() {
    let dir = common::workspace();
    let root = dir.path();
    let good = common::json_in(root, &["tokens", "new", "--agent", "engineer"]);
    assert_eq!(good.code, 0, "{good:#?}");
    assert!(!good.stderr.contains("warning"), "{}", good.stderr);
    assert_eq!(good.json()["warnings"], serde_json::json!([]));
    let typo = common::json_in(root, &["tokens", "new", "--agent", "enginer"]);
    assert_eq!(typo.code, 0, "still minted: {typo:#?}");
    assert!(
        typo.stderr
            .contains("warning: agent 'enginer' has no step in any workflow"),
        "{}",
        typo.stderr
    );
    let said = typo.json()["warnings"][0].as_str().unwrap_or("").to_owned();
    assert!(said.contains("agents with a step:"), "{said}");
    let (_, stdio) = mcp_session(root, "enginer");
    assert!(stdio.contains(&format!("warning: {said}")), "{stdio}");
}

/// `clarify_sla = 60` in a workflow step and `max_retry` in `[clarify]`: each is a warning on
/// stderr naming the file, the line and the nearest known key; the command still runs.
#[test]
fn settings_typos_are_warned_with_file_and_line() {
    let dir = common::workspace();
    let root = dir.path();
    write_config(
        root,
        "[clarify]\nmax_retry = 2\n\n[tooling]\nmax_retry = 3\n",
    );
    std::fs::write(
        root.join(".agentx/workflows/feature.toml"),
        "[[steps]]\nid = \"implement\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_sla = 60\nowner = \"team-a\"\n",
    )
    .unwrap();
    let out = json_in(root, &["ready"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let config = root.join(".agentx/config.toml").display().to_string();
    let workflow = root
        .join(".agentx/workflows/feature.toml")
        .display()
        .to_string();
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            format!("warning: {config}:2:1: unknown [clarify] max_retry is ignored; did you mean `max_retries`?"),
            format!("warning: {workflow}:5:1: unknown step key clarify_sla is ignored; did you mean `clarify_sla_minutes`?"),
        ],
        "{out:#?}"
    );
}

/// A settings file over the 1 MiB cap is the settings' fault (issue 49): `CONFIG_INVALID`
/// naming the file and the cap, not an I/O error about "a ledger's" limit.
#[test]
fn a_workflow_over_the_cap_names_the_file_and_the_cap() {
    let dir = common::workspace();
    let root = dir.path();
    let workflows = root.join(".agentx/workflows");
    for entry in std::fs::read_dir(&workflows).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read(&path).unwrap();
        text.extend(std::iter::repeat_n(b'#', 1 << 20));
        std::fs::write(&path, text).unwrap();
    }
    let out = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            "1",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Cache",
            "--question",
            "Which?",
        ],
    );
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains(".agentx/workflows/"), "{message}");
    assert!(
        message.contains("over the 1 MiB (1048576 bytes)"),
        "{message}"
    );
    assert!(!message.contains("ledger"), "{message}");
}

/// Output to a closed pipe ends the command quietly: no panic, no error on stderr.
#[test]
fn a_closed_pipe_is_not_a_crash() {
    let dir = common::workspace();
    let root = dir.path();
    // A large workspace: 3,000 records, far more than a pipe buffers.
    let records: Vec<Value> = (1..=3000)
        .map(|n| {
            json!({
                "id": format!("CLR-42-{n:03}"), "from": "engineer", "to": "architect",
                "topic": format!("Topic {n} with enough words to make the line long"),
                "blocking": false, "status": "resolved", "round": 1, "maxRounds": 5,
                "created": "2026-11-22T10:00:00.000Z", "resolvedAt": "2026-11-22T10:05:00.000Z",
                "thread": [
                    {"round": 1, "from": "engineer", "type": "question", "body": "Which one?", "timestamp": "2026-11-22T10:00:00.000Z"},
                    {"round": 1, "from": "architect", "type": "answer", "body": "This one.", "timestamp": "2026-11-22T10:01:00.000Z"},
                    {"round": 1, "from": "engineer", "type": "resolution", "body": "Thanks.", "timestamp": "2026-11-22T10:05:00.000Z"}
                ]
            })
        })
        .collect();
    std::fs::write(
        root.join(".agentx/state/clarifications/issue-42.json"),
        serde_json::to_string_pretty(&json!({"issueNumber": 42, "clarifications": records}))
            .unwrap(),
    )
    .unwrap();
    let closed = |args: &[&str]| {
        let mut child = agentx()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe, as `| head -1` does.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!first.is_empty(), "{args:?}: no first line");
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        assert!(
            out.status.code().is_some_and(|c| c == 0),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    };
    closed(&["completions", "bash"]);
    closed(&[&root_arg(root), "clarify", "list", "--all"]);
    closed(&[&root_arg(root), "--json", "clarify", "list", "--all"]);
}
