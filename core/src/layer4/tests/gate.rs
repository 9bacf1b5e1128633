use super::*;
use crate::error::ErrorClass;
use crate::ledger::Status;
use crate::ops::{act, Action};
use crate::testkit::MIN;

fn ids(g: &Gate) -> Vec<&str> {
    g.open.iter().map(|o| o.clarification_id.as_str()).collect()
}

fn gaps_ledger() -> Ledger {
    // gap-001 BLOCK blocks planner, developer, build; gap-002 WARN; gap-003 BLOCK blocks all.
    run_check(None, &plan(), T0).ledger
}

#[test]
fn open_block_gaps_close_the_gate_for_what_they_block() {
    let l = gaps_ledger();
    let build = gate(42, Some(&l), Some("build")).unwrap();
    assert_eq!(ids(&build), ["CLR-42-001", "CLR-42-003"]);
    let deploy = gate(42, Some(&l), Some("deploy")).unwrap();
    assert_eq!(
        ids(&deploy),
        ["CLR-42-003"],
        "an empty blockedOperations blocks every operation"
    );
    let any = gate(42, Some(&l), None).unwrap();
    assert_eq!(
        ids(&any),
        ["CLR-42-001", "CLR-42-003"],
        "WARN gaps never close the gate"
    );
    let e = build.error().unwrap();
    assert_eq!((e.code(), e.class()), ("GATE_CLOSED", ErrorClass::Policy));
    assert_eq!(
        e.to_string(),
        "gate closed on issue #42: 2 open BLOCK clarification(s) block operation 'build' (CLR-42-001, CLR-42-003); answer and resolve them first"
    );
    let v = serde_json::to_value(&build).unwrap();
    assert_eq!(v["issueNumber"], 42);
    assert_eq!(v["operation"], "build");
    assert_eq!(
        v["open"][0],
        json!({"clarificationId": "CLR-42-001", "gapId": "gap-001", "sessionId": SESSION,
               "field": "compliance.jurisdiction", "topic": "compliance.jurisdiction",
               "severity": "BLOCK", "from": "engineer", "to": "architect", "status": "pending",
               "blockedOperations": ["planner", "developer", "build"]})
    );
}

#[test]
fn only_resolution_opens_the_gate() {
    let l = gaps_ledger();
    let config = Config::default();
    let answer = Action::Answer {
        from: "product-manager".into(),
        body: "./dist".into(),
    };
    let l = act(&l, "CLR-42-003", &answer, &config, T0 + MIN)
        .unwrap()
        .ledger;
    let g = gate(42, Some(&l), Some("deploy")).unwrap();
    assert_eq!(
        g.open[0].status,
        Status::Answered,
        "an answer not yet accepted still blocks"
    );
    let escalate = Action::Escalate {
        from: None,
        message: None,
    };
    let l = act(&l, "CLR-42-001", &escalate, &config, T0 + 2 * MIN)
        .unwrap()
        .ledger;
    assert_eq!(
        gate(42, Some(&l), Some("build")).unwrap().open[0].status,
        Status::Escalated
    );
    let resolve = Action::Resolve {
        from: None,
        message: None,
    };
    let l = act(&l, "CLR-42-003", &resolve, &config, T0 + 3 * MIN)
        .unwrap()
        .ledger;
    assert!(!gate(42, Some(&l), Some("deploy")).unwrap().is_closed());
    let human = Action::Resolve {
        from: None,
        message: Some("jsp-440-only".into()),
    };
    let l = act(&l, "CLR-42-001", &human, &config, T0 + 5 * MIN)
        .unwrap()
        .ledger;
    let open = gate(42, Some(&l), None).unwrap();
    assert!(!open.is_closed());
    assert_eq!(open.error(), None);
}

#[test]
fn plain_records_gate_by_their_blocking_flag() {
    // A record from before Layer 4: blocking, no severity, no blockedOperations.
    let v = json!({"issueNumber": 7, "clarifications": [
        {"id": "CLR-7-001", "from": "engineer", "to": "architect", "topic": "Cache",
         "blocking": true, "status": "pending", "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "Redis?", "timestamp": "2026-11-22T10:00:00.000Z"}]},
        {"id": "CLR-7-002", "from": "engineer", "to": "architect", "topic": "Logs",
         "blocking": false, "status": "pending", "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "JSON?", "timestamp": "2026-11-22T10:00:00.000Z"}]}
    ]});
    let l = Ledger::from_value("issue-7.json", &v, None).unwrap();
    let g = gate(7, Some(&l), Some("build")).unwrap();
    assert_eq!(ids(&g), ["CLR-7-001"]);
    assert_eq!(g.open[0].gap_id, None);
    assert!(
        !gate(7, None, Some("build")).unwrap().is_closed(),
        "no ledger, nothing blocks"
    );
}

#[test]
fn operation_names_are_checked() {
    let e = gate(42, None, Some("Build")).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT");
    assert!(gate(42, None, Some("db.migrate_v2")).is_ok());
}
