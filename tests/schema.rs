//! The published ledger schemas (`schema/`) against every ledger the repository holds and the
//! core produces: vector setups, the fuzz corpus, the benchmark fixtures and a scenario of
//! core operations. The reader and the "as read" schema must agree on what is a ledger; what
//! the core writes must match the "as written" schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use agentx_clarify_core::monitor::monitor_ledger;
use agentx_clarify_core::verify::{issue_of_file_name, verify_ledger};
use agentx_clarify_core::{
    act, request, Action, AgentStatus, Config, Ledger, NewRequest, Severity, Statuses, Workflows,
};
use agentx_clarify_tests::load_all;
use agentx_clarify_tests::schema::{validate_accepted_ledger, validate_ledger};
use serde_json::Value;

const T0: i64 = 1_795_341_600_000; // 2026-11-22T10:00:00.000Z
const MIN: i64 = 60_000;

/// Cross-field rules no JSON Schema can state: the reader refuses these, the schema cannot.
const BEYOND_SCHEMA: [&str; 3] = [
    "holds the ledger of issue",
    "says issueNumber",
    "invalid timestamp",
];

/// Checks one stored ledger file: reader and "as read" schema agree; what the core would
/// write from it matches the "as written" schema. Returns whether it was a ledger.
fn check_stored(label: &str, name: &str, bytes: &[u8], failures: &mut Vec<String>) -> bool {
    let issue = issue_of_file_name(name).and_then(|n| u32::try_from(n).ok());
    let body = agentx_clarify_core::encoding::strip_bom(bytes);
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return false; // not JSON: nothing a schema can say
    };
    match Ledger::parse(name, bytes, issue) {
        Ok(mut ledger) => {
            if let Err(e) = validate_accepted_ledger(&value) {
                failures.push(format!("{label}: read, but the accepted schema says {e:?}"));
            }
            ledger.seal();
            // What a write cannot repair (a removed hash, an edited entry) is evidence kept
            // as found: such a ledger is not meant to be valid.
            let tampered = !verify_ledger(name, &ledger).is_empty();
            if let (false, Err(e)) = (tampered, validate_ledger(&ledger.to_value())) {
                failures.push(format!("{label}: as written: {e:?}"));
            }
            true
        }
        Err(refused) => {
            let why = refused.to_string();
            let schema_agrees = validate_accepted_ledger(&value).is_err();
            if !schema_agrees && !BEYOND_SCHEMA.iter().any(|b| why.contains(b)) {
                failures.push(format!(
                    "{label}: refused ({why}) but the accepted schema admits it"
                ));
            }
            false
        }
    }
}

#[test]
fn vector_setups_and_what_the_core_writes_from_them() {
    let mut failures = Vec::new();
    let mut ledgers = 0;
    for (path, vector) in load_all() {
        let Some(setup) = vector.get("setup") else {
            continue;
        };
        let files = agentx_clarify_command::paths::setup_files(setup).unwrap();
        for (file, bytes) in &files {
            let Some(name) = file.strip_prefix(agentx_clarify_command::paths::CLARIFICATIONS_DIR)
            else {
                continue;
            };
            let label = format!("{path}: {name}");
            if check_stored(&label, name, bytes, &mut failures) {
                ledgers += 1;
            }
        }
    }
    assert!(ledgers > 30, "only {ledgers} setup ledgers found");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_fuzz_corpus_ledgers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/ledger_json");
    let mut failures = Vec::new();
    let mut written = 0;
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).unwrap();
        // The corpus names its files after the vector: issue-<n> is a setup, core-written-<n>
        // a ledger the core wrote. Both are read as issue <n>'s.
        let Some(issue) = name.split('-').find_map(|part| part.parse::<u32>().ok()) else {
            continue; // a crash input, not a ledger of a vector
        };
        let file = format!("issue-{issue}.json");
        let is_ledger = check_stored(&name, &file, &bytes, &mut failures);
        if is_ledger && name.contains("core-written") {
            written += 1;
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            if let Err(e) = validate_ledger(&value) {
                failures.push(format!("{name}: written by the core, yet {e:?}"));
            }
        }
    }
    assert!(written > 50, "only {written} core-written ledgers found");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn benchmark_fixtures() {
    for ledger in agentx_clarify_tests::fixtures::workspace(60, true, T0) {
        let v = ledger.to_value();
        assert_eq!(validate_ledger(&v), Ok(()), "{v:#}");
    }
}

fn workflows() -> Workflows {
    let mut w = Workflows::new();
    w.insert_text(
        "feature",
        "[[steps]]\nid = \"e\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_sla_minutes = 60\n",
    );
    w
}

#[test]
fn a_scenario_of_core_operations() {
    let config = Config::default();
    let mut statuses = Statuses::new();
    let mut produced: Vec<Ledger> = Vec::new();
    let req = |topic: &str, key: Option<&str>| NewRequest {
        issue_number: 42,
        from: "engineer".into(),
        to: "architect".into(),
        topic: topic.into(),
        question: format!("{topic}, é \u{1F600} \"quoted\"?"),
        blocking: true,
        workflow: None,
        step: None,
        field: Some("storage.cache".into()),
        suggestions: vec!["redis".into(), "lru".into()],
        idempotency_key: key.map(str::to_owned),
        // Layer 4's fields (docs/protocol.md §16), so the schema is checked against them too.
        severity: Some(Severity::Warn),
        context: Some("the session store is shared".into()),
        blocked_operations: vec!["build".into(), "deploy.prod".into()],
        session_id: Some("123e4567-e89b-42d3-a456-426614174000".into()),
        gap_id: Some("gap-001".into()),
        answer: Default::default(),
        ask_again: false,
        extra: Default::default(),
    };
    let l = request(None, &req("Cache", Some("k1")), &config, &workflows(), T0)
        .unwrap()
        .ledger;
    produced.push(l.clone());
    let l = request(
        Some(&l),
        &req("Queue", None),
        &config,
        &workflows(),
        T0 + MIN,
    )
    .unwrap()
    .ledger;
    produced.push(l.clone());
    let step = |l: &Ledger, id: &str, action: Action, at: i64| {
        act(l, id, &action, &config, at).unwrap().ledger
    };
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Redis.".into(),
    };
    let follow = Action::FollowUp {
        from: "engineer".into(),
        question: "TTL?".into(),
    };
    produced.push(step(&l, "CLR-42-001", answer, T0 + 2 * MIN));
    let l = step(&produced[2], "CLR-42-001", follow, T0 + 3 * MIN);
    produced.push(l.clone());
    // The monitor: stale, retry, then escalation of the second record.
    for at in [T0 + 62 * MIN, T0 + 200 * MIN] {
        let l = monitor_ledger(produced[produced.len() - 1].clone(), &statuses, &config, at).ledger;
        produced.push(l);
    }
    // A person's resolution of an escalated record carries the decision.
    let resolve = Action::Resolve {
        from: None,
        message: Some("Use Redis.".into()),
    };
    let l = step(
        &produced[produced.len() - 1],
        "CLR-42-002",
        resolve,
        T0 + 201 * MIN,
    );
    produced.push(l.clone());
    // The requester reports it moved on: abandonment.
    statuses.insert(
        "engineer".into(),
        serde_json::from_value::<AgentStatus>(serde_json::json!({
            "status": "done", "issue": 42, "lastActivity": "2026-11-22T14:00:00.000Z",
            "reportedAt": "2026-11-22T14:00:00.000Z"
        }))
        .unwrap(),
    );
    let l = monitor_ledger(l, &statuses, &config, T0 + 241 * MIN).ledger;
    produced.push(l);
    let statuses_seen: Vec<String> = produced
        .last()
        .unwrap()
        .clarifications
        .iter()
        .map(|r| r.status.as_str().to_owned())
        .collect();
    assert_eq!(statuses_seen, vec!["abandoned", "resolved"]);
    for (i, ledger) in produced.iter().enumerate() {
        let v: Value = serde_json::from_str(&ledger.to_pretty_json()).unwrap();
        assert_eq!(validate_ledger(&v), Ok(()), "step {i}: {v:#}");
        assert_eq!(validate_accepted_ledger(&v), Ok(()), "step {i}");
    }
}

#[test]
fn the_written_schema_is_strict_about_what_we_write() {
    let l = agentx_clarify_tests::fixtures::ask_blocking(
        None,
        7,
        "engineer",
        "architect",
        "t",
        "q",
        T0,
    );
    let good = l.to_value();
    assert_eq!(validate_ledger(&good), Ok(()));
    let broken = [
        (
            "/clarifications/0/thread/0/timestamp",
            Value::from("2026-11-22T10:00:00.94Z"),
        ),
        ("/clarifications/0/thread/0/hash", Value::from("ABC")),
        ("/clarifications/0/issueNumber", Value::from(7)),
        ("/clarifications/0/status", Value::from("open")),
        ("/clarifications/0/thread/0/type", Value::from("note")),
        ("/clarifications/0/from", Value::from("Engineer")),
        ("/clarifications/0/id", Value::from("CLR-7-1")),
    ];
    for (pointer, value) in broken {
        let mut v = good.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        v.pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert(key.into(), value.clone());
        let errors = validate_ledger(&v).expect_err(pointer);
        assert!(
            errors.iter().any(|e| e.starts_with(pointer)),
            "{pointer} = {value}: {errors:?}"
        );
        // The reader is more lenient: what another tool writes is still read.
        if pointer.ends_with("timestamp")
            || pointer.ends_with("issueNumber")
            || pointer.ends_with("/from")
        {
            assert_eq!(validate_accepted_ledger(&v), Ok(()), "{pointer}");
        }
    }
    // Unknown fields are preserved, so both schemas admit them.
    let mut v = good;
    v["clarifications"][0]["recordType"] = Value::from("clarification");
    v["labels"] = serde_json::json!(["api"]);
    assert_eq!(validate_ledger(&v), Ok(()));
}
