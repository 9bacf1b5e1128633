//! The Layer 4 fields of records: defaults, wire format, validation, replays, the API.

use super::*;
use crate::api::call;
use crate::ledger::Severity;
use crate::ops::{request, NewRequest};
use crate::testkit::{ask, plain};

/// `req` with every Layer 4 field set.
fn gap(req: &NewRequest) -> NewRequest {
    NewRequest {
        severity: Some(Severity::Warn),
        context: Some("ar-sa selected".into()),
        blocked_operations: vec!["build".into(), "deploy.prod".into()],
        session_id: Some(SESSION.into()),
        gap_id: Some("gap-002".into()),
        ..req.clone()
    }
}

fn refusal(req: &NewRequest) -> String {
    let e = request(None, req, &Config::default(), &Workflows::defaults(), T0).unwrap_err();
    format!("{}: {e}", e.code())
}

#[test]
fn severity_defaults_follow_blocking() {
    let req = plain("engineer", "architect", "Cache", "Redis?");
    let l = ask(None, &req, T0, &Signers::default());
    let r = &l.clarifications[0];
    assert_eq!((r.severity, r.severity()), (None, Severity::Block));
    let non = NewRequest {
        blocking: false,
        ..req.clone()
    };
    let l = ask(None, &non, T0, &Signers::default());
    assert_eq!(l.clarifications[0].severity(), Severity::Warn);
    // Given, severity sets blocking, both ways.
    let l = ask(None, &gap(&req), T0, &Signers::default());
    let r = &l.clarifications[0];
    assert_eq!((r.severity, r.blocking), (Some(Severity::Warn), false));
    let block = NewRequest {
        severity: Some(Severity::Block),
        ..non.clone()
    };
    let l = ask(None, &block, T0, &Signers::default());
    assert!(l.clarifications[0].blocking);
}

#[test]
fn wire_format_omits_empty_fields_and_keeps_unknown_ones() {
    let req = plain("engineer", "architect", "Cache", "Redis?");
    let plain_ledger = ask(None, &req, T0, &Signers::default());
    let text = plain_ledger.to_pretty_json();
    for key in [
        "severity",
        "context",
        "blockedOperations",
        "sessionId",
        "gapId",
        "signer",
        "signature",
    ] {
        assert!(!text.contains(key), "{key} in {text}");
    }
    let l = ask(None, &gap(&req), T0, &Signers::default());
    let mut v = l.to_value();
    let r = &v["clarifications"][0];
    assert_eq!(r["severity"], "WARN");
    assert_eq!(r["context"], "ar-sa selected");
    assert_eq!(r["blockedOperations"], json!(["build", "deploy.prod"]));
    assert_eq!(r["sessionId"], SESSION);
    assert_eq!(r["gapId"], "gap-002");
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(at("resolvedAt") < at("severity"));
    assert!(at("severity") < at("context") && at("gapId") < at("thread"));
    v["clarifications"][0]["x-review"] = json!({"by": "qa"});
    let again = Ledger::from_value("issue-42.json", &v, None).unwrap();
    assert_eq!(
        again.clarifications[0].blocked_operations,
        vec!["build", "deploy.prod"]
    );
    assert_eq!(again.to_value(), v);
}

#[test]
fn a_stored_severity_sets_blocking_on_read() {
    let v = json!({"issueNumber": 42, "clarifications": [{
        "id": "CLR-42-001", "from": "engineer", "to": "architect", "topic": "Cache",
        "blocking": true, "severity": "WARN", "status": "pending", "thread": []}]});
    let l = Ledger::from_value("issue-42.json", &v, None).unwrap();
    assert!(!l.clarifications[0].blocking);
    let bad = json!({"issueNumber": 42, "clarifications": [{
        "id": "CLR-42-001", "from": "engineer", "to": "architect", "topic": "Cache",
        "severity": "block", "status": "pending", "thread": []}]});
    assert_eq!(
        Ledger::from_value("issue-42.json", &bad, None)
            .unwrap_err()
            .code(),
        "LEDGER_CORRUPT"
    );
}

#[test]
fn validation_order_and_messages() {
    let req = plain("engineer", "architect", "Cache", "Redis?");
    let with = |edit: &dyn Fn(&mut NewRequest)| {
        let mut g = gap(&req);
        edit(&mut g);
        refusal(&g)
    };
    assert_eq!(
        with(&|g| g.context = Some(" ".into())),
        "TEXT_EMPTY: context is empty: at least 1 character is required"
    );
    assert_eq!(
        with(&|g| g.context = Some("c".repeat(2001))),
        "TEXT_TOO_LONG: context is too long: 2001 characters, at most 2000 allowed"
    );
    assert_eq!(
        with(&|g| g.blocked_operations = (0..21).map(|i| format!("op{i}")).collect()),
        "TEXT_TOO_LONG: blocked operations is too long: 21 operations, at most 20 allowed"
    );
    assert_eq!(
        with(&|g| g.blocked_operations = vec!["build".into(), "Deploy".into()]),
        "INVALID_INPUT: invalid input: invalid operation name 'Deploy': expected ^[a-z0-9][a-z0-9_.-]{0,63}$"
    );
    assert_eq!(
        with(&|g| g.blocked_operations = vec!["build".into(), "build".into()]),
        "INVALID_INPUT: invalid input: blocked operation 'build' is listed twice; list each operation once"
    );
    assert_eq!(
        with(&|g| g.session_id = Some("5F0C6F9E-2D1B-4C8A-9E3F-7A6B5C4D3E2F".into())),
        "INVALID_INPUT: invalid input: session id '5F0C6F9E-2D1B-4C8A-9E3F-7A6B5C4D3E2F' is not a UUID: expected 8-4-4-4-12 lowercase hex digits, e.g. 123e4567-e89b-42d3-a456-426614174000"
    );
    assert_eq!(
        with(&|g| g.gap_id = Some("g".repeat(65))),
        "TEXT_TOO_LONG: gap id is too long: 65 characters, at most 64 allowed"
    );
    // The order: the fields of docs/protocol.md §6.4 first, then context, operations, session, gap id.
    let mut all_bad = gap(&req);
    all_bad.context = Some(String::new());
    all_bad.session_id = Some("x".into());
    let empty_question = NewRequest {
        question: " ".into(),
        ..all_bad.clone()
    };
    assert!(refusal(&empty_question).starts_with("TEXT_EMPTY: question"));
    assert!(refusal(&all_bad).starts_with("TEXT_EMPTY: context"));
    all_bad.context = None;
    all_bad.blocked_operations = vec!["-x".into()];
    assert!(refusal(&all_bad).contains("invalid operation name '-x'"));
    all_bad.blocked_operations = vec![];
    all_bad.gap_id = Some(String::new());
    assert!(refusal(&all_bad).contains("session id 'x'"));
}

#[test]
fn replays_compare_severity_and_blocked_operations() {
    let req = NewRequest {
        idempotency_key: Some("k1".into()),
        ..plain("engineer", "architect", "Cache", "Redis?")
    };
    let l = ask(None, &gap(&req), T0, &Signers::default());
    let replay = |l: &Ledger, r: &NewRequest| {
        request(
            Some(l),
            r,
            &Config::default(),
            &Workflows::defaults(),
            T0 + 1,
        )
        .map(|a| a.idempotent)
        .map_err(|e| e.code())
    };
    assert_eq!(replay(&l, &gap(&req)), Ok(true));
    assert_eq!(
        replay(
            &l,
            &NewRequest {
                context: None,
                session_id: None,
                gap_id: None,
                ..gap(&req)
            }
        ),
        Ok(true)
    );
    assert_eq!(
        replay(
            &l,
            &NewRequest {
                severity: Some(Severity::Block),
                ..gap(&req)
            }
        ),
        Err("IDEMPOTENCY_CONFLICT")
    );
    assert_eq!(
        replay(
            &l,
            &NewRequest {
                severity: None,
                ..gap(&req)
            }
        ),
        Err("IDEMPOTENCY_CONFLICT")
    );
    assert_eq!(
        replay(
            &l,
            &NewRequest {
                blocked_operations: vec!["build".into()],
                ..gap(&req)
            }
        ),
        Err("IDEMPOTENCY_CONFLICT")
    );
    // A plain request is replayed as before Layer 4.
    let l = ask(None, &req, T0, &Signers::default());
    assert_eq!(replay(&l, &req), Ok(true));
}

#[test]
fn the_api_request_takes_the_fields() {
    let r = call(
        "request",
        &json!({"issueNumber": 42, "from": "engineer", "to": "architect", "topic": "Cache",
                "question": "Redis?", "severity": "WARN", "context": "why",
                "blockedOperations": ["build"], "sessionId": SESSION, "gapId": "g1", "now": T0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let c = &r["clarification"];
    assert_eq!(
        (c["severity"].clone(), c["blocking"].clone()),
        (json!("WARN"), json!(false))
    );
    assert_eq!(c["blockedOperations"], json!(["build"]));
    assert_eq!(
        (
            c["sessionId"].clone(),
            c["gapId"].clone(),
            c["context"].clone()
        ),
        (json!(SESSION), json!("g1"), json!("why"))
    );
    let bad = call(
        "request",
        &json!({"issueNumber": 42, "from": "engineer", "to": "architect", "topic": "Cache",
                "question": "Redis?", "severity": "FATAL", "now": T0}),
    );
    assert_eq!(bad["error"]["code"], "INVALID_INPUT");
    assert_eq!(
        bad["error"]["message"],
        "invalid input: unknown severity 'FATAL'; allowed: BLOCK, WARN"
    );
    let bad = call(
        "request",
        &json!({"issueNumber": 42, "from": "engineer", "to": "architect", "topic": "Cache",
                "question": "Redis?", "blockedOperations": "build", "now": T0}),
    );
    assert_eq!(
        bad["error"]["message"],
        "invalid input: `blockedOperations` must be an array of strings"
    );
}
