//! Integration tests of every `agentx` command through the real binary: `--json` shapes
//! (SPEC §11.1), every exit code, colour control, workspace discovery, `init` idempotence,
//! help texts, `AGENTX_NOW`, and bad input (corrupt ledgers, wrongly typed TOML, unknown flags,
//! overlong text, invalid ids and issue numbers, symlinks, foreign and dead locks).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const MONITOR_KEYS: [&str; 7] = [
    "stale",
    "retried",
    "escalated",
    "stuck",
    "deadlocks",
    "abandoned",
    "errors",
];

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn assert_monitor_report(report: &Value) {
    assert_eq!(keys(report), set(&MONITOR_KEYS), "monitor report: {report}");
    for k in MONITOR_KEYS {
        assert!(report[k].is_array(), "report.{k} is not an array: {report}");
    }
}

/// Asserts a successful mutation envelope (SPEC §11.1) and returns its record.
fn assert_mutation(v: &Value) -> Value {
    assert_eq!(
        keys(v),
        set(&[
            "ok",
            "clarification",
            "events",
            "idempotent",
            "monitor",
            "warnings"
        ]),
        "mutation: {v}"
    );
    assert_eq!(v["ok"], true);
    assert!(v["events"].is_array());
    assert_monitor_report(&v["monitor"]);
    let record = v["clarification"].clone();
    assert!(
        record["issueNumber"].is_u64(),
        "clarification has issueNumber: {record}"
    );
    record
}

/// Asserts a usage error: exit 2, nothing on stdout, clap's message on stderr.
fn assert_usage(out: &Out) {
    assert_eq!(out.code, 2, "{out:#?}");
    assert!(out.stdout.is_empty(), "stdout must be empty: {out:#?}");
    assert!(!out.stderr.is_empty(), "stderr must explain: {out:#?}");
}

fn ask(root: &Path, now: i64, issue: u32, topic: &str, question: &str) -> Value {
    let args = ask_args(issue, topic, question);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = json_at(root, now, &refs);
    assert_eq!(out.code, 0, "ask failed: {out:#?}");
    out.json()
}

fn ask_blocking(root: &Path, now: i64, issue: u32, to: &str, topic: &str) -> Value {
    let out = json_at(
        root,
        now,
        &[
            "clarify",
            "ask",
            &format!("--issue={issue}"),
            "--from=engineer",
            &format!("--to={to}"),
            &format!("--topic={topic}"),
            &format!("--question=What about {topic}?"),
        ],
    );
    assert_eq!(out.code, 0, "ask failed: {out:#?}");
    out.json()
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// init

#[test]
fn init_creates_the_layout_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "created"]));
    let created: Vec<&str> = v["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for path in [
        ".agentx/",
        ".agentx/workflows/",
        ".agentx/state/",
        ".agentx/state/clarifications/",
        ".agentx/workflows/feature.toml",
        ".agentx/workflows/story.toml",
        ".agentx/workflows/bug.toml",
        ".agentx/config.toml",
    ] {
        assert!(created.contains(&path), "{path} not in {created:?}");
        assert!(root.join(path).exists(), "{path} missing on disk");
    }
    let feature = std::fs::read_to_string(root.join(".agentx/workflows/feature.toml")).unwrap();
    assert!(feature.contains("can_clarify"), "{feature}");
    let bug = std::fs::read_to_string(root.join(".agentx/workflows/bug.toml")).unwrap();
    assert!(bug.contains("clarify_blocking_allowed = false"), "{bug}");

    // Second run: the user's edit survives byte for byte, only a deleted file comes back.
    let feature_path = root.join(".agentx/workflows/feature.toml");
    let edited = format!("# my own notes\n{feature}\n# trailing comment, no newline");
    std::fs::write(&feature_path, &edited).unwrap();
    std::fs::remove_file(root.join(".agentx/workflows/story.toml")).unwrap();
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json()["created"],
        json!([".agentx/workflows/story.toml"])
    );
    assert_eq!(bytes(&feature_path), edited.as_bytes());

    // Third run: nothing to create, nothing touched.
    let before = snapshot(root);
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json(), json!({"ok": true, "created": []}));
    let out = run([root_arg(root), "init".to_owned()]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("nothing to create"), "{out:#?}");
    assert_eq!(snapshot(root), before, "a repeated init changed files");
}

// ---------------------------------------------------------------------------------------------
// clarify ask / answer / follow-up / resolve / escalate / abandon

#[test]
fn ask_with_every_option_writes_the_ledger_and_statuses() {
    let dir = workspace();
    let root = dir.path();
    let out = json_at(
        root,
        T0,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache layer",
            "--question=Redis or in-process?",
            "--workflow=feature",
            "--step=implement",
            "--field=storage.cache",
            "--suggest=redis",
            "--suggest=in-process LRU",
            "--idempotency-key=run-7f3a/step-implement/q1",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stderr.is_empty(), "{out:#?}");
    let v = out.json();
    let record = assert_mutation(&v);
    assert_eq!(v["idempotent"], false);
    let expect = json!({
        "issueNumber": 42, "id": "CLR-42-001", "from": "engineer", "to": "architect",
        "topic": "Cache layer", "blocking": true, "status": "pending", "round": 1,
        "maxRounds": 3, "slaMinutes": 60, "created": "2026-11-22T10:00:00.000Z",
        "staleAfter": "2026-11-22T11:00:00.000Z", "retries": 0, "resolvedAt": null,
        "field": "storage.cache", "suggestions": ["redis", "in-process LRU"],
        "idempotencyKey": "run-7f3a/step-implement/q1",
    });
    agentx_clarify_tests::subset_match(&expect, &record).unwrap();
    let thread = record["thread"].as_array().unwrap();
    assert_eq!(thread.len(), 1);
    assert_eq!(thread[0]["type"], "question");
    assert_eq!(thread[0]["body"], "Redis or in-process?");
    let hash = thread[0]["hash"].as_str().unwrap();
    assert!(
        hash.len() == 64
            && hash
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        keys(&events[0]),
        set(&[
            "type",
            "clarificationId",
            "issueNumber",
            "fromAgent",
            "toAgent",
            "topic",
            "blocking",
            "timestamp",
            "actor"
        ])
    );
    assert_eq!(events[0]["type"], "clarification-requested");
    assert_eq!(events[0]["timestamp"], T0);

    // The file: pretty JSON, trailing newline, camelCase, no record-level issueNumber.
    let text = std::fs::read_to_string(ledger_path(root, 42)).unwrap();
    assert!(text.ends_with('\n') && text.contains("\n  "), "{text}");
    let ledger: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ledger["issueNumber"], 42);
    assert_eq!(ledger["workflow"], "feature");
    assert!(ledger["clarifications"][0].get("issueNumber").is_none());
    assert!(ledger["clarifications"][0]["resolvedAt"].is_null());

    let statuses: Value =
        serde_json::from_str(&std::fs::read_to_string(status_path(root)).unwrap()).unwrap();
    assert_eq!(statuses["architect"]["status"], "clarifying");
    assert_eq!(statuses["architect"]["respondingTo"], "engineer");
    assert_eq!(statuses["engineer"]["status"], "blocked-clarification");
    assert_eq!(statuses["engineer"]["waitingOn"], "architect");
    assert_eq!(statuses["engineer"]["clarificationId"], "CLR-42-001");

    // An idempotent replay returns the record and writes nothing.
    let ledger_before = bytes(&ledger_path(root, 42));
    let status_before = bytes(&status_path(root));
    let replay = json_at(
        root,
        T0 + MINUTE,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache layer",
            "--question=Redis or in-process?",
            "--idempotency-key=run-7f3a/step-implement/q1",
        ],
    );
    assert_eq!(replay.code, 0, "{replay:#?}");
    let rv = replay.json();
    assert_mutation(&rv);
    assert_eq!(rv["idempotent"], true);
    assert_eq!(rv["events"], json!([]));
    assert_eq!(rv["clarification"]["id"], "CLR-42-001");
    assert_eq!(bytes(&ledger_path(root, 42)), ledger_before);
    assert_eq!(bytes(&status_path(root)), status_before);

    // The same key with another question is a conflict (exit 4), nothing written.
    let conflict = json_at(
        root,
        T0 + MINUTE,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache layer",
            "--question=Something else?",
            "--idempotency-key=run-7f3a/step-implement/q1",
        ],
    );
    assert_fails(&conflict, 4, "IDEMPOTENCY_CONFLICT");
    assert_eq!(bytes(&ledger_path(root, 42)), ledger_before);
}

#[test]
fn any_text_is_stored_verbatim() {
    let dir = workspace();
    let root = dir.path();
    let topic = "-x --json \"quoted\" $HOME `id` ; rm -rf / café 日本 🚀";
    let question = "line one\nline two\t\"tab\" \\ back\\slash\n-- not a flag";
    let out = json_at(
        root,
        T0,
        &[
            "clarify",
            "ask",
            "--issue=0",
            "--from=engineer",
            "--to=architect",
            &format!("--topic={topic}"),
            &format!("--question={question}"),
            "--field=-field",
            "--suggest=-s",
            "--non-blocking",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let record = out.json()["clarification"].clone();
    assert_eq!(record["id"], "CLR-0-001");
    assert_eq!(record["topic"], topic);
    assert_eq!(record["thread"][0]["body"], question);
    assert_eq!(record["field"], "-field");
    assert_eq!(record["suggestions"], json!(["-s"]));
    let on_disk = read_ledger(root, 0);
    assert_eq!(on_disk["clarifications"][0]["topic"], topic);
    // Exactly at the limit, counted in Unicode scalar values: 200 × 'é' (400 bytes) is fine.
    let at_limit = "é".repeat(200);
    ask(root, T0, 0, &at_limit, "fine");
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn lifecycle_answer_follow_up_resolve_and_queries() {
    let dir = workspace();
    let root = dir.path();
    let id = "CLR-7-001";
    ask_blocking(root, T0, 7, "architect", "Cache layer");

    // Only the target may answer (exit 4), and nothing is written.
    let before = bytes(&ledger_path(root, 7));
    let out = json_at(
        root,
        T0 + MINUTE,
        &[
            "clarify",
            "answer",
            id,
            "--from=product-manager",
            "--body=me?",
        ],
    );
    assert_fails(&out, 4, "NOT_PARTICIPANT");
    assert_eq!(bytes(&ledger_path(root, 7)), before);

    let out = json_at(
        root,
        T0 + 4 * MINUTE,
        &[
            "clarify",
            "answer",
            id,
            "--from=architect",
            "--body=Redis, see ADR-7.",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    let r = assert_mutation(&v);
    assert_eq!(r["status"], "answered");
    assert_eq!(v["events"][0]["type"], "clarification-answered");
    assert_eq!(v["events"][0]["actor"], "architect");

    let out = json_at(
        root,
        T0 + 5 * MINUTE,
        &[
            "clarify",
            "follow-up",
            id,
            "--from=engineer",
            "--question=Which eviction policy?",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let r = assert_mutation(&out.json());
    assert_eq!(
        (r["status"].as_str(), r["round"].as_u64()),
        (Some("pending"), Some(2))
    );

    // A follow-up on a pending record is an invalid transition (exit 6).
    let out = json_at(
        root,
        T0 + 5 * MINUTE,
        &[
            "clarify",
            "follow-up",
            id,
            "--from=engineer",
            "--question=again?",
        ],
    );
    assert_fails(&out, 6, "INVALID_TRANSITION");

    let out = json_at(
        root,
        T0 + 6 * MINUTE,
        &[
            "clarify",
            "answer",
            id,
            "--from=architect",
            "--body=allkeys-lru",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let out = json_at(root, T0 + 7 * MINUTE, &["clarify", "resolve", id]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    let r = assert_mutation(&v);
    assert_eq!(r["status"], "resolved");
    assert_eq!(r["resolvedAt"], "2026-11-22T10:07:00.000Z");
    let last = r["thread"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["type"], "resolution");
    assert_eq!(last["from"], "engineer", "default actor: the requester");
    assert_eq!(last["body"], "resolved by engineer");
    assert_eq!(v["events"][0]["type"], "clarification-resolved");

    // Terminal: resolve again and answer both refuse with 6.
    assert_fails(
        &json_at(root, T0 + 8 * MINUTE, &["clarify", "resolve", id]),
        6,
        "INVALID_TRANSITION",
    );
    let out = json_at(
        root,
        T0 + 8 * MINUTE,
        &["clarify", "answer", id, "--from=architect", "--body=late"],
    );
    assert_fails(&out, 6, "INVALID_TRANSITION");

    // A second, open record on the same issue.
    ask(root, T0 + 9 * MINUTE, 7, "Queue", "Kafka or SQS?");

    // list: default = open records; --all includes terminal ones; --status filters.
    let out = json_in(root, &["clarify", "list"]);
    assert_eq!(out.code, 0);
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "clarifications", "errors"]));
    assert_eq!(v["clarifications"].as_array().unwrap().len(), 1);
    assert_eq!(v["clarifications"][0]["id"], "CLR-7-002");
    assert_eq!(v["clarifications"][0]["issueNumber"], 7);
    let all = json_in(root, &["clarify", "list", "--all", "--issue=7"]).json();
    assert_eq!(all["clarifications"].as_array().unwrap().len(), 2);
    let resolved = json_in(root, &["clarify", "list", "--status=resolved"]).json();
    assert_eq!(resolved["clarifications"][0]["id"], id);
    assert_eq!(resolved["clarifications"].as_array().unwrap().len(), 1);
    let other_issue = json_in(root, &["clarify", "list", "--all", "--issue=8"]).json();
    assert_eq!(other_issue["clarifications"], json!([]));

    // show: one record, or the whole ledger.
    let v = json_in(root, &["clarify", "show", id]).json();
    assert_eq!(keys(&v), set(&["ok", "clarification"]));
    assert_eq!(v["clarification"]["issueNumber"], 7);
    assert_eq!(v["clarification"]["thread"].as_array().unwrap().len(), 5);
    let v = json_in(root, &["clarify", "show", "--issue=7"]).json();
    assert_eq!(keys(&v), set(&["ok", "ledger"]));
    assert_eq!(v["ledger"]["issueNumber"], 7);
    assert_eq!(v["ledger"]["clarifications"].as_array().unwrap().len(), 2);
    assert_fails(
        &json_in(root, &["clarify", "show", "--issue=8"]),
        5,
        "NOT_FOUND",
    );
    assert_fails(
        &json_in(root, &["clarify", "show", "CLR-7-003"]),
        5,
        "NOT_FOUND",
    );

    // Human output of show and list.
    let out = run([
        root_arg(root),
        "--color=never".into(),
        "clarify".into(),
        "show".into(),
        id.into(),
    ]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("CLR-7-001") && out.stdout.contains("Redis, see ADR-7."),
        "{out:#?}"
    );
    let out = run([root_arg(root), "clarify".into(), "list".into()]);
    assert!(
        out.stdout.contains("CLR-7-002") && !out.stdout.contains("CLR-7-001"),
        "{out:#?}"
    );

    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn follow_up_at_the_round_limit_escalates_with_exit_4() {
    let dir = workspace();
    let root = dir.path();
    let id = "CLR-3-001";
    ask_blocking(root, T0, 3, "architect", "Schema");
    let answer = |n: i64| {
        let out = json_at(
            root,
            T0 + n * MINUTE,
            &[
                "clarify",
                "answer",
                id,
                "--from=architect",
                &format!("--body=answer number {n} about tables"),
            ],
        );
        assert_eq!(out.code, 0, "{out:#?}");
    };
    answer(1);
    for (round, subject) in [(2, "indexes"), (3, "keys")] {
        let out = json_at(
            root,
            T0 + round * 10 * MINUTE,
            &[
                "clarify",
                "follow-up",
                id,
                "--from=engineer",
                &format!("--question=question {round} on {subject}"),
            ],
        );
        assert_eq!(out.code, 0, "{out:#?}");
        answer(round * 10 + 1);
    }
    let out = json_at(
        root,
        T0 + 40 * MINUTE,
        &[
            "clarify",
            "follow-up",
            id,
            "--from=engineer",
            "--question=and a fourth?",
        ],
    );
    assert_eq!(out.code, 4, "{out:#?}");
    let v = out.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "MAX_ROUNDS_EXCEEDED");
    assert_eq!(v["clarification"]["status"], "escalated");
    assert!(v.get("idempotent").is_none(), "{v}");
    assert_monitor_report(&v["monitor"]);
    let events = v["events"].as_array().unwrap();
    assert_eq!(events[0]["type"], "clarification-escalated");
    assert_eq!(events[0]["reason"], "max rounds reached (3 of 3)");
    let last = v["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["from"].as_str(), last["type"].as_str()),
        (Some("agent-x"), Some("escalation"))
    );

    // Only a human may resolve it now; the requester is refused with 4.
    let out = json_at(
        root,
        T0 + 41 * MINUTE,
        &["clarify", "resolve", id, "--from=engineer"],
    );
    assert_fails(&out, 4, "NOT_PARTICIPANT");
    let out = json_at(
        root,
        T0 + 42 * MINUTE,
        &["clarify", "resolve", id, "-m", "Decided: keep it."],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let r = out.json()["clarification"].clone();
    assert_eq!(r["status"], "resolved");
    let last = r["thread"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["from"].as_str(), last["body"].as_str()),
        (Some("human"), Some("Decided: keep it."))
    );
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
}

#[test]
fn escalate_and_abandon() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 5, "One", "first?");
    ask(root, T0, 5, "Two", "second?");

    let out = json_at(root, T0 + MINUTE, &["clarify", "escalate", "CLR-5-001"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    let r = assert_mutation(&v);
    assert_eq!(r["status"], "escalated");
    assert_eq!(v["events"][0]["type"], "clarification-escalated");
    assert_eq!(v["events"][0]["reason"], "escalated by human");
    assert_eq!(v["events"][0]["actor"], "human");

    let out = json_at(
        root,
        T0 + MINUTE,
        &[
            "clarify",
            "escalate",
            "CLR-5-002",
            "--from=architect",
            "--message=needs product input",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["events"][0]["reason"], "needs product input");
    // Escalated records cannot be escalated again (6).
    assert_fails(
        &json_at(root, T0 + MINUTE, &["clarify", "escalate", "CLR-5-002"]),
        6,
        "INVALID_TRANSITION",
    );

    ask(root, T0 + 2 * MINUTE, 5, "Three", "third?");
    // Only the requester (or the monitor) abandons: the target is refused with 4.
    let out = json_at(
        root,
        T0 + 3 * MINUTE,
        &["clarify", "abandon", "CLR-5-003", "--from=architect"],
    );
    assert_fails(&out, 4, "NOT_PARTICIPANT");
    let out = json_at(
        root,
        T0 + 3 * MINUTE,
        &[
            "clarify",
            "abandon",
            "CLR-5-003",
            "-m",
            "found it in the ADR",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["clarification"]["status"], "abandoned");
    assert_eq!(v["events"][0]["type"], "clarification-abandoned");
    assert_eq!(v["events"][0]["actor"], "engineer");
    assert_eq!(v["events"][0]["reason"], "found it in the ADR");
    assert_fails(
        &json_at(root, T0 + 4 * MINUTE, &["clarify", "abandon", "CLR-5-003"]),
        6,
        "INVALID_TRANSITION",
    );
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
}

// ---------------------------------------------------------------------------------------------
// monitor, verify, stats

#[test]
fn monitor_dry_run_stale_alias_retry_then_escalate() {
    let dir = workspace();
    let root = dir.path();
    ask_blocking(root, T0, 1, "architect", "Cache");
    let id = "CLR-1-001";
    let path = ledger_path(root, 1);
    let before = bytes(&path);

    // Before the SLA: nothing to do.
    let v = json_at(root, T0 + 30 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(keys(&v), set(&["ok", "report", "events"]));
    assert_monitor_report(&v["report"]);
    assert_eq!(v["events"], json!([]));
    assert_eq!(v["report"]["stale"], json!([]));

    // Dry run after the SLA: reported, not written.
    let out = json_at(root, T0 + 61 * MINUTE, &["clarify", "monitor", "--dry-run"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["report"]["stale"], json!([id]));
    assert_eq!(v["report"]["retried"], json!([id]));
    assert_eq!(bytes(&path), before, "--dry-run wrote the ledger");

    // `stale` is an alias of `monitor`, and it writes.
    let out = json_at(root, T0 + 61 * MINUTE, &["clarify", "stale"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["report"]["stale"], json!([id]));
    assert_eq!(v["report"]["retried"], json!([id]));
    let types: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["clarification-stale"]);
    let record = &read_ledger(root, 1)["clarifications"][0];
    assert_eq!(
        (record["status"].as_str(), record["retries"].as_u64()),
        (Some("pending"), Some(1))
    );

    // A second run at the same time reports nothing new.
    let v = json_at(root, T0 + 61 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["stale"], json!([]));
    assert_eq!(v["events"], json!([]));

    // The retry's SLA expires too, with no retry left: escalated.
    let v = json_at(root, T0 + 122 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["stale"], json!([id]));
    assert_eq!(v["report"]["retried"], json!([]));
    assert_eq!(
        v["report"]["escalated"],
        json!([{"id": id, "reason": "SLA expired; retries used: 1 of 1"}])
    );
    // Human output of the monitor.
    let out = run([
        root_arg(root),
        format!("--now={}", T0 + 200 * MINUTE),
        "clarify".into(),
        "monitor".into(),
    ]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
}

#[test]
fn verify_reports_tampering_with_exit_8() {
    let dir = workspace();
    let root = dir.path();
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.json(),
        json!({"ok": true, "problems": [], "warnings": []})
    );
    ask(root, T0, 1, "Cache", "Redis?");
    ask(root, T0, 2, "Queue", "Kafka?");
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json(),
        json!({"ok": true, "problems": [], "warnings": []})
    );
    let human = run([root_arg(root), "clarify".into(), "verify".into()]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("no problems"), "{human:#?}");

    // Rewrite history: the chain breaks.
    let path = ledger_path(root, 2);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Kafka?", "SQS?");
    std::fs::write(&path, text).unwrap();
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 8, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "error", "problems", "warnings"]));
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "LEDGER_INCONSISTENT");
    let problems = v["problems"].as_array().unwrap();
    assert!(!problems.is_empty());
    for p in problems {
        assert_eq!(keys(p), set(&["file", "id", "message"]));
        assert_eq!(p["file"], "issue-2.json");
        assert_eq!(p["id"], "CLR-2-001");
    }
    // Without --json: problems on stdout, the error on stderr, still 8.
    let human = run([root_arg(root), "clarify".into(), "verify".into()]);
    assert_eq!(human.code, 8);
    assert!(human.stdout.contains("issue-2.json"), "{human:#?}");
    assert!(human.stderr.contains("LEDGER_INCONSISTENT"), "{human:#?}");

    // A file-level problem has id null.
    std::fs::write(ledger_path(root, 3), "{ not json").unwrap();
    let v = json_in(root, &["clarify", "verify"]).json();
    assert!(
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["file"] == "issue-3.json" && p["id"].is_null()),
        "{v}"
    );
}

#[test]
fn stats_shape_and_since() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "A", "a?");
    ask(root, T0, 1, "B", "b?");
    let out = json_at(
        root,
        T0 + 4 * MINUTE,
        &[
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=yes",
        ],
    );
    assert_eq!(out.code, 0);
    assert_eq!(
        json_at(root, T0 + 5 * MINUTE, &["clarify", "resolve", "CLR-1-001"]).code,
        0
    );
    let out = json_in(root, &["clarify", "stats"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "stats", "errors"]));
    let s = &v["stats"];
    assert_eq!(
        keys(s),
        set(&[
            "total",
            "byStatus",
            "autoResolutionRate",
            "escalationRate",
            "averageRoundsToResolution",
            "timeToFirstAnswerMs",
            "staleCount",
            "deadlockCount",
            "pairs"
        ])
    );
    assert_eq!(s["total"], 2);
    assert_eq!(
        keys(&s["byStatus"]),
        set(&[
            "pending",
            "stale",
            "answered",
            "escalated",
            "resolved",
            "abandoned"
        ])
    );
    assert_eq!(s["byStatus"]["resolved"], 1);
    assert_eq!(s["byStatus"]["pending"], 1);
    assert_eq!(s["autoResolutionRate"], 1.0);
    assert_eq!(s["timeToFirstAnswerMs"]["count"], 1);
    assert_eq!(s["timeToFirstAnswerMs"]["median"], 4 * MINUTE);
    assert_eq!(s["pairs"][0]["from"], "engineer");
    assert_eq!(s["pairs"][0]["total"], 2);
    let later = json_in(root, &["clarify", "stats", "--since=2030-01-01T00:00:00Z"]).json();
    assert_eq!(later["stats"]["total"], 0);
    assert!(later["stats"]["autoResolutionRate"].is_null());
    let epoch = json_in(root, &["clarify", "stats", &format!("--since={T0}")]).json();
    assert_eq!(epoch["stats"]["total"], 2);
    assert_fails(
        &json_in(root, &["clarify", "stats", "--since=yesterday"]),
        3,
        "INVALID_INPUT",
    );
    let human = run([root_arg(root), "clarify".into(), "stats".into()]);
    assert_eq!(human.code, 0);
    assert!(!human.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------------
// hook, ready, state, demo, completions

#[test]
fn hooks_set_statuses_and_run_the_monitor() {
    let dir = workspace();
    let root = dir.path();
    let out = json_at(root, T0, &["hook", "start", "engineer", "1"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(
        keys(&v),
        set(&["ok", "agent", "monitor", "events", "warnings"])
    );
    assert_monitor_report(&v["monitor"]);
    assert_eq!(
        v["agent"],
        json!({"status": "working", "issue": 1, "lastActivity": "2026-11-22T10:00:00.000Z",
               "clarificationId": null, "waitingOn": null, "respondingTo": null})
    );
    ask(root, T0 + MINUTE, 1, "Cache", "Redis?");

    // The requester finishes: the monitor that follows the hook abandons its open record.
    let out = json_at(root, T0 + 2 * MINUTE, &["hook", "finish", "engineer", "1"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["agent"]["status"], "done");
    assert_eq!(v["monitor"]["abandoned"], json!(["CLR-1-001"]));
    assert_eq!(v["events"][0]["type"], "clarification-abandoned");
    assert_eq!(v["events"][0]["reason"], "requester engineer is done");
    assert_eq!(
        read_ledger(root, 1)["clarifications"][0]["status"],
        "abandoned"
    );

    // Without an issue: issue null. done → working is allowed: no warning.
    let out = json_at(root, T0 + 3 * MINUTE, &["hook", "start", "engineer"]);
    assert_eq!(out.code, 0);
    assert!(out.stderr.is_empty(), "{out:#?}");
    assert!(out.json()["agent"]["issue"].is_null());
    // working → working on a fresh agent (absent → working) is a fact; a transition outside
    // the table (idle → done) is recorded with a warning on stderr.
    let out = json_at(root, T0, &["state", "--agent=reviewer", "--status=idle"]);
    assert_eq!(out.code, 0);
    let out = json_at(root, T0, &["hook", "finish", "reviewer", "9"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stderr.contains("warning"), "{out:#?}");
    assert_eq!(out.json()["agent"]["status"], "done");
    // Human output names the agent and status.
    let out = run([
        root_arg(root),
        "hook".into(),
        "start".into(),
        "tester".into(),
        "4".into(),
    ]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("tester: working on issue #4"),
        "{out:#?}"
    );
    // Invalid agents: exit 3, status file untouched.
    let before = bytes(&status_path(root));
    assert_fails(
        &json_in(root, &["hook", "start", "Engineer"]),
        3,
        "INVALID_AGENT",
    );
    assert_fails(
        &json_in(root, &["hook", "start", "--", "-x"]),
        3,
        "INVALID_AGENT",
    );
    assert_eq!(bytes(&status_path(root)), before);
}

#[test]
fn ready_lists_blocked_and_ready_issues() {
    let dir = workspace();
    let root = dir.path();
    let v = json_at(root, T0, &["ready"]).json();
    assert_eq!(keys(&v), set(&["ok", "issues", "monitor", "errors"]));
    assert_eq!(v["issues"], json!([]));
    let out = run([root_arg(root), "ready".into()]);
    assert!(
        out.stdout.contains("no issue has clarifications"),
        "{out:#?}"
    );

    ask(root, T0, 1, "Free", "non-blocking?");
    ask_blocking(root, T0, 2, "architect", "First");
    ask_blocking(root, T0 + MINUTE, 2, "product-manager", "Second");
    let out = json_at(root, T0 + 2 * MINUTE, &["ready"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_monitor_report(&v["monitor"]);
    assert_eq!(
        v["issues"],
        json!([
            {"issueNumber": 1, "blocked": []},
            {"issueNumber": 2, "blocked": [
                {"id": "CLR-2-001", "waitingOn": "architect"},
                {"id": "CLR-2-002", "waitingOn": "product-manager"}]}
        ])
    );
    let out = run([
        root_arg(root),
        format!("--now={}", T0 + 2 * MINUTE),
        "ready".into(),
    ]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("#1 ready"), "{out:#?}");
    assert!(
        out.stdout
            .contains("#2 BLOCKED: CLR-2-001 waiting on architect (+1 more)"),
        "{out:#?}"
    );
}

#[test]
fn state_reads_and_sets_statuses() {
    let dir = workspace();
    let root = dir.path();
    let out = json_in(root, &["state"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json(), json!({"ok": true, "statuses": {}}));
    assert!(
        !status_path(root).exists(),
        "reading must not create the status file"
    );
    let out = run([root_arg(root), "state".into()]);
    assert!(out.stdout.contains("no agent statuses"), "{out:#?}");

    let out = json_at(
        root,
        T0,
        &[
            "state",
            "--agent=engineer",
            "--status=working",
            "--issue=42",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "statuses"]));
    assert_eq!(
        v["statuses"]["engineer"],
        json!({"status": "working", "issue": 42, "lastActivity": "2026-11-22T10:00:00.000Z",
               "clarificationId": null, "waitingOn": null, "respondingTo": null})
    );
    let out = json_at(
        root,
        T0,
        &[
            "state",
            "--agent=architect",
            "--status=blocked-clarification",
        ],
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("warning"),
        "absent → blocked is outside the table: {out:#?}"
    );
    let v = json_in(root, &["state"]).json();
    assert_eq!(keys(&v["statuses"]), set(&["architect", "engineer"]));
    let out = run([root_arg(root), "state".into()]);
    assert!(
        out.stdout.contains("engineer") && out.stdout.contains("#42"),
        "{out:#?}"
    );
    // Usage errors: --agent without --status, an unknown status value.
    assert_usage(&json_in(root, &["state", "--agent=engineer"]));
    assert_usage(&json_in(
        root,
        &["state", "--agent=engineer", "--status=sleeping"],
    ));
}

#[test]
fn demo_plays_in_a_given_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo");
    let out = run([root_arg(&root), "--json".into(), "demo".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "root", "stats"]));
    assert!(v["stats"]["total"].as_u64().unwrap() > 0);
    assert_eq!(json_in(&root, &["clarify", "verify"]).code, 0);
    // A workspace that already holds ledgers is refused.
    assert_fails(&json_in(&root, &["demo"]), 3, "INVALID_INPUT");

    let other = dir.path().join("loud");
    let out = run([root_arg(&other), "--color=never".into(), "demo".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("CLR-42-001"), "{out:#?}");
    assert!(!out.stdout.contains('\u{1b}'));
}

#[test]
fn completions_for_bash() {
    let out = run(["completions", "bash"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("_agentx"), "no completion function");
    assert!(
        out.stdout.contains("complete "),
        "no `complete` registration"
    );
    assert!(out.stdout.contains("follow-up"), "subcommands missing");
    assert_usage(&run(["completions", "tcsh-9000"]));
}

// ---------------------------------------------------------------------------------------------
// exit codes

#[test]
fn exit_1_io_errors() {
    let dir = workspace();
    let root = dir.path();
    // A ledger path that is a directory: reading it fails (as root too).
    std::fs::create_dir(ledger_path(root, 5)).unwrap();
    let args = ask_args(5, "T", "Q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 1, "IO_ERROR");
    assert!(
        !clarifications_dir(root).join("issue-5.json.lock").exists(),
        "lock left behind"
    );
    assert_fails(
        &json_in(root, &["clarify", "show", "CLR-5-001"]),
        1,
        "IO_ERROR",
    );
    // Without --json the error goes to stderr.
    let out = run([
        root_arg(root),
        "clarify".into(),
        "show".into(),
        "CLR-5-001".into(),
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.is_empty() && out.stderr.contains("IO_ERROR"),
        "{out:#?}"
    );
    // Other ledgers are unaffected; the monitor reports the bad one and exits 0.
    ask(root, T0, 6, "T", "Q");
    let v = json_at(root, T0, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"][0]["file"], "issue-5.json");
    assert_eq!(v["report"]["errors"][0]["code"], "IO_ERROR");
    std::fs::remove_dir(ledger_path(root, 5)).unwrap();

    // An unreadable ledger (only meaningful when not running as root).
    let path = ledger_path(root, 6);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let out = json_in(root, &["clarify", "show", "CLR-6-001"]);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    if is_root_user() {
        eprintln!("running as root: chmod 000 does not stop reads; skipping that assertion");
        assert_eq!(out.code, 0, "{out:#?}");
    } else {
        assert_fails(&out, 1, "IO_ERROR");
    }
}

#[test]
fn exit_2_usage_errors_print_nothing_on_stdout() {
    let dir = workspace();
    let root = dir.path();
    for argv in [
        vec!["--json", "clarify", "ask", "--bogus"],
        vec!["--json", "--bogus", "clarify", "list"],
        vec!["--json", "clarify", "list", "--unknown=1"],
        vec!["--json", "clarify", "ask", "--issue=1", "--from=engineer"],
        vec![
            "--json",
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
        ],
        vec!["--json", "clarify", "nonsense"],
        vec!["--json", "frobnicate"],
        vec!["--json", "clarify", "list", "--status=done"],
        vec!["--json", "--color=sometimes", "clarify", "list"],
        vec!["--json", "--now=tomorrow", "clarify", "list"],
        vec!["--json", "--now=-5", "clarify", "list"],
        vec!["--json", "clarify", "show"],
        vec!["--json", "clarify", "show", "CLR-1-001", "--issue=1"],
        vec!["--json", "hook", "begin", "engineer"],
        vec!["--json"],
    ] {
        let mut full = vec![root_arg(root)];
        full.extend(argv.iter().map(|s| (*s).to_owned()));
        let out = run(&full);
        assert_eq!(out.code, 2, "{argv:?}: {out:#?}");
        assert!(
            out.stdout.is_empty(),
            "{argv:?}: stdout must be empty: {out:#?}"
        );
        assert!(!out.stderr.is_empty(), "{argv:?}: stderr must explain");
    }
    assert!(!ledger_path(root, 1).exists());
    assert!(!status_path(root).exists());
}

#[test]
fn exit_3_to_6_policy_and_lookup_failures() {
    let dir = workspace();
    let root = dir.path();
    let ask_to = |to: &str, extra: &[&str]| {
        let topic = extra
            .iter()
            .find(|a| a.starts_with("--topic="))
            .map_or("--topic=T", |t| *t);
        let mut a = vec![
            "clarify".to_owned(),
            "ask".into(),
            "--issue=1".into(),
            "--from=engineer".into(),
            format!("--to={to}"),
            topic.to_owned(),
            "--question=Q".into(),
        ];
        a.extend(
            extra
                .iter()
                .filter(|a| !a.starts_with("--topic="))
                .map(|s| (*s).to_owned()),
        );
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        json_at(root, T0, &refs)
    };
    // 3: invalid input.
    assert_fails(&ask_to("engineer", &[]), 3, "SELF_CLARIFICATION");
    assert_fails(&ask_to("human", &[]), 3, "INVALID_AGENT");
    assert_fails(&ask_to("Architect", &[]), 3, "INVALID_AGENT");
    assert_fails(
        &ask_to("architect", &["--workflow=nope"]),
        3,
        "INVALID_WORKFLOW",
    );
    assert_fails(
        &ask_to("architect", &["--workflow=../feature"]),
        3,
        "INVALID_WORKFLOW",
    );
    let v = assert_fails(&ask_to("architect", &["--topic=   "]), 3, "TEXT_EMPTY");
    assert!(v.get("clarification").is_none());
    // 4: refused by policy.
    let v = assert_fails(&ask_to("reviewer", &[]), 4, "SCOPE_VIOLATION");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("reviewer") && message.contains("architect"),
        "{message}"
    );
    assert_fails(
        &ask_to("architect", &["--workflow=bug"]),
        4,
        "BLOCKING_NOT_ALLOWED",
    );
    assert_fails(
        &ask_to("architect", &["--step=architecture"]),
        4,
        "SCOPE_VIOLATION",
    );
    // Nothing was written by any refusal.
    assert!(!ledger_path(root, 1).exists());
    assert!(!status_path(root).exists());
    // 5: not found, and no file created for the missing issue.
    assert_fails(
        &json_at(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-9-001",
                "--from=architect",
                "--body=x",
            ],
        ),
        5,
        "NOT_FOUND",
    );
    assert_fails(
        &json_at(root, T0, &["clarify", "resolve", "CLR-9-001"]),
        5,
        "NOT_FOUND",
    );
    assert!(std::fs::read_dir(clarifications_dir(root))
        .unwrap()
        .next()
        .is_none());
    ask(root, T0, 9, "T", "Q");
    assert_fails(
        &json_at(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-9-002",
                "--from=architect",
                "--body=x",
            ],
        ),
        5,
        "NOT_FOUND",
    );
    // 6: invalid transition, naming the status and what is allowed.
    let v = assert_fails(
        &json_at(root, T0, &["clarify", "resolve", "CLR-9-001"]),
        6,
        "INVALID_TRANSITION",
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("pending"),
        "{v}"
    );
    // Without --json: stderr only.
    let out = run([
        root_arg(root),
        "clarify".into(),
        "resolve".into(),
        "CLR-9-001".into(),
    ]);
    assert_eq!(out.code, 6);
    assert!(out.stdout.is_empty(), "{out:#?}");
    assert!(out.stderr.contains("INVALID_TRANSITION"), "{out:#?}");
}

fn foreign_lock(pid: u64, host: &str, timestamp: i64) -> String {
    json!({"pid": pid, "hostname": host, "timestamp": timestamp, "agent": "someone-else"})
        .to_string()
}

#[test]
fn exit_7_lock_timeout_on_a_fresh_foreign_lock() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    ask(root, T0, 3, "T", "Q");
    let ledger_before = bytes(&ledger_path(root, 3));
    let lock = clarifications_dir(root).join("issue-3.json.lock");
    // Held by a live process (this test) on this host, and by an unknown pid on another host.
    for content in [
        foreign_lock(u64::from(std::process::id()), &this_host(), wall_ms()),
        foreign_lock(999_999_999, "some-other-host.example", wall_ms()),
        json!({"agent": "engineer", "created": chrono::DateTime::from_timestamp_millis(wall_ms()).unwrap().to_rfc3339()}).to_string(),
    ] {
        std::fs::write(&lock, &content).unwrap();
        let started = Instant::now();
        let args = ask_args(3, "Another", "another?");
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = json_at(root, T0, &refs);
        let took = started.elapsed();
        assert_fails(&out, 7, "LOCK_TIMEOUT");
        assert!(took >= Duration::from_millis(200), "gave up after {took:?}");
        assert!(took < Duration::from_secs(4), "waited {took:?} for a 200 ms timeout");
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), content, "foreign lock touched");
        assert_eq!(bytes(&ledger_path(root, 3)), ledger_before, "ledger written without the lock");
        let out = json_at(root, T0, &["clarify", "answer", "CLR-3-001", "--from=architect", "--body=x"]);
        assert_fails(&out, 7, "LOCK_TIMEOUT");
    }
    std::fs::remove_file(&lock).unwrap();
    ask(root, T0, 3, "Another", "another?");
    assert_eq!(
        ledger_ids(&read_ledger(root, 3)),
        ["CLR-3-001", "CLR-3-002"]
    );
}

#[test]
fn dead_pid_and_old_locks_are_taken_at_once() {
    let dir = workspace();
    let root = dir.path();
    // A lock that was not broken at once would be waited on for up to 10 s (then exit 7).
    write_config(root, "[clarify]\nlock_timeout_ms = 10000\n");
    let lock = clarifications_dir(root).join("issue-4.json.lock");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = u64::from(child.id());
    child.wait().unwrap();
    let cases = [
        (
            "dead pid on this host",
            foreign_lock(dead, &this_host(), wall_ms()),
        ),
        (
            "impossible pid",
            foreign_lock(999_999_999, &this_host(), wall_ms()),
        ),
        (
            "live pid, older than stale_lock_ms",
            foreign_lock(
                u64::from(std::process::id()),
                &this_host(),
                wall_ms() - 60 * 60 * 1000,
            ),
        ),
        (
            "old PowerShell lock",
            r#"{"agent":"engineer","created":"2000-01-01T00:00:00Z"}"#.to_owned(),
        ),
    ];
    for (i, (what, content)) in cases.iter().enumerate() {
        std::fs::write(&lock, content).unwrap();
        let started = Instant::now();
        ask(root, T0, 4, &format!("topic {i}"), "q?");
        let took = started.elapsed();
        // Well under the 10 s lock timeout and the 30 s stale age: the lock was broken at once.
        assert!(took < Duration::from_secs(4), "{what}: took {took:?}");
        assert!(!lock.exists(), "{what}: lock left behind");
    }
    assert_eq!(
        read_ledger(root, 4)["clarifications"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // Leftovers of broken locks are not left in the directory.
    let names: Vec<String> = std::fs::read_dir(clarifications_dir(root))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["issue-4.json"], "{names:?}");
}

#[test]
fn exit_8_corrupt_ledger_is_never_overwritten() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 2, "Good", "fine?");
    let path = ledger_path(root, 1);
    let corrupt = b"{\"issueNumber\": 1, \"clarifications\": [ {\"id\": \"CLR-1-001\", trunc";
    std::fs::write(&path, corrupt).unwrap();
    let ask1 = ask_args(1, "T", "Q");
    let ask1: Vec<&str> = ask1.iter().map(String::as_str).collect();
    let attempts: Vec<Vec<&str>> = vec![
        ask1,
        vec![
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=x",
        ],
        vec![
            "clarify",
            "follow-up",
            "CLR-1-001",
            "--from=engineer",
            "--question=x",
        ],
        vec!["clarify", "resolve", "CLR-1-001"],
        vec!["clarify", "escalate", "CLR-1-001"],
        vec!["clarify", "abandon", "CLR-1-001"],
        vec!["clarify", "show", "CLR-1-001"],
        vec!["clarify", "show", "--issue=1"],
    ];
    for argv in &attempts {
        let out = json_at(root, T0, argv);
        let v = assert_fails(&out, 8, "LEDGER_CORRUPT");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("issue-1.json"),
            "{v}"
        );
        assert_eq!(bytes(&path), corrupt, "{argv:?} changed a corrupt ledger");
    }
    // Read-only and monitor commands skip it, report it, and exit 0; verify exits 8.
    let v = json_at(root, T0 + 600 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"][0]["file"], "issue-1.json");
    assert_eq!(v["report"]["errors"][0]["code"], "LEDGER_CORRUPT");
    assert_eq!(
        v["report"]["stale"],
        json!(["CLR-2-001"]),
        "others are still processed"
    );
    let v = json_at(root, T0, &["ready"]);
    assert_eq!(v.code, 0);
    let v = json_in(root, &["clarify", "list"]).json();
    assert_eq!(v["clarifications"][0]["id"], "CLR-2-001");
    assert_eq!(
        json_at(root, T0, &["hook", "start", "engineer", "1"]).code,
        0
    );
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 8);
    assert_eq!(out.json()["problems"][0]["file"], "issue-1.json");
    assert_eq!(bytes(&path), corrupt);
    // A corrupt status file stops mutations before anything is written (also 8).
    std::fs::write(status_path(root), "[1, 2").unwrap();
    let before = bytes(&ledger_path(root, 2));
    let ask2 = ask_args(2, "T2", "Q2");
    let ask2: Vec<&str> = ask2.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &ask2), 8, "LEDGER_CORRUPT");
    assert_fails(&json_in(root, &["state"]), 8, "LEDGER_CORRUPT");
    assert_fails(
        &json_at(root, T0, &["hook", "start", "engineer"]),
        8,
        "LEDGER_CORRUPT",
    );
    // The monitor reports it (abandonment needs statuses) and still exits 0.
    let out = json_at(root, T0, &["clarify", "monitor"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let errors = out.json()["report"]["errors"].clone();
    assert!(
        errors
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["file"] == "agent-status.json" && e["code"] == "LEDGER_CORRUPT"),
        "{errors}"
    );
    assert_eq!(bytes(&ledger_path(root, 2)), before);
    assert_eq!(bytes(&status_path(root)), b"[1, 2");
}

// ---------------------------------------------------------------------------------------------
// colour, discovery, help, AGENTX_NOW

#[test]
fn colour_control() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "Colour", "pending is yellow?");
    let list = |color: Option<&str>, env: &[(&str, &str)]| {
        let mut cmd = agentx();
        cmd.arg(root_arg(root));
        if let Some(c) = color {
            cmd.arg(format!("--color={c}"));
        }
        cmd.args(["clarify", "list"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = Out::from_output(&cmd.output().unwrap());
        assert_eq!(out.code, 0, "{out:#?}");
        assert!(out.stdout.contains("CLR-1-001"), "{out:#?}");
        out.stdout.contains('\u{1b}')
    };
    assert!(list(Some("always"), &[]), "--color always must colour");
    assert!(!list(Some("never"), &[]), "--color never must not colour");
    assert!(!list(None, &[]), "auto on a pipe must not colour");
    assert!(!list(None, &[("NO_COLOR", "1")]));
    assert!(!list(Some("auto"), &[("NO_COLOR", "1")]));
    assert!(!list(Some("never"), &[("CLICOLOR_FORCE", "1")]));
    // NO_COLOR wins over a forced colour in auto mode.
    assert!(
        list(None, &[("CLICOLOR_FORCE", "1")]),
        "CLICOLOR_FORCE colours in auto mode"
    );
    assert!(!list(None, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
    // Errors on stderr follow the same rule.
    let err = |color: &str| {
        let out = run([
            root_arg(root),
            format!("--color={color}"),
            "clarify".into(),
            "show".into(),
            "CLR-1-009".into(),
        ]);
        assert_eq!(out.code, 5);
        out.stderr.contains('\u{1b}')
    };
    assert!(err("always"));
    assert!(!err("never"));
    let mut cmd = agentx();
    cmd.args([
        root_arg(root),
        "clarify".into(),
        "show".into(),
        "CLR-1-009".into(),
    ])
    .env("NO_COLOR", "1");
    assert!(!Out::from_output(&cmd.output().unwrap())
        .stderr
        .contains('\u{1b}'));
    // --json output never carries colour.
    let out = run([
        root_arg(root),
        "--json".into(),
        "--color=always".into(),
        "clarify".into(),
        "list".into(),
    ]);
    assert!(!out.stdout.contains('\u{1b}'), "{out:#?}");
    out.json();
}

#[test]
fn root_discovery_from_nested_directories_and_cwd_fallback() {
    let dir = workspace();
    let root = dir.path();
    let nested = root.join("src/deep/er");
    std::fs::create_dir_all(&nested).unwrap();
    let args = ask_args(11, "From below", "found the root?");
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(&args)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(
        ledger_path(root, 11).exists(),
        "the ledger must land in the ancestor workspace"
    );
    assert!(!nested.join(".agentx").exists());
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .args(["--json", "clarify", "list"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.json()["clarifications"][0]["id"], "CLR-11-001");

    // No .agentx anywhere above: the current directory is the root.
    let bare = tempfile::tempdir().unwrap();
    if let Some(holder) = bare.path().ancestors().find(|d| d.join(".agentx").is_dir()) {
        eprintln!(
            "skipping the cwd-fallback half: {} holds .agentx",
            holder.display()
        );
        return;
    }
    // Without init there are no workflows: a request names the (empty) choice, and being
    // refused, it creates nothing (no stray .agentx/ that would capture later discovery).
    let out = Out::from_output(
        &agentx()
            .current_dir(bare.path())
            .arg("--json")
            .args(ask_args(1, "Here", "cwd?"))
            .output()
            .unwrap(),
    );
    assert_fails(&out, 3, "INVALID_WORKFLOW");
    assert_eq!(snapshot(bare.path()), vec![], "a refused ask created files");
    let out = Out::from_output(
        &agentx()
            .current_dir(bare.path())
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(["hook", "start", "engineer", "1"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(
        status_path(bare.path()).is_file(),
        "the status file lands in the cwd"
    );
    let other = tempfile::tempdir().unwrap();
    let out = Out::from_output(
        &agentx()
            .current_dir(other.path())
            .args(["--json", "init"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(other
        .path()
        .join(".agentx/workflows/feature.toml")
        .is_file());
    // --root wins over the current directory.
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .args([
                root_arg(other.path()),
                "--json".into(),
                "clarify".into(),
                "list".into(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(out.json()["clarifications"], json!([]));
}

#[test]
fn every_help_shows_an_example() {
    let commands: &[&[&str]] = &[
        &[],
        &["init"],
        &["clarify"],
        &["clarify", "ask"],
        &["clarify", "answer"],
        &["clarify", "follow-up"],
        &["clarify", "resolve"],
        &["clarify", "escalate"],
        &["clarify", "abandon"],
        &["clarify", "list"],
        &["clarify", "show"],
        &["clarify", "monitor"],
        &["clarify", "stale"],
        &["clarify", "verify"],
        &["clarify", "stats"],
        &["hook"],
        &["hook", "start"],
        &["hook", "finish"],
        &["ready"],
        &["state"],
        &["demo"],
        &["completions"],
    ];
    let mut missing = Vec::new();
    for path in commands {
        let mut argv: Vec<&str> = path.to_vec();
        argv.push("--help");
        let out = run(&argv);
        assert_eq!(out.code, 0, "{argv:?}: {out:#?}");
        if !out.stdout.contains("Example") {
            missing.push(path.join(" "));
        }
    }
    assert!(missing.is_empty(), "--help without an example: {missing:?}");
    let out = run(["--version"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("agentx "), "{out:#?}");
}

#[test]
fn now_comes_from_agentx_now() {
    let dir = workspace();
    let root = dir.path();
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "2030-01-02T03:04:05.678999Z")
            .arg(root_arg(root))
            .arg("--json")
            .args(ask_args(1, "Env", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let r = out.json()["clarification"].clone();
    assert_eq!(
        r["created"], "2030-01-02T03:04:05.678Z",
        "truncated to whole ms"
    );
    // Epoch milliseconds work too, and --now wins over the environment.
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "1000")
            .arg(root_arg(root))
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(ask_args(2, "Flag", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(
        out.json()["clarification"]["created"],
        "2026-11-22T10:00:00.000Z"
    );
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "86400000")
            .arg(root_arg(root))
            .arg("--json")
            .args(ask_args(3, "Epoch", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(
        out.json()["clarification"]["created"],
        "1970-01-02T00:00:00.000Z"
    );
    // An invalid AGENTX_NOW is a usage error.
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "soon")
            .args([
                root_arg(root),
                "--json".into(),
                "clarify".into(),
                "list".into(),
            ])
            .output()
            .unwrap(),
    );
    assert_usage(&out);
}

// ---------------------------------------------------------------------------------------------
// bad input

#[test]
fn wrongly_typed_toml_is_config_invalid_with_position() {
    let dir = workspace();
    let root = dir.path();
    let workflow = "# a custom feature workflow\n[[steps]]\nid = \"implement\"\nagent = \"engineer\"\ncan_clarify = [\n  \"architect\",\n]\nclarify_sla_minutes = \"sixty\"\n";
    std::fs::write(root.join(".agentx/workflows/feature.toml"), workflow).unwrap();
    let args = ask_args(1, "T", "Q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let before = snapshot(root);
    let v = assert_fails(&json_at(root, T0, &refs), 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(".agentx/workflows/feature.toml:8:23"),
        "{message}"
    );
    assert!(message.contains("clarify_sla_minutes"), "{message}");
    assert_eq!(snapshot(root), before, "a refused request wrote something");

    // Out of range is CONFIG_INVALID too.
    std::fs::write(
        root.join(".agentx/workflows/feature.toml"),
        "[[steps]]\nid = \"implement\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_max_rounds = 21\n",
    )
    .unwrap();
    let v = assert_fails(&json_at(root, T0, &refs), 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("feature.toml:5:"),
        "{v}"
    );
    // Not TOML at all.
    std::fs::write(
        root.join(".agentx/workflows/feature.toml"),
        "[[steps]\nid = ",
    )
    .unwrap();
    let v = assert_fails(&json_at(root, T0, &refs), 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("feature.toml:1:"),
        "{v}"
    );

    // config.toml with a wrong type: every command that reads it refuses.
    std::fs::write(
        root.join(".agentx/workflows/feature.toml"),
        agentx_clarify_core::defaults::DEFAULT_WORKFLOWS[0].1,
    )
    .unwrap();
    write_config(root, "[clarify]\nmax_retries = \"two\"\n");
    let before = snapshot(root);
    for argv in [
        refs.clone(),
        vec!["clarify", "monitor"],
        vec!["ready"],
        vec!["hook", "start", "engineer"],
    ] {
        let v = assert_fails(&json_at(root, T0, &argv), 3, "CONFIG_INVALID");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("config.toml:2:15"),
            "{argv:?}: {v}"
        );
    }
    assert_eq!(snapshot(root), before);
}

#[test]
fn overlong_text_is_refused_and_nothing_written() {
    let dir = workspace();
    let root = dir.path();
    let before = snapshot(root);
    let long_topic = "t".repeat(201);
    let long_body = "b".repeat(2001);
    for (topic, question) in [(long_topic.as_str(), "q"), ("t", long_body.as_str())] {
        let args = ask_args(1, topic, question);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_fails(&json_at(root, T0, &refs), 3, "TEXT_TOO_LONG");
    }
    let long_field = format!("--field={}", "f".repeat(201));
    let mut args = ask_args(1, "t", "q");
    args.push(long_field);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 3, "TEXT_TOO_LONG");
    let mut args = ask_args(1, "t", "q");
    args.extend((0..11).map(|i| format!("--suggest=s{i}")));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 3, "TEXT_TOO_LONG");
    // Multi-byte characters count once each: 201 × 'ü' is over.
    let args = ask_args(1, &"ü".repeat(201), "q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 3, "TEXT_TOO_LONG");
    assert_eq!(snapshot(root), before, "a refused request wrote something");

    // On an existing record: answers, follow-ups and messages.
    ask(root, T0, 1, "t", "q");
    let ledger = bytes(&ledger_path(root, 1));
    let statuses = bytes(&status_path(root));
    let body = format!("--body={long_body}");
    assert_fails(
        &json_at(
            root,
            T0,
            &["clarify", "answer", "CLR-1-001", "--from=architect", &body],
        ),
        3,
        "TEXT_TOO_LONG",
    );
    let message = format!("--message={long_body}");
    assert_fails(
        &json_at(root, T0, &["clarify", "escalate", "CLR-1-001", &message]),
        3,
        "TEXT_TOO_LONG",
    );
    // A configured limit applies.
    write_config(root, "[clarify]\nmax_body_chars = 10\n");
    assert_fails(
        &json_at(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-1-001",
                "--from=architect",
                "--body=eleven char",
            ],
        ),
        3,
        "TEXT_TOO_LONG",
    );
    assert_eq!(bytes(&ledger_path(root, 1)), ledger);
    assert_eq!(bytes(&status_path(root)), statuses);
}

#[test]
fn invalid_ids_are_refused_with_exit_3() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "t", "q");
    let before = snapshot(dir.path());
    for id in [
        "CLR-1-01",
        "clr-1-001",
        "CLR-01-001",
        "CLR-1-001x",
        "CLR--1-001",
        "CLR-1-",
        "../CLR-1-001",
        "CLR-1-001/../../x",
        "CLR-2147483648-001",
        "CLR-1-00a",
        "-CLR-1-001",
        "",
    ] {
        for argv in [
            vec![
                "clarify",
                "answer",
                "--from=architect",
                "--body=x",
                "--",
                id,
            ],
            vec![
                "clarify",
                "follow-up",
                "--from=engineer",
                "--question=x",
                "--",
                id,
            ],
            vec!["clarify", "resolve", "--", id],
            vec!["clarify", "escalate", "--", id],
            vec!["clarify", "abandon", "--", id],
            vec!["clarify", "show", "--", id],
        ] {
            let out = json_at(root, T0, &argv);
            assert_fails(&out, 3, "INVALID_ID");
        }
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn path_like_issue_numbers_are_refused_and_create_nothing() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    assert_eq!(json_in(&root, &["init"]).code, 0);
    let before = snapshot(outer.path());
    for issue in [
        "../1",
        "1/2",
        "-1",
        "01",
        "+1",
        " 1",
        "1 ",
        "1.0",
        "0x1",
        "2147483648",
        "99999999999999999999",
        "１",
        "",
        "issue-1",
        "1\n",
        "\n1",
    ] {
        let i = format!("--issue={issue}");
        let mut ask = ask_args(1, "t", "q");
        ask[2] = i.clone();
        let ask: Vec<&str> = ask.iter().map(String::as_str).collect();
        let attempts: Vec<Vec<&str>> = vec![
            ask,
            vec!["clarify", "list", &i],
            vec!["clarify", "show", &i],
            vec!["hook", "start", "engineer", "--", issue],
            vec!["hook", "finish", "engineer", "--", issue],
            vec!["state", "--agent=engineer", "--status=working", &i],
        ];
        for argv in &attempts {
            let out = json_at(&root, T0, argv);
            if issue.contains('\n') {
                // The core quotes the raw value into the message, so a newline in the input
                // makes a two-line message (reported upstream); the envelope is still one line.
                assert_eq!(out.code, 3, "{out:#?}");
                assert_eq!(out.code_str(), "INVALID_ISSUE");
                continue;
            }
            let v = assert_fails(&out, 3, "INVALID_ISSUE");
            assert!(
                v["error"]["message"].as_str().unwrap().contains("issue"),
                "{v}"
            );
        }
    }
    assert_eq!(
        snapshot(outer.path()),
        before,
        "a refused issue number created files"
    );
}

#[test]
fn symlinked_ledgers_and_locks_are_refused() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    assert_eq!(json_in(&root, &["init"]).code, 0);
    // The target is a perfectly valid ledger elsewhere; it must not be read through or written.
    let elsewhere = workspace();
    ask(elsewhere.path(), T0, 1, "t", "q");
    let target = ledger_path(elsewhere.path(), 1);
    let target_before = bytes(&target);
    std::os::unix::fs::symlink(&target, ledger_path(&root, 1)).unwrap();
    let args = ask_args(1, "t2", "q2");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    for argv in [
        refs,
        vec![
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=x",
        ],
        vec!["clarify", "escalate", "CLR-1-001"],
        vec!["clarify", "show", "CLR-1-001"],
    ] {
        let v = assert_fails(&json_at(&root, T0, &argv), 1, "IO_ERROR");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("symbolic link"),
            "{v}"
        );
        assert_eq!(
            bytes(&target),
            target_before,
            "{argv:?} touched the symlink's target"
        );
    }
    assert!(std::fs::symlink_metadata(ledger_path(&root, 1))
        .unwrap()
        .file_type()
        .is_symlink());
    // The monitor and verify report it; they never follow it.
    let v = json_at(&root, T0 + 600 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"][0]["file"], "issue-1.json");
    assert_eq!(v["report"]["errors"][0]["code"], "IO_ERROR");
    assert_eq!(json_in(&root, &["clarify", "verify"]).code, 8);
    assert_eq!(bytes(&target), target_before);

    // A symlinked lock file is refused as well (and the link's target is not created).
    let lock_target = outer.path().join("lock-target");
    std::os::unix::fs::symlink(
        &lock_target,
        clarifications_dir(&root).join("issue-2.json.lock"),
    )
    .unwrap();
    let args = ask_args(2, "t", "q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(&root, T0, &refs), 1, "IO_ERROR");
    assert!(!lock_target.exists());
    assert!(!ledger_path(&root, 2).exists());

    // A symlinked status file is refused before any ledger is written.
    let status_target = outer.path().join("status-target.json");
    std::fs::write(&status_target, "{}\n").unwrap();
    std::os::unix::fs::symlink(&status_target, status_path(&root)).unwrap();
    let args = ask_args(3, "t", "q");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(&root, T0, &refs), 1, "IO_ERROR");
    assert!(!ledger_path(&root, 3).exists());
    assert_fails(
        &json_at(
            &root,
            T0,
            &["state", "--agent=engineer", "--status=working"],
        ),
        1,
        "IO_ERROR",
    );
    assert_eq!(bytes(&status_target), b"{}\n");
}

#[test]
fn a_refused_request_creates_no_state_directories() {
    let dir = workspace();
    let root = dir.path();
    std::fs::remove_dir_all(root.join(".agentx/state")).unwrap();
    let before = snapshot(root);
    let mut args = ask_args(1, "t", "q");
    args[4] = "--to=reviewer".into();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 4, "SCOPE_VIOLATION");
    let mut args = ask_args(1, "t", "q");
    args.push("--workflow=missing".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails(&json_at(root, T0, &refs), 3, "INVALID_WORKFLOW");
    assert_fails(
        &json_at(
            root,
            T0,
            &[
                "clarify",
                "answer",
                "CLR-1-001",
                "--from=architect",
                "--body=x",
            ],
        ),
        5,
        "NOT_FOUND",
    );
    assert_eq!(snapshot(root), before, "a refused command created files");
    // An accepted one creates what it needs.
    ask(root, T0, 1, "t", "q");
    assert!(ledger_path(root, 1).is_file() && status_path(root).is_file());
}

#[test]
fn only_canonical_ledger_names_are_ledgers() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "t", "q");
    let clar = clarifications_dir(root);
    for name in [
        "issue-01.json",
        "issue-1.json.bak",
        "issue-x.json",
        "issue-1.JSON",
        "issue--1.json",
        ".agentx-tmp-abc123",
        "notes.txt",
    ] {
        std::fs::write(clar.join(name), "garbage, not JSON").unwrap();
    }
    let out = json_in(root, &["clarify", "verify"]);
    assert_eq!(out.code, 0, "non-ledger files were verified: {out:#?}");
    let v = json_at(root, T0, &["clarify", "monitor"]).json();
    assert_eq!(v["report"]["errors"], json!([]), "{v}");
    let v = json_in(root, &["clarify", "list"]).json();
    assert_eq!(v["clarifications"].as_array().unwrap().len(), 1);
    assert_eq!(
        json_in(root, &["clarify", "stats"]).json()["stats"]["total"],
        1
    );
    // A canonical name above 2^31-1 is reported (INVALID_ISSUE) and skipped, not processed.
    std::fs::write(
        clar.join("issue-4294967296.json"),
        r#"{"issueNumber": 4294967296, "clarifications": []}"#,
    )
    .unwrap();
    let v = json_at(root, T0, &["ready"]).json();
    assert_eq!(v["issues"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["monitor"]["errors"][0]["file"], "issue-4294967296.json");
    assert_eq!(v["monitor"]["errors"][0]["code"], "INVALID_ISSUE");
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 8);
}

#[test]
fn written_files_get_ordinary_permissions_and_keep_their_own() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = workspace();
    let root = dir.path();
    // What any new file gets here (0666 less the umask the binary inherits).
    let probe = root.join("probe");
    std::fs::write(&probe, b"").unwrap();
    let ordinary = mode(&probe);
    ask(root, T0, 1, "t", "q");
    assert_eq!(mode(&ledger_path(root, 1)), ordinary, "new ledger");
    assert_eq!(mode(&status_path(root)), ordinary, "new status file");
    // A rewrite keeps the file's mode (the atomic replace must not reset it to 0600).
    for (path, m) in [(ledger_path(root, 1), 0o640), (status_path(root), 0o604)] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let out = json_at(
        root,
        T0,
        &[
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
            "--body=a",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(mode(&ledger_path(root, 1)), 0o640);
    assert_eq!(mode(&status_path(root)), 0o604);
}

#[test]
fn monitor_sweeps_temp_files_left_by_crashed_writers() {
    let ws = workspace();
    let dir = clarifications_dir(ws.path());
    let old = dir.join(".agentx-tmp-crashed");
    let fresh = dir.join(".agentx-tmp-in-flight");
    std::fs::write(&old, b"half a ledger").unwrap();
    std::fs::write(&fresh, b"being written").unwrap();
    let aged = std::process::Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(&old)
        .status()
        .unwrap();
    assert!(aged.success());
    let out = json_in(ws.path(), &["clarify", "monitor", "--dry-run"]);
    assert_eq!(out.code, 0);
    assert!(old.exists(), "a dry run writes nothing");
    let out = json_in(ws.path(), &["clarify", "monitor"]);
    assert_eq!(out.code, 0);
    assert!(
        !old.exists(),
        "an hour-old temp file belongs to no live writer"
    );
    assert!(
        fresh.exists(),
        "a fresh one may belong to a writer holding its lock"
    );
}
