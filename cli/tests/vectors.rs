//! Plays every conformance vector (`tests/vectors/**/*.json`) through the `agentx` binary:
//! one fresh temporary workspace per file, one process per case
//! (`agentx --root=<root> --json --now=<now> <command…>`, arguments mapped as the vectors
//! README says), stdout parsed as exactly one JSON line, matched as a subset against the case's
//! `expect`, and the exit code checked against the envelope (docs/protocol.md §11.1). A refusal must leave
//! every file as it was — in the workspace and around it (the workspace is a directory inside
//! the temporary one, so a path escaping it would show) — except `MAX_ROUNDS_EXCEEDED`, which
//! writes its escalation. Every failing case is named at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use agentx_clarify_command::{vector, MemStore};
use agentx_clarify_tests::{exit_code_for, load_all, materialize, now_ms, subset_match};
use common::{agentx, root_arg, snapshot, Out};
use serde_json::{json, Value};

/// A string argument, or a number/bool rendered as text (issue numbers are ints in vectors).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn opt(args: &Value, key: &str) -> Option<String> {
    match args.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => Some(text(v)),
    }
}

fn req(args: &Value, key: &str, file: &str) -> String {
    opt(args, key).unwrap_or_else(|| panic!("{file}: argument `{key}` missing"))
}

fn flag(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `--name=value` for a present argument (the `=` form lets values start with `-`).
fn push_opt(argv: &mut Vec<String>, name: &str, args: &Value, key: &str) {
    if let Some(v) = opt(args, key) {
        argv.push(format!("--{name}={v}"));
    }
}

/// `--name=<JSON>` for a present object argument.
fn push_json(argv: &mut Vec<String>, name: &str, args: &Value, key: &str) {
    if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
        argv.push(format!("--{name}={v}"));
    }
}

/// The answer kind flags of `ask` (docs/protocol.md §22): `--kind`, `--option value=Label` per option,
/// `--no-other`, `--min`, `--max`, `--ask-again`.
fn push_kinds(argv: &mut Vec<String>, args: &Value) {
    push_opt(argv, "kind", args, "answerKind");
    for o in args
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let value = o.get("value").map(text).unwrap_or_default();
        match o.get("label").and_then(Value::as_str) {
            Some(label) => argv.push(format!("--option={value}={label}")),
            None => argv.push(format!("--option={value}")),
        }
        if let Some(description) = o.get("description").and_then(Value::as_str) {
            argv.push(format!("--describe={value}={description}"));
        }
    }
    if args.get("allowOther") == Some(&Value::Bool(false)) {
        argv.push("--no-other".to_owned());
    }
    push_opt(argv, "min", args, "minSelect");
    push_opt(argv, "max", args, "maxSelect");
    if flag(args, "askAgain") {
        argv.push("--ask-again".to_owned());
    }
}

/// `--value` once per item of an array `value`, else once (`true` / `false` / the option).
fn push_values(argv: &mut Vec<String>, args: &Value) {
    match args.get("value") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                argv.push(format!("--value={}", text(item)));
            }
        }
        Some(v) => argv.push(format!("--value={}", text(v))),
    }
}

/// `--name=item` for every item of an array argument.
fn push_each(argv: &mut Vec<String>, name: &str, args: &Value, key: &str) {
    for item in args
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        argv.push(format!("--{name}={}", text(item)));
    }
}

/// The command (after the global options) a case runs, per the README table, and what it
/// reads on stdin (the agent output of `signals parse|ingest`). Positional arguments follow
/// `--`, so any text (even one starting with `-`) is taken literally.
fn command_argv(op: &str, args: &Value, file: &str, root: &Path) -> (Vec<String>, Option<String>) {
    let mut argv: Vec<String> = Vec::new();
    let mut stdin = None;
    let s = |x: &str| x.to_owned();
    match op {
        "request" => {
            argv.extend([s("clarify"), s("ask")]);
            argv.push(format!("--issue={}", req(args, "issueNumber", file)));
            argv.push(format!("--from={}", req(args, "from", file)));
            argv.push(format!("--to={}", req(args, "to", file)));
            argv.push(format!("--topic={}", req(args, "topic", file)));
            argv.push(format!("--question={}", req(args, "question", file)));
            if args.get("blocking") == Some(&Value::Bool(false)) {
                argv.push(s("--non-blocking"));
            }
            push_opt(&mut argv, "workflow", args, "workflow");
            push_opt(&mut argv, "step", args, "step");
            push_opt(&mut argv, "field", args, "field");
            if let Some(items) = args.get("suggestions").and_then(Value::as_array) {
                for item in items {
                    argv.push(format!("--suggest={}", text(item)));
                }
            }
            push_opt(&mut argv, "idempotency-key", args, "idempotencyKey");
            push_opt(&mut argv, "severity", args, "severity");
            push_opt(&mut argv, "context", args, "context");
            if let Some(items) = args.get("blockedOperations").and_then(Value::as_array) {
                for item in items {
                    argv.push(format!("--blocks={}", text(item)));
                }
            }
            push_opt(&mut argv, "session-id", args, "sessionId");
            push_opt(&mut argv, "gap-id", args, "gapId");
            push_opt(&mut argv, "asked-back-from", args, "askedBack");
            push_opt(&mut argv, "reuse", args, "reuse");
            push_kinds(&mut argv, args);
        }
        "answer" => {
            argv.extend([s("clarify"), s("answer")]);
            argv.push(format!("--from={}", req(args, "from", file)));
            push_opt(&mut argv, "body", args, "body");
            push_values(&mut argv, args);
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "followUp" => {
            argv.extend([s("clarify"), s("follow-up")]);
            argv.push(format!("--from={}", req(args, "from", file)));
            argv.push(format!("--question={}", req(args, "question", file)));
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "resolve" | "escalate" | "abandon" | "reopen" => {
            argv.extend([s("clarify"), s(op)]);
            push_opt(&mut argv, "from", args, "from");
            push_opt(&mut argv, "message", args, "message");
            push_values(&mut argv, args);
            push_each(&mut argv, "supersedes", args, "supersedes");
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "claim" => {
            argv.extend([s("clarify"), s("claim")]);
            push_opt(&mut argv, "as", args, "as");
            push_opt(&mut argv, "message", args, "message");
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "approve" => {
            argv.extend([s("clarify"), s("approve")]);
            push_opt(&mut argv, "as", args, "as");
            push_opt(&mut argv, "message", args, "message");
            push_values(&mut argv, args);
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "handoff" => {
            argv.extend([s("clarify"), s("handoff")]);
            push_opt(&mut argv, "as", args, "as");
            push_opt(&mut argv, "to", args, "to");
            push_opt(&mut argv, "message", args, "message");
            match opt(args, "id") {
                Some(id) => argv.extend([s("--"), id]),
                None => argv.push(s("--all")),
            }
        }
        "monitor" => {
            argv.extend([s("clarify"), s("monitor")]);
            if flag(args, "dryRun") {
                argv.push(s("--dry-run"));
            }
        }
        "verify" => argv.extend([s("clarify"), s("verify")]),
        "stats" => {
            argv.extend([s("clarify"), s("stats")]);
            push_opt(&mut argv, "since", args, "since");
            if flag(args, "people") {
                argv.push(s("--people"));
            }
        }
        "list" => {
            argv.extend([s("clarify"), s("list")]);
            push_opt(&mut argv, "issue", args, "issue");
            if let Some(items) = args.get("status").and_then(Value::as_array) {
                for item in items {
                    argv.push(format!("--status={}", text(item)));
                }
            }
            if flag(args, "all") {
                argv.push(s("--all"));
            }
        }
        "search" => {
            argv.extend([s("clarify"), s("search")]);
            push_opt(&mut argv, "issue", args, "issue");
            push_each(&mut argv, "status", args, "status");
            push_opt(&mut argv, "field", args, "field");
            push_opt(&mut argv, "from", args, "from");
            push_opt(&mut argv, "to", args, "to");
            push_opt(&mut argv, "limit", args, "limit");
            argv.extend([s("--"), req(args, "query", file)]);
        }
        "show" => {
            argv.extend([s("clarify"), s("show")]);
            match opt(args, "id") {
                Some(id) => argv.extend([s("--"), id]),
                None => push_opt(&mut argv, "issue", args, "issue"),
            }
        }
        "state" => {
            argv.push(s("state"));
            if let (Some(agent), Some(status)) = (opt(args, "agent"), opt(args, "status")) {
                argv.push(format!("--agent={agent}"));
                argv.push(format!("--status={status}"));
                push_opt(&mut argv, "issue", args, "issue");
            }
        }
        "hook" => {
            argv.push(s("hook"));
            argv.push(req(args, "event", file));
            argv.push(s("--"));
            argv.push(req(args, "agent", file));
            if let Some(issue) = opt(args, "issue") {
                argv.push(issue);
            }
        }
        "ready" => {
            argv.push(s("ready"));
            if args.get("includeEscalated") == Some(&Value::Bool(false)) {
                argv.push(s("--no-escalated"));
            }
        }
        "scopePreview" => {
            argv.extend([s("clarify"), s("scope")]);
            push_opt(&mut argv, "from", args, "from");
            push_opt(&mut argv, "to", args, "to");
            push_opt(&mut argv, "issue", args, "issueNumber");
            if args.get("blocking") == Some(&Value::Bool(false)) {
                argv.push(s("--non-blocking"));
            }
            push_opt(&mut argv, "workflow", args, "workflow");
            push_opt(&mut argv, "step", args, "step");
        }
        "nextWakeup" => argv.extend([s("clarify"), s("wakeup")]),
        "waitForGraph" => {
            argv.extend([s("clarify"), s("graph")]);
            push_opt(&mut argv, "issue", args, "issue");
        }
        "migrate" => {
            argv.push(s("migrate"));
            if flag(args, "dryRun") {
                argv.push(s("--dry-run"));
            }
        }
        "routePrompt" => {
            argv.extend([s("clarify"), s("route"), s("--print-prompt")]);
            if let Some(persona) = args.get("persona").and_then(Value::as_str) {
                argv.push(format!(
                    "--persona={}",
                    input_file(root, "persona.md", persona)
                ));
            }
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "routeOutcome" => {
            let output = args.get("output").cloned().unwrap_or(Value::Null);
            let path = input_file(root, "run.json", &output.to_string());
            argv.extend([s("clarify"), s("route"), format!("--interpret={path}")]);
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "signalsParse" => {
            argv.extend([s("signals"), s("parse"), s("-")]);
            stdin = Some(req(args, "text", file));
        }
        "signalsIngest" => {
            argv.extend([s("signals"), s("ingest")]);
            argv.push(format!("--issue={}", req(args, "issue", file)));
            argv.push(format!("--agent={}", req(args, "agent", file)));
            push_opt(&mut argv, "parent", args, "parent");
            argv.push(s("-"));
            stdin = Some(req(args, "text", file));
        }
        "resumePrompt" => {
            // Both commands give the same text; a delegation's only `signals resume-prompt`.
            let id = req(args, "id", file);
            let group = if id.starts_with("CLR-") {
                "clarify"
            } else {
                "signals"
            };
            argv.extend([s(group), s("resume-prompt"), s("--"), req(args, "id", file)]);
        }
        "delegateRequest" => {
            argv.extend([s("delegate"), s("request")]);
            argv.push(format!("--issue={}", req(args, "issueNumber", file)));
            argv.push(format!("--from={}", req(args, "from", file)));
            argv.push(format!("--to={}", req(args, "to", file)));
            push_opt(&mut argv, "capability", args, "capability");
            argv.push(format!("--objective={}", req(args, "objective", file)));
            push_json(&mut argv, "context-slice", args, "contextSlice");
            push_json(&mut argv, "output-contract", args, "outputContract");
            push_opt(&mut argv, "timeout-minutes", args, "timeoutMinutes");
        }
        "delegateAccept" | "delegateComplete" | "delegateReject" | "delegateFail" => {
            let verb = op.trim_start_matches("delegate").to_ascii_lowercase();
            argv.extend([s("delegate"), verb]);
            argv.push(format!("--from={}", req(args, "from", file)));
            push_opt(&mut argv, "artifact", args, "artifactPath");
            push_opt(&mut argv, "summary", args, "summary");
            push_json(&mut argv, "metrics", args, "metrics");
            push_each(&mut argv, "follow-up", args, "followUpRecommended");
            push_each(&mut argv, "unresolved", args, "unresolved");
            push_opt(&mut argv, "reason", args, "reason");
            push_opt(&mut argv, "message", args, "message");
            argv.extend([s("--"), req(args, "id", file)]);
        }
        "delegateShow" => {
            argv.extend([s("delegate"), s("show")]);
            match opt(args, "id") {
                Some(id) => argv.extend([s("--"), id]),
                None => push_opt(&mut argv, "issue", args, "issue"),
            }
        }
        "delegateList" => {
            argv.extend([s("delegate"), s("list")]);
            push_opt(&mut argv, "issue", args, "issue");
            push_each(&mut argv, "status", args, "status");
            if flag(args, "all") {
                argv.push(s("--all"));
            }
        }
        "check" => {
            argv.extend([s("clarify"), s("check")]);
            argv.push(format!("--issue={}", req(args, "issue", file)));
            argv.push(format!("--from={}", req(args, "from", file)));
            push_opt(&mut argv, "to", args, "to");
            push_opt(&mut argv, "workflow", args, "workflow");
            push_opt(&mut argv, "step", args, "step");
            let plan = args.get("plan").map(Value::to_string).unwrap_or_default();
            argv.extend([s("--"), input_file(root, "plan.json", &plan)]);
        }
        "gate" => {
            argv.push(s("gate"));
            push_opt(&mut argv, "issue", args, "issue");
            push_opt(&mut argv, "operation", args, "operation");
        }
        "audit" => {
            argv.extend([s("clarify"), s("audit")]);
            match opt(args, "id") {
                Some(id) => argv.extend([s("--"), id]),
                None => push_opt(&mut argv, "issue", args, "issue"),
            }
        }
        "keysList" => argv.extend([s("keys"), s("list")]),
        other => panic!("{file}: unknown op {other}"),
    }
    (argv, stdin)
}

/// Writes a case's input (a persona, a run output) into the workspace root (outside
/// `.agentx/`) and returns its path.
fn input_file(root: &Path, name: &str, text: &str) -> String {
    let path = root.join(format!(".vector-{name}"));
    std::fs::write(&path, text).expect("write a case input");
    path.display().to_string()
}

/// The `file` op: read a workspace file and report it as the runners do.
fn read_file_op(root: &Path, args: &Value, file: &str) -> Value {
    let name = req(args, "name", file);
    let path = if name == "agent-status.json" || name.contains('/') {
        root.join(".agentx/state").join(&name)
    } else {
        root.join(".agentx/state/clarifications").join(&name)
    };
    let content = match std::fs::read_to_string(&path) {
        Err(_) => Value::Null,
        Ok(t) => serde_json::from_str(&t).unwrap_or(Value::String(t)),
    };
    json!({"ok": true, "content": content})
}

/// Runs the command, writing `stdin` to it when given (an empty stdin otherwise).
fn run_with_stdin(cmd: &mut std::process::Command, stdin: Option<&str>) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentx");
    let input = stdin.unwrap_or_default().as_bytes().to_vec();
    let mut pipe = child.stdin.take().expect("stdin");
    // Written from a thread: a large input must not deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for agentx");
    let _ = writer.join();
    output
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(600).collect()
}

/// The `--now` text of a case: RFC 3339 as written, or epoch milliseconds.
fn now_arg(now: &Value) -> String {
    match now {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("now must be text or a number, found {other}"),
    }
}

#[test]
fn every_vector_through_the_binary() {
    let vectors = load_all();
    assert!(!vectors.is_empty(), "no vectors found");
    let mut failures = Vec::new();
    let mut cases = 0usize;
    let mut processes = 0usize;
    let started = std::time::Instant::now();
    for (file, vector) in &vectors {
        let dir = tempfile::tempdir().expect("tempdir");
        let root_dir = dir.path().join("ws");
        let root = root_dir.as_path();
        let setup = vector.get("setup").cloned().unwrap_or(Value::Null);
        materialize(&setup, root).unwrap_or_else(|e| panic!("{file}: materialize: {e}"));
        // The same scenario through the command layer over a MemStore, in step: the binary must
        // give exactly its results.
        let reference = MemStore::from_setup(&setup).unwrap_or_else(|e| panic!("{file}: {e}"));
        let list = vector["cases"]
            .as_array()
            .unwrap_or_else(|| panic!("{file}: `cases` must be an array"));
        for case in list {
            cases += 1;
            let name = case["name"].as_str().unwrap_or("?");
            let op = case["op"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}/{name}: `op` missing"));
            let args = case.get("args").cloned().unwrap_or(Value::Null);
            let expected = vector::play(&reference, op, &args, now_ms(&case["now"]), |p| {
                reference.file(p)
            });
            if op == "file" {
                let actual = read_file_op(root, &args, file);
                if let Err(why) = subset_match(&case["expect"], &actual) {
                    failures.push(format!("{file} / {name}: {why}"));
                }
                if actual != expected {
                    failures.push(format!("{file} / {name}: the file differs from the MemStore's: {actual} vs {expected}"));
                }
                continue;
            }
            let mut argv = vec![
                root_arg(root),
                "--json".to_owned(),
                format!("--now={}", now_arg(&case["now"])),
            ];
            let (command, stdin) = command_argv(op, &args, file, root);
            argv.extend(command);
            processes += 1;
            let before = state_snapshot(dir.path());
            let output = run_with_stdin(agentx().args(&argv), stdin.as_deref());
            let out = Out::from_output(&output);
            let actual = match out.try_json() {
                Ok(v) => v,
                Err(why) => {
                    failures.push(format!(
                        "{file} / {name}: {why}; exit {}; argv {argv:?}; stdout {:?}; stderr {:?}",
                        out.code, out.stdout, out.stderr
                    ));
                    continue;
                }
            };
            if let Err(why) = subset_match(&case["expect"], &actual) {
                failures.push(format!("{file} / {name}: {why}"));
            }
            if actual != expected {
                failures.push(format!(
                    "{file} / {name}: differs from the command layer over a MemStore:\n  binary:   {}\n  memstore: {}",
                    short(&actual),
                    short(&expected)
                ));
            }
            let refused = actual.get("ok") == Some(&Value::Bool(false));
            let code = actual.pointer("/error/code").and_then(Value::as_str);
            if refused
                && code != Some("MAX_ROUNDS_EXCEEDED")
                && state_snapshot(dir.path()) != before
            {
                failures.push(format!("{file} / {name}: a refused command changed files"));
            }
            let want = exit_code_for(&actual);
            if out.code != want {
                failures.push(format!(
                    "{file} / {name}: exit code {} but the envelope calls for {want}: {}",
                    out.code,
                    out.stdout.trim_end()
                ));
            }
        }
    }
    println!(
        "{} vector files, {cases} cases ({processes} agentx runs) through the binary in {:.1?}: {} failures",
        vectors.len(),
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s) over {cases} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The workspace's files but the index of active records: a cache that any pass may build or
/// refresh, also in a command that is refused (docs/protocol.md §19).
fn state_snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let index = agentx_clarify_store::INDEX_DIR;
    snapshot(dir)
        .into_iter()
        .filter(|(path, _)| !format!("/{path}/").contains(&format!("/{index}")))
        .collect()
}
