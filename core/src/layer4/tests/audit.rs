use super::*;
use crate::ops::{act_with, Action};
use crate::signing::PublicKeys;
use crate::testkit::{keyring, signed_ledger, MIN};

#[test]
fn one_records_chain() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let keys = signers.public_keys();
    let a = audit(&l, AuditScope::Record("CLR-42-001"), &keys, true).unwrap();
    assert!(a.verified, "{:?}", a.problems);
    assert!(a.all_resolved);
    assert_eq!(a.total_rounds, 1);
    let r = &a.chain[0];
    assert_eq!(r.round, 1);
    assert_eq!(r.clarification_id, "CLR-42-001");
    assert_eq!(
        r.gap.id, "CLR-42-001",
        "a plain request has no gap id: its record id stands in"
    );
    assert_eq!(r.gap.question, "Redis or in-process?");
    assert_eq!(r.ask_timestamp, "2026-11-22T10:00:00.000Z");
    assert_eq!(r.answer.as_deref(), Some("Redis, see ADR-7."));
    assert_eq!(
        r.answer_timestamp.as_deref(),
        Some("2026-11-22T10:01:00.000Z")
    );
    let record = &l.clarifications[0];
    assert_eq!(r.ask_signature, record.thread[0].signature);
    assert_eq!(r.answer_signature, record.thread[1].signature);
    assert!(r.resolved);
    assert_eq!(
        a.chain_signature, record.thread[2].signature,
        "the last entry's"
    );
    assert!(a
        .chain_signature
        .as_deref()
        .unwrap()
        .starts_with("ed25519:"));
}

#[test]
fn the_audit_record_has_layer_4s_shape() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let a = audit(
        &l,
        AuditScope::Record("CLR-42-001"),
        &signers.public_keys(),
        false,
    )
    .unwrap();
    let v = serde_json::to_value(&a).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "chain",
            "total_rounds",
            "all_resolved",
            "chain_signature",
            "verified",
            "problems"
        ]
    );
    let keys: Vec<&str> = v["chain"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "round",
            "clarificationId",
            "ask_timestamp",
            "ask_signature",
            "gap",
            "answer_timestamp",
            "answer",
            "answer_signature",
            "resolved",
            "answered",
            "decided"
        ]
    );
    assert_eq!(
        v["chain"][0]["gap"],
        json!({"id": "CLR-42-001", "field": null, "question": "Redis or in-process?"})
    );
}

#[test]
fn an_issues_chain() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let a = audit(&l, AuditScope::Issue, &signers.public_keys(), true).unwrap();
    assert!(a.verified, "{:?}", a.problems);
    assert_eq!(a.total_rounds, 3);
    let rounds: Vec<(usize, &str)> = a
        .chain
        .iter()
        .map(|r| (r.round, r.clarification_id.as_str()))
        .collect();
    assert_eq!(
        rounds,
        [(1, "CLR-42-001"), (2, "CLR-42-002"), (3, "CLR-42-003")]
    );
    // Escalated and resolved by a human: no answer, resolved.
    assert_eq!(a.chain[1].answer, None);
    assert!(a.chain[1].resolved);
    assert!(!a.chain[2].resolved);
    assert!(!a.all_resolved, "CLR-42-003 is still pending");
    assert_eq!(a.chain_signature, None, "three records are three chains");
    assert_eq!(a.session_id, None);
}

#[test]
fn a_checked_sessions_chain_with_follow_ups() {
    let signers = keyring();
    let c = checked(None, &plan(), &args(), &Config::default(), T0, &signers).unwrap();
    let config = Config::default();
    let step = |l: &Ledger, id: &str, a: Action, at: i64| {
        act_with(l, id, &a, &config, at, &signers).unwrap().ledger
    };
    let l = step(
        &c.ledger,
        "CLR-42-001",
        Action::Answer {
            from: "architect".into(),
            body: "both".into(),
        },
        T0 + MIN,
    );
    let l = step(
        &l,
        "CLR-42-001",
        Action::FollowUp {
            from: "engineer".into(),
            question: "Which NATO annex?".into(),
        },
        T0 + 2 * MIN,
    );
    let l = step(
        &l,
        "CLR-42-001",
        Action::Answer {
            from: "architect".into(),
            body: "jsp-440-only".into(),
        },
        T0 + 3 * MIN,
    );
    let l = step(
        &l,
        "CLR-42-001",
        Action::Resolve {
            from: None,
            message: None,
        },
        T0 + 4 * MIN,
    );
    let a = audit(
        &l,
        AuditScope::Record("CLR-42-001"),
        &signers.public_keys(),
        true,
    )
    .unwrap();
    assert!(a.verified, "{:?}", a.problems);
    assert_eq!(a.session_id.as_deref(), Some(SESSION));
    assert_eq!(a.total_rounds, 2);
    assert_eq!(a.chain[0].gap.id, "gap-001");
    assert_eq!(
        a.chain[0].gap.field.as_deref(),
        Some("compliance.jurisdiction")
    );
    assert!(
        !a.chain[0].resolved,
        "a follow-up means the first answer did not settle it"
    );
    assert_eq!(a.chain[1].gap.question, "Which NATO annex?");
    assert_eq!(a.chain[1].answer.as_deref(), Some("jsp-440-only"));
    assert!(a.chain[1].resolved);
    let issue = audit(&l, AuditScope::Issue, &signers.public_keys(), true).unwrap();
    assert_eq!(
        issue.session_id.as_deref(),
        Some(SESSION),
        "every record is of the one session"
    );
    assert_eq!(issue.total_rounds, 4);
}

#[test]
fn problems_carry_their_codes() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let mut v = l.to_value();
    v["clarifications"][0]["thread"][1]["body"] = json!("Memcached.");
    let bad = Ledger::from_value("issue-42.json", &v, None).unwrap();
    let a = audit(
        &bad,
        AuditScope::Record("CLR-42-001"),
        &signers.public_keys(),
        false,
    )
    .unwrap();
    assert!(!a.verified);
    let codes: Vec<&str> = a.problems.iter().map(|p| p.code).collect();
    assert_eq!(codes, ["LEDGER_INCONSISTENT", "SIGNATURE_INVALID"]);
    assert_eq!(
        a.problems[0].message,
        "hash chain broken at entry 2 (history was edited)"
    );
    // Other records' problems are not this record's.
    let other = audit(
        &bad,
        AuditScope::Record("CLR-42-002"),
        &signers.public_keys(),
        false,
    )
    .unwrap();
    assert!(other.verified);
    // Unsigned with signatures required.
    let unsigned = signed_ledger(&Signers::default());
    let a = audit(
        &unsigned,
        AuditScope::Record("CLR-42-001"),
        &PublicKeys::new(),
        true,
    )
    .unwrap();
    assert_eq!(a.problems.len(), 3);
    assert_eq!(a.chain_signature, None);
    assert_eq!(a.chain[0].ask_signature, None);
    let relaxed = audit(
        &unsigned,
        AuditScope::Record("CLR-42-001"),
        &PublicKeys::new(),
        false,
    )
    .unwrap();
    assert!(relaxed.verified);
}

#[test]
fn unknown_records_are_not_found() {
    let l = signed_ledger(&Signers::default());
    let e = audit(
        &l,
        AuditScope::Record("CLR-42-009"),
        &PublicKeys::new(),
        false,
    )
    .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND");
    let empty = audit(
        &Ledger::new(42),
        AuditScope::Issue,
        &PublicKeys::new(),
        true,
    )
    .unwrap();
    assert_eq!(
        (empty.total_rounds, empty.all_resolved, empty.verified),
        (0, true, true)
    );
}

#[test]
fn the_audit_leads_with_who_decided_what() {
    use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
    use crate::ops::{decide, Attribution};
    use crate::testkit::{ask, plain, T0};
    let signers = keyring();
    let option = |v: &str, l: &str| AnswerOption {
        value: v.into(),
        label: Some(l.into()),
        description: None,
    };
    let req = crate::ops::NewRequest {
        answer: AnswerSpec {
            kind: AnswerKind::Choice,
            options: vec![option("redis", "Redis"), option("lru", "In-process LRU")],
            allow_other: Some(false),
            ..AnswerSpec::default()
        },
        ..plain("engineer", "architect", "Cache", "Which cache?")
    };
    let l = ask(None, &req, T0, &signers);
    let by = Attribution {
        by: "alice".into(),
        via: "web".into(),
        reference: None,
    };
    let done = decide(
        &l,
        "CLR-42-001",
        crate::ops::Verdict {
            message: Some("see ADR-7".into()),
            value: Some(serde_json::json!("lru")),
        },
        &crate::config::Config::default(),
        T0 + MIN,
        &signers,
        &by,
    )
    .unwrap();
    let a = audit(
        &done.ledger,
        AuditScope::Record("CLR-42-001"),
        &signers.public_keys(),
        true,
    )
    .unwrap();
    assert!(a.verified, "{:?}", a.problems);
    let round = &a.chain[0];
    assert_eq!(round.answered, None, "nobody answered: a person decided");
    let d = round.decided.as_ref().unwrap();
    assert_eq!(
        (
            d.from.as_str(),
            d.by.as_deref(),
            d.via.as_deref(),
            d.label.as_deref(),
            d.note.as_deref(),
            d.signer.as_deref()
        ),
        (
            "human",
            Some("alice"),
            Some("web"),
            Some("In-process LRU"),
            Some("see ADR-7"),
            Some("agent-x")
        )
    );
    assert_eq!(d.value, Some(serde_json::json!("lru")));
    assert_eq!(d.timestamp, "2026-11-22T10:01:00.000Z");
    assert!(d.signature.is_some());
    assert_eq!(d.who(), "alice (human via web)");
    let v = serde_json::to_value(round).unwrap();
    assert_eq!(v["decided"]["ref"], serde_json::Value::Null);
}
