//! Subagent signals and delegation through real processes (docs/protocol.md §17–§18): a script that
//! behaves like a subagent talks to its coordinator only through signal blocks in its output,
//! piped into `agentx signals ingest`; bad input of every kind is reported per block with its
//! line and never half-applied; a writer killed between the delegation ledger and the
//! clarification ledger leaves whole blocks, and running the ingest again applies the rest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

/// A subagent wired to no tool: first run, it stops on a question; fed a resume text on
/// stdin, it applies the answer and reports completion.
const SUBAGENT: &str = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *"CLARIFICATION RESPONSE"*)
    answer=$(printf '%s\n' "$input" | sed -n 's/^A1: //p')
    echo "Resuming from checkpoint: step 1 done"
    echo "Applying the answer: $answer"
    cat <<EOF
[COMPLETION_REPORT]
agent_id: engineer
status: success
deliverables:
  - src/session_cache.rs
  - docs/cache.md
metrics_achieved: "Implemented with: $answer"
recommendations:
  - Load-test the cache
[/COMPLETION_REPORT]
EOF
    echo "Done."
    ;;
  *)
    echo "Working on task..."
    echo "Completed step 1"
    cat <<'EOF'
[CLARIFICATION_NEEDED]
agent_id: engineer
timestamp: 2026-11-22T10:00:00Z
blocked_at: "Session cache"
questions:
  - "Redis or an in-process LRU?"
current_state: "Checkpoint saved: step 1 completed"
[/CLARIFICATION_NEEDED]
EOF
    echo "Waiting for response..."
    ;;
esac
"#;

fn write_script(dir: &Path) -> PathBuf {
    let path = dir.join("subagent.sh");
    std::fs::write(&path, SUBAGENT).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs `script`, feeding it `stdin`, and pipes its stdout straight into `agentx <args…>`:
/// two processes joined by a pipe, as a shell would join them.
fn pipe_into_agentx(script: &Path, stdin: &str, args: &[String]) -> Out {
    let mut agent = Command::new(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the subagent");
    let mut input = agent.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let output = agentx()
        .args(args)
        .stdin(agent.stdout.take().unwrap())
        .output()
        .expect("spawn agentx");
    assert!(agent.wait().unwrap().success());
    Out::from_output(&output)
}

fn argv(root: &Path, now: i64, rest: &[&str]) -> Vec<String> {
    let mut all = vec![root_arg(root), "--json".to_owned(), format!("--now={now}")];
    all.extend(rest.iter().map(|s| (*s).to_owned()));
    all
}

fn ok(out: &Out) -> Value {
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()
}

#[test]
fn a_subagent_asks_is_answered_resumes_and_completes_its_delegation() {
    let dir = workspace();
    let root = dir.path();
    let script = write_script(root);
    // The coordinator (architect) delegates the implementation; the engineer accepts.
    let d = ok(&json_at(root, T0, &DELEGATE_REQUEST));
    assert_eq!(d["delegation"]["id"], "DLG-42-001");
    assert_eq!(d["delegation"]["status"], "REQUESTED", "{d:#}");
    ok(&json_at(
        root,
        T0 + MINUTE,
        &["delegate", "accept", "DLG-42-001", "--from=engineer"],
    ));

    // First run: mixed output with a [CLARIFICATION_NEEDED] block, piped into ingest.
    let ingest = [
        "signals",
        "ingest",
        "--issue=42",
        "--agent=engineer",
        "--parent=architect",
        "-",
    ];
    let first = ok(&pipe_into_agentx(
        &script,
        "",
        &argv(root, T0 + 2 * MINUTE, &ingest),
    ));
    let block = &first["blocks"][0];
    assert_eq!(block["block"], "CLARIFICATION_NEEDED");
    assert_eq!(
        (
            block["outcome"].as_str(),
            block["id"].as_str(),
            block["status"].as_str()
        ),
        (Some("created"), Some("CLR-42-001"), Some("pending")),
        "{first:#}"
    );
    assert_eq!(first["blocks"].as_array().unwrap().len(), 1);

    // The coordinator answers; resume-prompt gives the text the subagent is resumed with.
    ok(&json_at(
        root,
        T0 + 5 * MINUTE,
        &[
            "clarify",
            "answer",
            "CLR-42-001",
            "--from=architect",
            "--body=Redis, with LRU eviction.",
        ],
    ));
    let prompt = run([
        root_arg(root),
        "signals".to_owned(),
        "resume-prompt".to_owned(),
        "CLR-42-001".to_owned(),
    ]);
    assert_eq!(prompt.code, 0, "{prompt:#?}");
    assert!(
        prompt.stdout.starts_with("CLARIFICATION RESPONSE\n"),
        "{}",
        prompt.stdout
    );
    assert!(
        prompt.stdout.contains("\nA1: Redis, with LRU eviction.\n"),
        "{}",
        prompt.stdout
    );

    // Second run: fed that text, the subagent reports completion; ingest completes the
    // delegation with the response envelope.
    let ingest = ["signals", "ingest", "--issue=42", "--agent=engineer", "-"];
    let second = ok(&pipe_into_agentx(
        &script,
        &prompt.stdout,
        &argv(root, T0 + 20 * MINUTE, &ingest),
    ));
    let block = &second["blocks"][0];
    assert_eq!(
        (
            block["action"].as_str(),
            block["outcome"].as_str(),
            block["id"].as_str(),
            block["status"].as_str()
        ),
        (
            Some("complete"),
            Some("applied"),
            Some("DLG-42-001"),
            Some("COMPLETED")
        ),
        "{second:#}"
    );
    assert_eq!(
        second["delegationEvents"][0]["type"],
        "delegation-completed"
    );
    let shown = ok(&json_in(root, &["delegate", "show", "DLG-42-001"]));
    let response = &shown["delegation"]["response"];
    assert_eq!(response["artifactPath"], "src/session_cache.rs");
    assert_eq!(
        response["summary"],
        "Implemented with: Redis, with LRU eviction."
    );
    assert_eq!(response["followUpRecommended"][0], "Load-test the cache");

    // Replaying either output changes nothing.
    let again = ok(&pipe_into_agentx(
        &script,
        &prompt.stdout,
        &argv(root, T0 + 21 * MINUTE, &ingest),
    ));
    assert_eq!(again["blocks"][0]["outcome"], "skipped");

    // stats shows the delegation metrics, in JSON and in words.
    let stats = ok(&json_in(root, &["clarify", "stats"]));
    let m = &stats["stats"]["delegations"];
    assert_eq!(m["total"], 1);
    assert_eq!(m["byStatus"]["COMPLETED"], 1);
    assert_eq!(m["delegationSuccessRate"], 1.0);
    assert_eq!(m["avgRoundTripSec"], 1200.0);
    assert_eq!(m["clarificationReworkRatio"], 1.0);
    assert_eq!(m["gaps"][0]["capability"], "code.implementation.feature");
    let words = run([root_arg(root), "clarify".to_owned(), "stats".to_owned()]);
    assert!(
        words
            .stdout
            .contains("delegations: 1 (1 completed, 0 rejected, 0 timed out, 0 failed)"),
        "{}",
        words.stdout
    );
    assert!(
        words.stdout.contains("delegation success rate: 100%"),
        "{}",
        words.stdout
    );

    // Both ledgers verify; the delegation's resume text carries the result.
    let verified = ok(&json_in(root, &["clarify", "verify"]));
    assert_eq!(verified["problems"], Value::Array(Vec::new()));
    let approved = run([
        root_arg(root),
        "signals".to_owned(),
        "resume-prompt".to_owned(),
        "DLG-42-001".to_owned(),
    ]);
    assert!(
        approved.stdout.starts_with("DELEGATION APPROVED\n"),
        "{}",
        approved.stdout
    );
    assert!(
        approved.stdout.contains(
            "Result: Implemented with: Redis, with LRU eviction. (artifact: src/session_cache.rs)"
        ),
        "{}",
        approved.stdout
    );
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/signals")
        .join(name)
}

fn ingest_file(root: &Path, issue: u32, path: &Path) -> Value {
    ok(&json_at(
        root,
        T0,
        &[
            "signals",
            "ingest",
            &format!("--issue={issue}"),
            "--agent=engineer",
            "--parent=architect",
            path.to_str().unwrap(),
        ],
    ))
}

/// The state files of a workspace (everything under .agentx/state/).
fn state(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    snapshot(&root.join(".agentx/state"))
}

#[test]
fn bad_input_is_reported_per_block_by_line_and_never_half_applied() {
    let dir = workspace();
    let root = dir.path();
    let before = state(root);
    // Only malformed blocks: reported, and nothing is written (not even a lock or directory).
    for (name, lines) in [
        ("nested.txt", vec![5, 7]),
        ("unterminated.txt", vec![4, 1]),
        ("malformed_lines.txt", vec![3, 4, 6]),
        ("binary_garbage.bin", vec![22]),
        ("seed002_pipeline_verbatim.txt", vec![6, 3]),
    ] {
        let v = ingest_file(root, 42, &fixture(name));
        let block = &v["blocks"][0];
        assert_eq!(block["outcome"], "invalid", "{name}: {v:#}");
        let got: Vec<u64> = block["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["line"].as_u64().unwrap())
            .collect();
        assert_eq!(got, lines, "{name}");
        assert_eq!(state(root), before, "{name} wrote something");
    }
    let stray = ingest_file(root, 42, &fixture("stray_close.txt"));
    assert_eq!(stray["problems"][0]["line"], 2);
    assert_eq!(stray["blocks"][0]["outcome"], "created", "{stray:#}");
    // 500 questions do not fit one question: refused whole.
    let long = ingest_file(root, 43, &fixture("list_500.txt"));
    assert_eq!(long["blocks"][0]["error"]["code"], "TEXT_TOO_LONG");
    assert!(!ledger_path(root, 43).exists());
    // CRLF and tabs parse; an agent_id that differs is reported, not trusted.
    let crlf = ingest_file(root, 44, &fixture("crlf.txt"));
    assert_eq!(crlf["blocks"][0]["outcome"], "created");
    let record = &read_ledger(root, 44)["clarifications"][0];
    assert_eq!(record["from"], "engineer");
    assert_eq!(record["thread"][0]["body"], "1. First?\n2. Second?");
    let foreign = ingest_file(root, 45, &fixture("seed002_clarification_needed.txt"));
    let warning = foreign["blocks"][0]["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("'bg-task-abc' differs from the ingesting agent 'engineer'"),
        "{warning}"
    );
    assert_eq!(
        read_ledger(root, 45)["clarifications"][0]["from"],
        "engineer"
    );
    let tabs = ingest_file(root, 46, &fixture("tabs.txt"));
    assert_eq!(tabs["blocks"][0]["outcome"], "created", "{tabs:#}");

    // The text report names every problem with its line.
    let words = run([
        root_arg(root),
        format!("--now={T0}"),
        "signals".to_owned(),
        "ingest".to_owned(),
        "--issue=47".to_owned(),
        "--agent=engineer".to_owned(),
        fixture("nested.txt").display().to_string(),
    ]);
    assert_eq!(words.code, 0);
    assert!(words.stdout.contains("lines 1-8"), "{}", words.stdout);
    assert!(
        words
            .stdout
            .contains("line 5: [STOP_WORK] is nested in [CLARIFICATION_NEEDED] opened at line 1"),
        "{}",
        words.stdout
    );
    assert!(
        words.stdout.contains("1 block(s): 1 invalid"),
        "{}",
        words.stdout
    );
    let parsed = run([
        "signals".to_owned(),
        "parse".to_owned(),
        fixture("stray_close.txt").display().to_string(),
    ]);
    assert!(
        parsed
            .stdout
            .contains("outside blocks: line 2: [/STOP_WORK] closes no open block"),
        "{}",
        parsed.stdout
    );
    // A file that cannot be read is an I/O failure.
    let missing = json_at(
        root,
        T0,
        &[
            "signals",
            "ingest",
            "--issue=48",
            "--agent=engineer",
            "/nonexistent/output.log",
        ],
    );
    assert_eq!(missing.code, 1);
    assert_eq!(missing.json()["error"]["code"], "IO_ERROR");
}

/// 10 MB of agent output with 10,000 blocks, one in a thousand well-formed: every malformed
/// block is reported at its own line, the well-formed ones are applied, nothing else written.
#[test]
fn ten_megabytes_with_a_thousand_blocks() {
    // docs/protocol.md §31 caps an input at 1,000 blocks (cli/tests/security.rs refuses 1,001).
    let dir = workspace();
    let root = dir.path();
    let mut text = String::with_capacity(10 << 20);
    let mut starts = Vec::new();
    let mut line = 1usize;
    let filler = "tool output: ".to_owned() + &"x".repeat(9000) + "\n";
    for i in 0..1_000 {
        starts.push(line);
        if i % 100 == 0 {
            text.push_str(&format!(
                "[CLARIFICATION_NEEDED]\nblocked_at: Part {i}\nquestions:\n  - Which format for part {i}?\n[/CLARIFICATION_NEEDED]\n"
            ));
            line += 5;
        } else {
            text.push_str(&format!(
                "[STOP_WORK]\ndetails: part {i} without a blocker type\n[/STOP_WORK]\n"
            ));
            line += 3;
        }
        text.push_str(&filler);
        line += 1;
    }
    assert!(text.len() >= 9_000_000, "{}", text.len());
    let path = root.join("output.log");
    std::fs::write(&path, &text).unwrap();
    let v = ingest_file(root, 42, &path);
    let blocks = v["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1_000);
    for (i, (b, start)) in blocks.iter().zip(&starts).enumerate() {
        assert_eq!(b["startLine"].as_u64(), Some(*start as u64), "block {i}");
        if i % 100 == 0 {
            assert_eq!(b["outcome"], "created", "block {i}: {b}");
        } else {
            assert_eq!(b["outcome"], "invalid", "block {i}: {b}");
            assert_eq!(
                b["problems"][0]["line"].as_u64(),
                Some(*start as u64),
                "block {i}"
            );
        }
    }
    assert_eq!(ledger_ids(&read_ledger(root, 42)).len(), 10);
    assert!(!root
        .join(".agentx/state/delegations/issue-42.json")
        .exists());
}

/// `update_issue` writes the delegation ledger, then the clarification ledger. A writer killed
/// between the two leaves the delegation blocks applied whole and the clarification blocks not
/// at all; the same ingest run again applies exactly the rest.
#[test]
fn an_ingest_killed_between_its_two_writes_is_completed_by_running_it_again() {
    const RUNS: usize = 8;
    let output = "[DELEGATE_WORK]\nnew_task_description: Write the migration\n[/DELEGATE_WORK]\n[CLARIFICATION_NEEDED]\nquestions:\n  - Which region?\n[/CLARIFICATION_NEEDED]\n";
    let mut half_applied = 0;
    for run_no in 0..RUNS {
        let dir = workspace();
        let root = dir.path();
        let input = root.join("output.log");
        std::fs::write(&input, output).unwrap();
        let args = argv(
            root,
            T0,
            &[
                "signals",
                "ingest",
                "--issue=42",
                "--agent=engineer",
                "--parent=architect",
                input.to_str().unwrap(),
            ],
        );
        let delegations = root.join(".agentx/state/delegations/issue-42.json");
        let mut child = agentx()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill it as soon as the delegation ledger is in place: whether that falls between the
        // two writes is up to timing (nothing slows the writer), so each run checks whichever
        // state it left, and the count of half-applied runs is reported.
        while !delegations.exists() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = child.kill();
        let _ = child.wait();
        let clarified = ledger_path(root, 42).exists();
        if delegations.exists() && !clarified {
            half_applied += 1;
            let d: Value = serde_json::from_slice(&std::fs::read(&delegations).unwrap()).unwrap();
            assert_eq!(
                d["delegations"].as_array().unwrap().len(),
                1,
                "run {run_no}"
            );
        }
        // Running it again applies what is missing, and only that.
        let again = agentx().args(&args).output().unwrap();
        let v = ok(&Out::from_output(&again));
        let outcomes: Vec<&str> = v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["outcome"].as_str().unwrap())
            .collect();
        if !clarified && delegations.exists() {
            assert_eq!(outcomes, ["skipped", "created"], "run {run_no}: {v:#}");
        }
        let d: Value = serde_json::from_slice(&std::fs::read(&delegations).unwrap()).unwrap();
        assert_eq!(
            d["delegations"].as_array().unwrap().len(),
            1,
            "run {run_no}"
        );
        assert_eq!(
            ledger_ids(&read_ledger(root, 42)),
            ["CLR-42-001"],
            "run {run_no}"
        );
        let verified = ok(&json_in(root, &["clarify", "verify"]));
        assert_eq!(
            verified["problems"],
            Value::Array(Vec::new()),
            "run {run_no}"
        );
    }
    println!("{half_applied} of {RUNS} runs were killed between the two writes");
    assert!(
        half_applied > 0,
        "no run was killed between the two writes in {RUNS} runs"
    );
}
