use super::*;
use crate::ledger::{Severity, Status};
use crate::ops::{act, Action};
use crate::testkit::{keyring, MIN};

fn answer(l: &Ledger, id: &str, from: &str, body: &str, now: i64) -> Ledger {
    let a = Action::Answer {
        from: from.into(),
        body: body.into(),
    };
    act(l, id, &a, &Config::default(), now).unwrap().ledger
}

fn resolve(l: &Ledger, id: &str, now: i64) -> Ledger {
    let r = Action::Resolve {
        from: None,
        message: None,
    };
    act(l, id, &r, &Config::default(), now).unwrap().ledger
}

#[test]
fn every_gap_becomes_a_request() {
    let c = run_check(None, &plan(), T0);
    assert!(c.changed);
    assert_eq!(c.events.len(), 3);
    let records = &c.ledger.clarifications;
    assert_eq!(records.len(), 3);
    let r = &records[0];
    assert_eq!(r.id, "CLR-42-001");
    assert_eq!((r.from.as_str(), r.to.as_str()), ("engineer", "architect"));
    assert_eq!(r.topic, "compliance.jurisdiction");
    assert_eq!(r.field.as_deref(), Some("compliance.jurisdiction"));
    assert_eq!(r.severity, Some(Severity::Block));
    assert!(r.blocking);
    assert_eq!(r.blocked_operations, vec!["planner", "developer", "build"]);
    assert_eq!(
        r.context.as_deref(),
        Some("Compliance overlap: JSP 440 ↔ NATO STANAG.")
    );
    assert_eq!(r.suggestions.len(), 3);
    assert_eq!(r.session_id.as_deref(), Some(SESSION));
    assert_eq!(r.gap_id.as_deref(), Some("gap-001"));
    assert_eq!(
        r.idempotency_key.as_deref(),
        Some(format!("l4:{SESSION}:gap-001").as_str())
    );
    // WARN: a non-blocking record.
    assert!(!records[1].blocking);
    assert_eq!(records[1].severity(), Severity::Warn);
    // The gap's own target wins over the command's.
    assert_eq!(records[2].to, "product-manager");

    let resp = &c.response;
    assert_eq!(resp.protocol_version, "1.0.0");
    assert_eq!(resp.session_id, SESSION);
    // The agent the records are written as, never the plan's own `agent_id` (docs/protocol.md §31).
    assert_eq!(resp.agent_id, "engineer");
    assert_eq!(resp.status, "needs_clarification");
    assert_eq!(
        (resp.accepted_gaps, resp.blocking_gaps, resp.warning_gaps),
        (0, 2, 1)
    );
    assert_eq!(resp.gaps[0].clarification_id.as_deref(), Some("CLR-42-001"));
    assert_eq!(resp.gaps[0].status, Some(Status::Pending));
    assert_eq!(resp.gaps[2].gap.to.as_deref(), Some("product-manager"));
}

#[test]
fn the_response_has_layer_4s_shape() {
    let v = serde_json::to_value(run_check(None, &plan(), T0).response).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "protocol_version",
            "session_id",
            "agent_id",
            "timestamp",
            "status",
            "gaps",
            "accepted_gaps",
            "blocking_gaps",
            "warning_gaps"
        ]
    );
    assert_eq!(v["timestamp"], "2026-11-22T10:00:00.000Z");
    let gap = v["gaps"][1].as_object().unwrap();
    let keys: Vec<&str> = gap.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "field",
            "severity",
            "question",
            "context",
            "suggestions",
            "blocked_operations",
            "to",
            "clarificationId",
            "status",
            "answer"
        ]
    );
    assert_eq!(v["gaps"][1]["severity"], "WARN");
    assert_eq!(v["gaps"][1]["status"], "pending");
    assert_eq!(v["gaps"][1]["context"], Value::Null);
    assert_eq!(v["gaps"][1]["answer"], Value::Null);
}

#[test]
fn a_second_check_after_the_answers_are_accepted_is_ready() {
    let first = run_check(None, &plan(), T0);
    // The same plan again asks nothing.
    let again = run_check(Some(&first.ledger), &plan(), T0 + MIN);
    assert!(!again.changed);
    assert!(again.events.is_empty());
    assert_eq!(again.ledger, first.ledger);
    // Answers alone do not settle a gap: the requester has not accepted them yet.
    let l = answer(
        &first.ledger,
        "CLR-42-001",
        "architect",
        "jsp-440-only",
        T0 + 2 * MIN,
    );
    let l = answer(&l, "CLR-42-003", "product-manager", "./dist", T0 + 3 * MIN);
    let answered = run_check(Some(&l), &plan(), T0 + 4 * MIN);
    assert_eq!(answered.response.status, "needs_clarification");
    assert_eq!(answered.response.gaps[0].status, Some(Status::Answered));
    assert_eq!(
        answered.response.gaps[0].answer.as_deref(),
        Some("jsp-440-only")
    );
    assert_eq!(answered.response.blocking_gaps, 2);
    // Resolved, the BLOCK gaps are accepted; the open WARN gap does not hold anything up.
    let l = resolve(&l, "CLR-42-001", T0 + 5 * MIN);
    let l = resolve(&l, "CLR-42-003", T0 + 6 * MIN);
    let ready = run_check(Some(&l), &plan(), T0 + 7 * MIN);
    assert!(!ready.changed);
    let r = &ready.response;
    assert_eq!(r.status, "ready_to_proceed");
    assert_eq!(
        (r.accepted_gaps, r.blocking_gaps, r.warning_gaps),
        (2, 0, 1)
    );
    assert_eq!(r.gaps[0].status, Some(Status::Resolved));
    assert_eq!(r.gaps[2].status, Some(Status::Resolved));
    assert_eq!(r.timestamp.as_str(), "2026-11-22T10:07:00.000Z");
}

#[test]
fn an_abandoned_gap_counts_nowhere() {
    let first = run_check(None, &plan(), T0);
    let abandon = Action::Abandon {
        from: None,
        message: None,
    };
    let l = act(
        &first.ledger,
        "CLR-42-001",
        &abandon,
        &Config::default(),
        T0 + MIN,
    )
    .unwrap()
    .ledger;
    let r = run_check(Some(&l), &plan(), T0 + 2 * MIN).response;
    assert_eq!(
        (r.accepted_gaps, r.blocking_gaps, r.warning_gaps),
        (0, 1, 1)
    );
}

#[test]
fn without_a_session_id_the_shells_one_is_used() {
    let mut v = plan_value();
    v.as_object_mut().unwrap().remove("session_id");
    v.as_object_mut().unwrap().remove("agent_id");
    let p = Plan::parse(&v).unwrap();
    let c = run_check(None, &p, T0);
    assert_eq!(c.response.session_id, NEW_SESSION);
    assert_eq!(c.response.agent_id, "engineer");
    assert_eq!(
        c.ledger.clarifications[0].idempotency_key.as_deref(),
        Some(format!("l4:{NEW_SESSION}:gap-001").as_str())
    );
    // Another run draws another session: the gaps are not asked again (docs/protocol.md §22), the
    // response names the records that hold them; with askAgain they would be.
    let other = CheckArgs {
        new_session_id: String::from("11111111-2222-4333-8444-555555555555"),
        ..args()
    };
    let c2 = checked(
        Some(&c.ledger),
        &p,
        &other,
        &Config::default(),
        T0,
        &Signers::default(),
    )
    .unwrap();
    assert_eq!(c2.ledger.clarifications.len(), 3);
    assert!(c2
        .events
        .iter()
        .all(|e| e.kind == crate::events::EventType::Reused));
    assert_eq!(c2.response.gaps.len(), 3);
    assert!(c2
        .response
        .gaps
        .iter()
        .all(|g| g.clarification_id.is_some()));
    assert_eq!(c2.ledger.clarifications[0].reuses.count, 1);
    let bad = CheckArgs {
        new_session_id: String::from("nope"),
        ..args()
    };
    assert_eq!(check_err(None, &p, &bad).code(), "INVALID_INPUT");
}

#[test]
fn targets_default_to_the_command_and_are_never_guessed() {
    let no_to = CheckArgs { to: None, ..args() };
    let e = check_err(None, &plan(), &no_to);
    assert_eq!(e.code(), "INVALID_INPUT");
    assert_eq!(
        e.to_string(),
        "invalid input: gap 'gap-001' has no target: give the gap a `to` or the command a --to"
    );
}

#[test]
fn a_bad_gap_writes_nothing_and_is_named() {
    let mut v = plan_value();
    v["gaps"][2]["question"] = json!("q".repeat(2001));
    let e = check_err(None, &Plan::parse(&v).unwrap(), &args());
    assert_eq!(
        e.to_string(),
        "gap 'gap-003' question is too long: 2001 characters, at most 2000 allowed"
    );
    let mut v = plan_value();
    v["gaps"][0]["blocked_operations"] = json!(["Build"]);
    let e = check_err(None, &Plan::parse(&v).unwrap(), &args());
    assert_eq!(e.to_string(), "invalid input: gap 'gap-001': invalid operation name 'Build': expected ^[a-z0-9][a-z0-9_.-]{0,63}$");
    // A scope refusal of the last gap: the earlier gaps are not written either (no ledger).
    let mut v = plan_value();
    v["gaps"][2]["to"] = json!("engineer");
    let e = check_err(None, &Plan::parse(&v).unwrap(), &args());
    assert_eq!(e.code(), "SELF_CLARIFICATION");
    let mut v = plan_value();
    v["gaps"][2]["to"] = json!("Product Manager");
    let e = check_err(None, &Plan::parse(&v).unwrap(), &args());
    assert_eq!(e.code(), "INVALID_AGENT");
    assert!(e.to_string().ends_with("(gap 'gap-003')"), "{e}");
}

#[test]
fn a_changed_gap_in_the_same_session_conflicts() {
    let first = run_check(None, &plan(), T0);
    let mut v = plan_value();
    v["gaps"][1]["severity"] = json!("BLOCK");
    let e = check_err(Some(&first.ledger), &Plan::parse(&v).unwrap(), &args());
    assert_eq!(e.code(), "IDEMPOTENCY_CONFLICT");
    assert!(
        e.to_string().starts_with("gap 'gap-002'") || e.to_string().contains("CLR-42-002"),
        "{e}"
    );
    let mut v = plan_value();
    v["gaps"][0]["blocked_operations"] = json!(["build"]);
    let e = check_err(Some(&first.ledger), &Plan::parse(&v).unwrap(), &args());
    assert_eq!(e.code(), "IDEMPOTENCY_CONFLICT");
    // Context is commentary: a re-worded context is the same gap.
    let mut v = plan_value();
    v["gaps"][0]["context"] = json!("reworded");
    let c = run_check(Some(&first.ledger), &Plan::parse(&v).unwrap(), T0 + MIN);
    assert!(!c.changed);
}

#[test]
fn scope_rules_apply_to_gaps() {
    // The bug workflow allows no blocking clarification: a BLOCK gap is refused there.
    let bug = CheckArgs {
        workflow: Some("bug".into()),
        ..args()
    };
    assert_eq!(
        check_err(None, &plan(), &bug).code(),
        "BLOCKING_NOT_ALLOWED"
    );
    let mut v = plan_value();
    v["gaps"] = json!([v["gaps"][1]]);
    let warn_only = Plan::parse(&v).unwrap();
    let c = checked(
        None,
        &warn_only,
        &bug,
        &Config::default(),
        T0,
        &Signers::default(),
    )
    .unwrap();
    assert_eq!(c.response.status, "ready_to_proceed");
    assert_eq!(c.response.warning_gaps, 1);
}

#[test]
fn a_check_signs_with_the_requesters_key() {
    let signers = keyring();
    let c = checked(None, &plan(), &args(), &Config::default(), T0, &signers).unwrap();
    let keys = signers.public_keys();
    for r in &c.ledger.clarifications {
        assert_eq!(r.thread[0].signer.as_deref(), Some("engineer"));
    }
    assert!(crate::verify::verify_signatures("issue-42.json", &c.ledger, &keys, true).is_empty());
}

#[test]
fn long_fields_make_short_topics() {
    let config = Config {
        max_topic_chars: 10,
        ..Config::default()
    };
    let c = checked(None, &plan(), &args(), &config, T0, &Signers::default()).unwrap();
    assert_eq!(c.ledger.clarifications[0].topic, "complianc…");
    assert_eq!(
        c.ledger.clarifications[0].field.as_deref(),
        Some("compliance.jurisdiction")
    );
    // The replay builds the same topic.
    let again = checked(
        Some(&c.ledger),
        &plan(),
        &args(),
        &config,
        T0,
        &Signers::default(),
    )
    .unwrap();
    assert!(!again.changed);
}
