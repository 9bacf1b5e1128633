//! Routing with real processes (docs/protocol.md §14.2): the `agentx` binary runs the example agent CLIs
//! of `examples/agents/` (each preset's real command line, only the program path replaced)
//! and records what they say — answers, questions asked back, stops, and every way a process
//! can fail. Then leases across processes: concurrent `route --all`, a router killed mid-run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{agentx, json_in, read_ledger, root_arg, Out};
use serde_json::Value;

const CACHE_ANSWER: &str = "Redis, with LRU eviction and a 15-minute TTL (ADR-7).";

/// A workflow where the engineer may ask every agent the tests route to, and the architect
/// may ask the product manager (where its questions asked back go).
const WORKFLOW: &str = "[[steps]]\nid = \"build\"\nagent = \"engineer\"\ncan_clarify = [\"architect\", \"product-manager\", \"ux-designer\", \"reviewer\", \"tester\", \"data-scientist\"]\nclarify_max_rounds = 3\nclarify_sla_minutes = 60\n\n[[steps]]\nid = \"design\"\nagent = \"architect\"\ncan_clarify = [\"product-manager\"]\n";

/// An initialised workspace whose settings are `[clarify] default_workflow = "routing"` and
/// `tables` (runner tables; `AGENTS` in them is the example agents' directory, copied into
/// the workspace: a program given as a path is inside it, docs/protocol.md §31).
fn workspace(tables: &str) -> tempfile::TempDir {
    let dir = common::workspace();
    std::fs::write(dir.path().join(".agentx/workflows/routing.toml"), WORKFLOW).unwrap();
    set_runners(dir.path(), tables);
    dir
}

fn set_runners(root: &Path, tables: &str) {
    let tables = tables.replace("AGENTS", common::install_agents(root));
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[clarify]\ndefault_workflow = \"routing\"\n\n{tables}"),
    )
    .unwrap();
}

/// `clarify ask` engineer → `to` on issue 42; returns the new id.
fn ask(root: &Path, to: &str, topic: &str) -> String {
    let out = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            &format!("--to={to}"),
            &format!("--topic={topic}"),
            "--question=What do you decide?",
            // Tests ask this one question of several topics: each is a record of its own.
            "--ask-again",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn route(root: &Path, id: &str) -> Out {
    json_in(root, &["clarify", "route", id])
}

/// The record `id` of issue 42 as stored.
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
    record["thread"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap()
}

fn lease_files(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(".agentx/state/clarifications"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lease"))
        .collect()
}

fn run_logs(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(".agentx/state/runs"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn pid_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with(['Z', 'X'])
    })
}

/// Polls `done` every 20 ms for up to `limit`.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Every preset answers through its CLI, with the answer where its CLI puts it.
#[test]
fn every_preset_answers_through_its_cli() {
    let presets = [
        (
            "architect",
            "preset = \"claude\"\ncommand = [\"AGENTS/claude\"]",
        ),
        (
            "product-manager",
            "preset = \"codex\"\ncommand = [\"AGENTS/codex\"]",
        ),
        (
            "ux-designer",
            "preset = \"gemini\"\ncommand = [\"AGENTS/gemini\"]",
        ),
        (
            "reviewer",
            "preset = \"copilot\"\ncommand = [\"AGENTS/copilot\"]",
        ),
        (
            "tester",
            "preset = \"cursor\"\ncommand = [\"AGENTS/cursor-agent\"]",
        ),
        (
            "data-scientist",
            "command = [\"AGENTS/plain\"]\nanswer = \"text\"",
        ),
    ];
    let tables: String = presets
        .iter()
        .map(|(agent, table)| format!("[agents.{agent}]\n{table}\n\n"))
        .collect();
    let dir = workspace(&tables);
    let root = dir.path();
    for (agent, _) in presets {
        let id = ask(root, agent, "Cache layer");
        let out = route(root, &id);
        assert_eq!(out.code, 0, "{agent}: {out:#?}");
        let v = out.json();
        assert_eq!(v["outcome"], "answered", "{agent}: {v}");
        assert_eq!(v["run"]["agent"], agent);
        assert_eq!(v["run"]["exit"], 0);
        let answer = last_entry(&record(root, &id));
        assert_eq!(answer["type"], "answer");
        assert_eq!(answer["from"], agent);
        assert_eq!(answer["body"], CACHE_ANSWER, "{agent}");
        let events: Vec<&str> = v["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            events.get(..2),
            Some(&["clarification-routed", "clarification-answered"][..]),
            "{agent}"
        );
        let log: Value = serde_json::from_slice(
            &std::fs::read(root.join(v["run"]["log"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(log["id"], id.as_str());
        assert_eq!(log["outcome"], "answered");
        assert!(log["command"][0].as_str().unwrap().contains("agents/"));
    }
    assert!(lease_files(root).is_empty());
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
}

/// Each preset's own failure output is an agent error naming its message: exit 9, the record
/// escalated by agent-x.
#[test]
fn each_preset_reports_its_failure() {
    let cases = [
        ("architect", "claude", "claude", "API Error: 529"),
        (
            "product-manager",
            "codex",
            "codex",
            "stream disconnected before completion",
        ),
        (
            "ux-designer",
            "gemini",
            "gemini",
            "GEMINI_API_KEY environment variable not found.",
        ),
        (
            "reviewer",
            "copilot",
            "copilot",
            "exit status 1: Error: authentication failed",
        ),
        (
            "tester",
            "cursor",
            "cursor-agent",
            "exit status 1: Error: authentication failed",
        ),
    ];
    let tables: String = cases
        .iter()
        .map(|(agent, preset, script, _)| {
            format!("[agents.{agent}]\npreset = \"{preset}\"\ncommand = [\"AGENTS/{script}\"]\nenv = {{ AGENT_MODE = \"error\" }}\n\n")
        })
        .collect();
    let dir = workspace(&tables);
    let root = dir.path();
    for (agent, _, _, says) in cases {
        let id = ask(root, agent, "Export scope");
        let out = route(root, &id);
        assert_eq!(out.code, 9, "{agent}: {out:#?}");
        let v = out.json();
        assert_eq!(v["error"]["code"], "AGENT_ERROR");
        assert_eq!(v["outcome"], "escalated");
        assert_eq!(v["clarification"]["status"], "escalated");
        let entry = last_entry(&record(root, &id));
        assert_eq!(entry["type"], "escalation");
        assert_eq!(entry["from"], "agent-x");
        let body = entry["body"].as_str().unwrap();
        assert!(body.starts_with("agent error: "), "{agent}: {body}");
        assert!(body.contains(says), "{agent}: {body}");
        let kinds: Vec<&str> = v["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds.get(..3),
            Some(
                &[
                    "clarification-routed",
                    "clarification-route-failed",
                    "clarification-escalated"
                ][..]
            ),
            "{agent}"
        );
    }
}

/// What a process can do wrong, each an agent error with its cause; nothing is recorded as
/// an answer.
#[test]
fn failing_processes_escalate_with_their_cause() {
    let modes = [
        (
            "crash",
            "exit status 1: fatal: the agent crashed while reading the repository",
        ),
        ("signal", "killed by signal 15 (SIGTERM)"),
        (
            "silent",
            "no output (expected a JSON document with the answer at /result)",
        ),
        ("empty", "empty answer"),
        (
            "chatty",
            "its output exceeded the capture limit and was cut, so the answer cannot be trusted",
        ),
    ];
    let tables: String = modes
        .iter()
        .map(|(mode, _)| {
            format!("[agents.{mode}-agent]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\nenv = {{ AGENT_MODE = \"{mode}\" }}\n\n")
        })
        .collect();
    let dir = workspace(&tables);
    let root = dir.path();
    // The agents' names are not in the workflow: allow them through the default workflow.
    let names: Vec<String> = modes
        .iter()
        .map(|(m, _)| format!("\"{m}-agent\""))
        .collect();
    std::fs::write(
        root.join(".agentx/workflows/routing.toml"),
        format!(
            "[[steps]]\nid = \"build\"\nagent = \"engineer\"\ncan_clarify = [{}]\n",
            names.join(", ")
        ),
    )
    .unwrap();
    for (mode, cause) in modes {
        let id = ask(root, &format!("{mode}-agent"), "Cache layer");
        let out = route(root, &id);
        assert_eq!(out.code, 9, "{mode}: {out:#?}");
        let v = out.json();
        assert_eq!(v["run"]["interpretation"]["cause"], cause, "{mode}");
        let entry = last_entry(&record(root, &id));
        assert_eq!(entry["body"], format!("agent error: {cause}"), "{mode}");
        let thread = record(root, &id)["thread"].as_array().unwrap().clone();
        assert!(
            thread.iter().all(|e| e["type"] != "answer"),
            "{mode}: {thread:?}"
        );
    }
    // The chatty run's log keeps 1 MiB of each stream, not 5.
    let logs = run_logs(root);
    let chatty = logs.iter().find(|l| l.starts_with("CLR-42-005")).unwrap();
    let log: Value = serde_json::from_slice(
        &std::fs::read(root.join(".agentx/state/runs").join(chatty)).unwrap(),
    )
    .unwrap();
    assert_eq!(log["stdoutTruncated"], true);
    assert!(log["stdout"].as_str().unwrap().len() <= 1 << 20);
    assert!(log["stderr"].as_str().unwrap().len() <= 1 << 20);
}

/// A slow agent is killed at its timeout; a hanging one with children and a grandchild too,
/// its whole group with it.
#[test]
fn the_timeout_kills_the_whole_group() {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let tables = format!(
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\ntimeout_seconds = 1\nenv = {{ AGENT_MODE = \"slow\", AGENT_SLEEP = \"30\" }}\n\n[agents.product-manager]\npreset = \"codex\"\ncommand = [\"AGENTS/codex\"]\ntimeout_seconds = 1\nenv = {{ AGENT_MODE = \"hang\", AGENT_PIDFILE = {:?} }}\n",
        pids.display().to_string()
    );
    let dir = workspace(&tables);
    let root = dir.path();
    for agent in ["architect", "product-manager"] {
        let id = ask(root, agent, "Cache layer");
        let started = Instant::now();
        let out = route(root, &id);
        let took = started.elapsed();
        assert_eq!(out.code, 9, "{agent}: {out:#?}");
        let v = out.json();
        assert_eq!(
            v["run"]["interpretation"]["cause"],
            "timed out; its process group was killed"
        );
        assert_eq!(v["run"]["timedOut"], true);
        assert!(took < Duration::from_secs(10), "{agent} took {took:?}");
    }
    let noted: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert!(noted.len() >= 4, "the hang mode notes 4 pids: {noted:?}");
    assert!(
        wait_until(Duration::from_secs(2), || noted
            .iter()
            .all(|p| !pid_alive(*p))),
        "still alive: {:?}",
        noted.iter().filter(|p| pid_alive(**p)).collect::<Vec<_>>()
    );
}

/// Asking back creates the counter-question (linked by `askedBack`), stopping escalates with
/// the blocker, and an answer in a fenced JSON block after chatter is found.
#[test]
fn asked_back_stopped_and_fenced() {
    let dir = workspace(
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\nenv = { AGENT_MODE = \"ask\", AGENT_ASK_TO = \"product-manager\" }\n\n\
         [agents.tester]\npreset = \"cursor\"\ncommand = [\"AGENTS/cursor-agent\"]\nenv = { AGENT_MODE = \"stop\" }\n\n\
         [agents.data-scientist]\ncommand = [\"AGENTS/plain\"]\nanswer = \"json:/answer\"\nenv = { AGENT_MODE = \"fenced\" }\n",
    );
    let root = dir.path();
    let asked = ask(root, "architect", "Cache layer");
    let out = route(root, &asked);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["outcome"], "asked-back");
    assert_eq!(v["clarification"]["status"], "pending");
    let back = &v["askedBack"];
    assert_eq!(back["from"], "architect");
    assert_eq!(back["to"], "product-manager");
    assert_eq!(back["topic"], "Re: Cache layer");
    assert_eq!(back["askedBack"], asked.as_str());
    assert_eq!(
        back["thread"][0]["body"],
        "1. Which environments must this survive a restart in?\n2. Is a managed service acceptable, or must it run in-process?"
    );
    // The pair is one wait: no deadlock, and route --all leaves the original alone.
    let graph = json_in(root, &["clarify", "graph", "--issue=42"]).json();
    assert_eq!(graph["graphs"][0]["cycles"], Value::Array(vec![]));
    let all = json_in(root, &["clarify", "route", "--all"]).json();
    assert_eq!(all["skipped"][0]["id"], asked.as_str());
    assert_eq!(
        all["skipped"][0]["reason"],
        "waits on the question it asked back"
    );

    let stopped = ask(root, "tester", "Test environment");
    let v = route(root, &stopped).json();
    assert_eq!(v["outcome"], "escalated");
    assert_eq!(v["ok"], true, "a stop is not an agent error");
    assert_eq!(
        last_entry(&record(root, &stopped))["body"],
        "agent stopped: missing_access: the architecture decision records are not readable from this workspace"
    );

    let fenced = ask(root, "data-scientist", "Cache layer");
    let v = route(root, &fenced).json();
    assert_eq!(v["outcome"], "answered");
    assert_eq!(last_entry(&record(root, &fenced))["body"], CACHE_ANSWER);
}

/// An agent whose record someone else answers while it runs: nothing written, `superseded`.
#[test]
fn a_record_answered_meanwhile_is_superseded() {
    let dir = common::workspace();
    let root = dir.path();
    // Inside the workspace: a program given as a path is (docs/protocol.md §31).
    let script = root.join("answers-itself");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\n\"{}\" --root \"$ROOT\" clarify answer CLR-42-001 --from architect --body 'A human answered first.' >/dev/null\necho 'The agent answer.'\n",
            common::BIN
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[agents.architect]\ncommand = [\"./answers-itself\"]\nenv = {{ ROOT = {:?} }}\n",
            root.display().to_string()
        ),
    )
    .unwrap();
    let id = ask(root, "architect", "Cache layer");
    let out = route(root, &id);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["outcome"], "superseded");
    let thread = record(root, &id)["thread"].as_array().unwrap().clone();
    let answers: Vec<&Value> = thread.iter().filter(|e| e["type"] == "answer").collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["body"], "A human answered first.");
    assert!(lease_files(root).is_empty());
}

/// Spawns `agentx --root <root> --json clarify route <args…>` without waiting.
fn spawn_route(root: &Path, args: &[&str]) -> Child {
    agentx()
        .arg(root_arg(root))
        .arg("--json")
        .args(["clarify", "route"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A live lease: a second `route <id>` is ROUTING_IN_PROGRESS (exit 7), `route --all` skips
/// the record silently; the lease is gone when the first router is done.
#[test]
fn a_live_lease_turns_other_routers_away() {
    let dir = workspace(
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\nenv = { AGENT_MODE = \"slow\", AGENT_SLEEP = \"2\" }\n",
    );
    let root = dir.path();
    let id = ask(root, "architect", "Cache layer");
    let first = spawn_route(root, &[&id]);
    assert!(wait_until(Duration::from_secs(10), || !lease_files(root).is_empty()));
    let second = route(root, &id);
    assert_eq!(second.code, 7, "{second:#?}");
    assert_eq!(second.code_str(), "ROUTING_IN_PROGRESS");
    let all = json_in(root, &["clarify", "route", "--all"]);
    assert_eq!(all.code, 0, "{all:#?}");
    let all = all.json();
    assert_eq!(all["routed"], Value::Array(vec![]));
    assert_eq!(all["skipped"][0]["id"], id.as_str());
    let done = Out::from_output(&first.wait_with_output().unwrap());
    assert_eq!(done.code, 0, "{done:#?}");
    assert_eq!(done.json()["outcome"], "answered");
    assert!(lease_files(root).is_empty());
    assert_eq!(run_logs(root).len(), 1, "the record ran once");
}

/// docs/protocol.md §14.2's concurrency test: `route --all` from 4 processes at once over 50 pending
/// records — each answered exactly once, no lease left behind, `verify` clean.
#[test]
fn four_routers_answer_fifty_records_once_each() {
    let dir = workspace(
        "[agents.default]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\nenv = { AGENT_MODE = \"slow\", AGENT_SLEEP = \"0.05\" }\n",
    );
    let root = dir.path();
    let agents = [
        "architect",
        "product-manager",
        "ux-designer",
        "reviewer",
        "tester",
    ];
    let mut ids = Vec::new();
    for issue in 1..=5 {
        for (n, agent) in agents.iter().cycle().take(10).enumerate() {
            let out = json_in(
                root,
                &[
                    "clarify",
                    "ask",
                    &format!("--issue={issue}"),
                    "--from=engineer",
                    &format!("--to={agent}"),
                    &format!("--topic=Cache layer {n}"),
                    "--question=Which?",
                    "--ask-again",
                ],
            );
            assert_eq!(out.code, 0, "{out:#?}");
            ids.push(
                out.json()["clarification"]["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    assert_eq!(ids.len(), 50);
    let started = Instant::now();
    let routers: Vec<Child> = (0..4)
        .map(|_| spawn_route(root, &["--all", "--jobs", "2"]))
        .collect();
    let mut routed = 0;
    for r in routers {
        let out = Out::from_output(&r.wait_with_output().unwrap());
        assert_eq!(out.code, 0, "{out:#?}");
        let v = out.json();
        assert_eq!(v["errors"], Value::Array(vec![]), "{v}");
        routed += v["routed"].as_array().unwrap().len();
        for r in v["routed"].as_array().unwrap() {
            assert_eq!(r["outcome"], "answered", "{r}");
        }
    }
    println!("4 routers over 50 records: {:?}", started.elapsed());
    assert_eq!(routed, 50, "each record routed by exactly one router");
    for issue in 1..=5u32 {
        for r in read_ledger(root, issue)["clarifications"]
            .as_array()
            .unwrap()
        {
            let answers = r["thread"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["type"] == "answer")
                .count();
            assert_eq!(answers, 1, "{}", r["id"]);
            assert_eq!(r["status"], "answered");
        }
    }
    assert_eq!(run_logs(root).len(), 50, "one run per record");
    assert!(lease_files(root).is_empty(), "{:?}", lease_files(root));
    let verify = json_in(root, &["clarify", "verify"]);
    assert_eq!(verify.code, 0, "{verify:#?}");
    assert_eq!(verify.json()["problems"], Value::Array(vec![]));
}

/// A router SIGKILLed while its agent runs: the agent dies with it, the lease stays behind.
/// The next `route --all` breaks it (its holder is dead) and routes the record again. A lease
/// from another host cannot be judged by its pid: it holds until its expiry.
#[test]
fn a_killed_router_leaves_a_lease_that_dies_with_it_or_expires() {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let slow = format!(
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\ntimeout_seconds = 1\nenv = {{ AGENT_MODE = \"slow\", AGENT_SLEEP = \"30\", AGENT_PIDFILE = {:?} }}\n",
        pids.display().to_string()
    );
    let fast = "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\ntimeout_seconds = 1\n";
    let dir = workspace(&slow);
    let root = dir.path();
    let id = ask(root, "architect", "Cache layer");
    let lease = root.join(format!(".agentx/state/clarifications/{id}.lease"));

    let mut router = spawn_route(root, &[&id]);
    assert!(wait_until(Duration::from_secs(10), || pids.exists() && lease.exists()));
    router.kill().unwrap();
    router.wait().unwrap();
    let agent: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    // The agent itself dies with its router (PR_SET_PDEATHSIG); helpers it started are out of
    // the dead router's reach and end on their own (docs/decisions.md "Routing").
    let leader = agent[0];
    assert!(
        wait_until(Duration::from_secs(5), || !pid_alive(leader)),
        "the agent outlived its router"
    );
    for helper in &agent[1..] {
        // Tidy up the slow mode's `sleep 30`.
        let _ = std::process::Command::new("kill")
            .arg(helper.to_string())
            .status();
    }
    assert!(lease.exists(), "a killed router cannot release its lease");
    assert_eq!(record(root, &id)["status"], "pending");

    // Held by a dead process on this host: broken at once.
    set_runners(root, fast);
    let again = json_in(root, &["clarify", "route", "--all"]);
    assert_eq!(again.code, 0, "{again:#?}");
    assert_eq!(again.json()["routed"][0]["outcome"], "answered");
    assert!(!lease.exists());

    // A lease of a router on another host: live until it expires.
    let second = ask(root, "architect", "Cache layer");
    let lease = root.join(format!(".agentx/state/clarifications/{second}.lease"));
    let expires = common::T0.max(
        i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap(),
    ) + 1500;
    std::fs::write(
        &lease,
        serde_json::json!({"pid": 1, "hostname": "elsewhere.example", "id": second, "taken": expires - 31_000, "expires": expires}).to_string(),
    )
    .unwrap();
    let held = route(root, &second);
    assert_eq!(held.code, 7, "{held:#?}");
    assert!(held.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("elsewhere.example"));
    let skipped = json_in(root, &["clarify", "route", "--all"]).json();
    assert_eq!(skipped["routed"], Value::Array(vec![]));
    std::thread::sleep(Duration::from_millis(1600));
    let expired = json_in(root, &["clarify", "route", "--all"]).json();
    assert_eq!(expired["routed"][0]["id"], second.as_str());
    assert_eq!(expired["routed"][0]["outcome"], "answered");
    assert!(lease_files(root).is_empty());
}

/// `ask --route --wait` answers before it returns; `ask --route` returns at once and the
/// background router answers; a target without a runner is refused before anything is asked.
#[test]
fn ask_route_with_and_without_wait() {
    let dir = workspace("[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\n");
    let root = dir.path();
    let ask_route = |extra: &[&str], to: &str| {
        let mut args = vec![
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to",
            to,
            "--topic=Cache layer",
            "--question=Which cache?",
            "--route",
            "--ask-again",
        ];
        args.extend_from_slice(extra);
        json_in(root, &args)
    };
    let waited = ask_route(&["--wait"], "architect");
    assert_eq!(waited.code, 0, "{waited:#?}");
    let v = waited.json();
    assert_eq!(v["outcome"], "answered");
    assert_eq!(v["clarification"]["thread"][1]["body"], CACHE_ANSWER);

    let background = ask_route(&[], "architect");
    assert_eq!(background.code, 0, "{background:#?}");
    let v = background.json();
    assert_eq!(v["clarification"]["status"], "pending");
    assert_eq!(v["routing"]["background"], true);
    let id = v["clarification"]["id"].as_str().unwrap().to_owned();
    assert!(
        wait_until(Duration::from_secs(20), || record(root, &id)["status"]
            == "answered"),
        "the background routing did not answer"
    );

    let refused = ask_route(&[], "product-manager");
    assert_eq!(refused.code, 3, "{refused:#?}");
    assert_eq!(refused.code_str(), "NO_RUNNER");
    let records = read_ledger(root, 42)["clarifications"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(records, 2, "nothing asked");
}

/// `monitor --route` routes what it retried.
#[test]
fn monitor_route_routes_the_retried_records() {
    let dir = workspace("[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\n");
    let root = dir.path();
    let t0 = common::T0;
    common::ask_blocking(root, t0, 42, "architect", "Cache layer");
    let late = t0 + 61 * common::MINUTE;
    let plain = common::json_at(root, late, &["clarify", "monitor", "--dry-run"]).json();
    assert_eq!(plain["report"]["retried"][0], "CLR-42-001");
    assert!(plain.get("routed").is_none());
    let out = common::json_at(root, late, &["clarify", "monitor", "--route"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["report"]["retried"][0], "CLR-42-001");
    assert_eq!(v["routed"]["routed"][0]["outcome"], "answered");
    assert_eq!(record(root, "CLR-42-001")["status"], "answered");
}

/// The run log names `env` entries but never their values; the persona reaches Claude as an
/// appended system prompt; `resume-prompt` prints the text that resumes the asker.
#[test]
fn run_logs_keep_secrets_out_and_the_persona_goes_in() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = tmp.path().join("seen.json");
    let dir = workspace(&format!(
        "[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\nenv = {{ API_TOKEN = \"hunter2-secret\", AGENT_RECORD = {:?} }}\n",
        seen.display().to_string()
    ));
    let root = dir.path();
    std::fs::create_dir_all(root.join(".github/agents")).unwrap();
    std::fs::write(
        root.join(".github/agents/architect.agent.md"),
        "---\nname: architect\n---\nYou are the architect. Cite ADRs.\n",
    )
    .unwrap();
    let id = ask(root, "architect", "Cache layer");
    let v = route(root, &id).json();
    let log_path = root.join(v["run"]["log"].as_str().unwrap());
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!log.contains("hunter2-secret"), "{log}");
    let log: Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log["env"], serde_json::json!(["AGENT_RECORD", "API_TOKEN"]));
    assert_eq!(log["exit"], 0);
    assert!(log["start"].as_str().unwrap().ends_with('Z'));
    let received: Value = serde_json::from_slice(&std::fs::read(&seen).unwrap()).unwrap();
    assert_eq!(received["system"], "You are the architect. Cite ADRs.");
    assert!(received["prompt"]
        .as_str()
        .unwrap()
        .starts_with("# Clarification request CLR-42-001\n"));

    let text = agentx()
        .arg(root_arg(root))
        .args(["clarify", "resume-prompt", &id])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(text.stdout).unwrap(),
        format!("CLARIFICATION RESPONSE\nClarification: {id}\nIssue: #42\nFrom: engineer\nTo: architect\nTopic: Cache layer\n\nQ1: What do you decide?\nA1: {CACHE_ANSWER}\n\nContinue your work from your last checkpoint with these answers.\n")
    );
}

/// `[clarify] route_on_retry = true`: a plain `monitor` routes what it retried; `--no-route`
/// turns that off for one run; a dry run never routes.
#[test]
fn route_on_retry_makes_the_monitor_route() {
    let dir = workspace("[agents.architect]\npreset = \"claude\"\ncommand = [\"AGENTS/claude\"]\n");
    let root = dir.path();
    let config = root.join(".agentx/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("[clarify]\n", "[clarify]\nroute_on_retry = true\n"),
    )
    .unwrap();
    let t0 = common::T0;
    for issue in [42, 43] {
        common::ask_blocking(root, t0, issue, "architect", "Cache layer");
    }
    let late = t0 + 61 * common::MINUTE;
    let dry = common::json_at(root, late, &["clarify", "monitor", "--dry-run"]).json();
    assert!(dry.get("routed").is_none(), "{dry}");
    // Only issue 43's ledger is there for the first run: issue 42's is moved aside.
    let aside = root.join("issue-42.json.aside");
    std::fs::rename(common::ledger_path(root, 42), &aside).unwrap();
    let off = common::json_at(root, late, &["clarify", "monitor", "--no-route"]).json();
    assert_eq!(
        off["report"]["retried"],
        serde_json::json!(["CLR-43-001"]),
        "{off}"
    );
    assert!(off.get("routed").is_none(), "{off}");
    let thread = read_ledger(root, 43)["clarifications"][0]["thread"].clone();
    assert!(
        thread
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["type"] != "answer"),
        "not routed: {thread}"
    );
    std::fs::rename(&aside, common::ledger_path(root, 42)).unwrap();
    let out = common::json_at(root, late, &["clarify", "monitor"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(
        v["report"]["retried"],
        serde_json::json!(["CLR-42-001"]),
        "{v}"
    );
    assert_eq!(v["routed"]["routed"][0]["id"], "CLR-42-001", "{v}");
    assert_eq!(v["routed"]["routed"][0]["outcome"], "answered", "{v}");
    assert_eq!(record(root, "CLR-42-001")["status"], "answered");
}
