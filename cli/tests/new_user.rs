//! What a new user trips over (docs/protocol.md): a runner that cannot start is a
//! configuration problem (`RUNNER_UNAVAILABLE`, nothing written), a question whose runner
//! failed can be sent back (`clarify reopen --route`), the MCP server says where it is,
//! typos in settings are pointed out, and a closed pipe ends a command quietly.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_fails, json_in, snapshot, write_config};

/// The example agents' directory.
fn agents() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/agents")
}

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
    let runner = |mode: &str| {
        format!(
            "[agents.architect]\npreset = \"claude\"\ncommand = [{:?}]\nenv = {{ AGENT_MODE = {mode:?}, AGENT_ANSWER = \"Redis.\" }}\n",
            agents().join("claude").display().to_string()
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
