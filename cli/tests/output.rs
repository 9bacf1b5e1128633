//! What the binary prints: the exact `--json` envelopes of docs/protocol.md §11.1 (their keys, nothing on
//! stderr), the files as written on disk (pretty JSON, a newline, lowercase hex hashes, no write
//! for a replay or a dry run), the human output of every command, and warnings and errors on
//! stderr. What the protocol decides in these scenarios is checked by the vectors
//! (tests/vectors/, on every surface).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{json, Value};

#[test]
fn ask_json_envelope_and_files_on_disk() {
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
    let thread = record["thread"].as_array().unwrap();
    let hash = thread[0]["hash"].as_str().unwrap();
    assert!(
        hash.len() == 64
            && hash
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let events = v["events"].as_array().unwrap();
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

    // The file: pretty JSON, trailing newline.
    let text = std::fs::read_to_string(ledger_path(root, 42)).unwrap();
    assert!(text.ends_with('\n') && text.contains("\n  "), "{text}");

    // An idempotent replay writes nothing, not even the same bytes again.
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
    assert_mutation(&replay.json());
    assert_eq!(bytes(&ledger_path(root, 42)), ledger_before);
    assert_eq!(bytes(&status_path(root)), status_before);
}

#[test]
fn record_commands_json_envelopes_and_human_show_and_list() {
    let dir = workspace();
    let root = dir.path();
    let id = "CLR-7-001";
    ask_blocking(root, T0, 7, "architect", "Cache layer");
    let answer = |now: i64, body: &str| {
        json_at(
            root,
            now,
            &[
                "clarify",
                "answer",
                id,
                "--from=architect",
                &format!("--body={body}"),
            ],
        )
    };
    assert_mutation(&answer(T0 + 4 * MINUTE, "Redis, see ADR-7.").json());
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
    assert_mutation(&out.json());
    assert_eq!(answer(T0 + 6 * MINUTE, "allkeys-lru").code, 0);
    assert_mutation(&json_at(root, T0 + 7 * MINUTE, &["clarify", "resolve", id]).json());
    ask(root, T0 + 9 * MINUTE, 7, "Queue", "Kafka or SQS?");
    ask(root, T0 + 9 * MINUTE, 7, "Other", "Escalate me?");
    assert_mutation(
        &json_at(
            root,
            T0 + 10 * MINUTE,
            &["clarify", "escalate", "CLR-7-003"],
        )
        .json(),
    );

    // list and show: exactly their keys.
    assert_eq!(
        keys(&json_in(root, &["clarify", "list"]).json()),
        set(&["ok", "clarifications", "errors"])
    );
    assert_eq!(
        keys(&json_in(root, &["clarify", "show", id]).json()),
        set(&["ok", "clarification"])
    );
    assert_eq!(
        keys(&json_in(root, &["clarify", "show", "--issue=7"]).json()),
        set(&["ok", "ledger"])
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
}

#[test]
fn a_refusal_that_wrote_carries_the_monitor_report() {
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
    assert_monitor_report(&out.json()["monitor"]);
}

#[test]
fn monitor_json_envelope_dry_run_writes_nothing_and_stale_is_an_alias() {
    let dir = workspace();
    let root = dir.path();
    ask_blocking(root, T0, 1, "architect", "Cache");
    let id = "CLR-1-001";
    let path = ledger_path(root, 1);
    let before = bytes(&path);

    let v = json_at(root, T0 + 30 * MINUTE, &["clarify", "monitor"]).json();
    assert_eq!(keys(&v), set(&["ok", "report", "events"]));
    assert_monitor_report(&v["report"]);

    // Dry run after the SLA: not a byte written.
    let out = json_at(root, T0 + 61 * MINUTE, &["clarify", "monitor", "--dry-run"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(bytes(&path), before, "--dry-run wrote the ledger");

    // `stale` is an alias of `monitor`, and it writes.
    let out = json_at(root, T0 + 61 * MINUTE, &["clarify", "stale"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["report"]["stale"], json!([id]));
    assert_eq!(v["report"]["retried"], json!([id]));
    let record = &read_ledger(root, 1)["clarifications"][0];
    assert_eq!(
        (record["status"].as_str(), record["retries"].as_u64()),
        (Some("pending"), Some(1))
    );

    // Human output of the monitor.
    let out = run([
        root_arg(root),
        format!("--now={}", T0 + 200 * MINUTE),
        "clarify".into(),
        "monitor".into(),
    ]);
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn verify_json_envelope_and_human_output() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "Cache", "Redis?");
    ask(root, T0, 2, "Queue", "Kafka?");
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
    let problems = v["problems"].as_array().unwrap();
    assert!(!problems.is_empty());
    for p in problems {
        assert_eq!(keys(p), set(&["file", "id", "message"]));
    }
    // Without --json: problems on stdout, the error on stderr, still 8.
    let human = run([root_arg(root), "clarify".into(), "verify".into()]);
    assert_eq!(human.code, 8);
    assert!(human.stdout.contains("issue-2.json"), "{human:#?}");
    assert!(human.stderr.contains("LEDGER_INCONSISTENT"), "{human:#?}");
}

#[test]
fn stats_json_envelope_and_human_output() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "A", "a?");
    ask(root, T0, 1, "B", "b?");
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
            "pairs",
            "reasksSuppressed"
        ])
    );
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
    let human = run([root_arg(root), "clarify".into(), "stats".into()]);
    assert_eq!(human.code, 0);
    assert!(!human.stdout.is_empty());
}

#[test]
fn hook_json_envelope_warnings_on_stderr_and_human_output() {
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
    // done → working is in the table: no warning.
    assert_eq!(
        json_at(root, T0, &["hook", "finish", "engineer", "1"]).code,
        0
    );
    let out = json_at(root, T0 + 3 * MINUTE, &["hook", "start", "engineer"]);
    assert!(out.stderr.is_empty(), "{out:#?}");
    // idle → done is not: the warning goes to stderr.
    let out = json_at(root, T0, &["state", "--agent=reviewer", "--status=idle"]);
    assert_eq!(out.code, 0);
    let out = json_at(root, T0, &["hook", "finish", "reviewer", "9"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stderr.contains("warning"), "{out:#?}");
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
}

#[test]
fn ready_json_envelope_and_human_output() {
    let dir = workspace();
    let root = dir.path();
    let v = json_at(root, T0, &["ready"]).json();
    assert_eq!(keys(&v), set(&["ok", "issues", "monitor", "errors"]));
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
    assert_monitor_report(&out.json()["monitor"]);
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
fn state_json_envelope_warnings_on_stderr_and_human_output() {
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
    assert_eq!(keys(&out.json()), set(&["ok", "statuses"]));
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
    let v: Value = json_in(root, &["state"]).json();
    assert_eq!(keys(&v["statuses"]), set(&["architect", "engineer"]));
    let out = run([root_arg(root), "state".into()]);
    assert!(
        out.stdout.contains("engineer") && out.stdout.contains("#42"),
        "{out:#?}"
    );
}

#[test]
fn without_json_an_error_goes_to_stderr_only() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 9, "T", "Q");
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
