use serde_json::json;

use super::*;
use crate::ops::{Action, NewRequest};
use crate::signing::Signers;
use crate::testkit::{apply, ask, keyring, plain, signed_ledger, MIN, T0};

/// Issue 42 of the testkit (two records resolved, one stale) and issue 7: a cache question
/// with a field, answered and resolved by its requester.
fn ledgers(signers: &Signers) -> Vec<Ledger> {
    let mut req: NewRequest = plain("engineer", "architect", "Cache <b>backend</b>", "Redis?");
    req.issue_number = 7;
    req.field = Some("cache.backend".into());
    let l = ask(None, &req, T0 + 10 * MIN, signers);
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Memcached.\n\n<script>alert(1)</script>\n# not a heading".into(),
    };
    let l = apply(&l, "CLR-7-001", answer, T0 + 11 * MIN, signers);
    let resolve = Action::Resolve {
        from: None,
        message: None,
    };
    let l = apply(&l, "CLR-7-001", resolve, T0 + 12 * MIN, signers);
    // Issue 9: a WARN question without a field, resolved: a decision only with `all`.
    let mut warn = plain("engineer", "architect", "Naming", "Call it `cfg`?");
    warn.issue_number = 9;
    warn.severity = Some(Severity::Warn);
    let w = ask(None, &warn, T0 + 13 * MIN, signers);
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Yes.".into(),
    };
    let w = apply(&w, "CLR-9-001", answer, T0 + 14 * MIN, signers);
    let resolve = Action::Resolve {
        from: None,
        message: None,
    };
    let w = apply(&w, "CLR-9-001", resolve, T0 + 15 * MIN, signers);
    vec![signed_ledger(signers), l, w]
}

fn ids(ds: &[Decision]) -> Vec<&str> {
    ds.iter().map(|d| d.id.as_str()).collect()
}

#[test]
fn a_decision_is_a_resolved_record_with_a_field_or_of_severity_block_unless_all() {
    let signers = keyring();
    let ls = ledgers(&signers);
    let keys = signers.public_keys();
    let some = decisions(&ls, &keys, Select::default());
    let all = decisions(
        &ls,
        &keys,
        Select {
            all: true,
            since_ms: None,
        },
    );
    let block: Vec<&str> = all
        .iter()
        .filter(|d| d.severity == Severity::Block || d.field.is_some())
        .map(|d| d.id.as_str())
        .collect();
    assert_eq!(ids(&some), block);
    assert_eq!(ids(&some), ["CLR-7-001", "CLR-42-001", "CLR-42-002"]);
    // Ordered by issue: 7, 9, 42; the stale record is no decision.
    assert_eq!(
        ids(&all),
        ["CLR-7-001", "CLR-9-001", "CLR-42-001", "CLR-42-002"]
    );
    let since = Select {
        all: true,
        since_ms: Some(T0 + 5 * MIN),
    };
    assert_eq!(
        ids(&decisions(&ls, &keys, since)),
        ["CLR-7-001", "CLR-9-001", "CLR-42-002"]
    );
}

#[test]
fn a_decision_says_who_took_it_and_whether_its_signature_verifies() {
    let signers = keyring();
    let ls = ledgers(&signers);
    let all = Select {
        all: true,
        since_ms: None,
    };
    let d = decisions(&ls, &signers.public_keys(), all);
    let cache = &d[0];
    assert_eq!(cache.decision.by, "engineer");
    assert!(cache.decision.text.starts_with("Memcached."));
    assert_eq!(cache.decision.signer.as_deref(), Some("engineer"));
    assert_eq!(cache.decision.signature, "verified");
    assert_eq!(cache.file, "0007-cache-b-backend-b-clr-7-001");
    assert_eq!(cache.status, Standing::Accepted);
    // A person's decision: its text, by `human` (no name given here).
    assert_eq!(d[3].decision.text, "export is out of scope");
    // Without the public keys the signature cannot be checked, and says so.
    let d = decisions(&ls, &PublicKeys::new(), all);
    assert!(
        d[0].decision.signature.contains("public key is unknown"),
        "{}",
        d[0].decision.signature
    );
    // An edited decision fails its signature.
    let mut edited = ls.clone();
    let rec = &mut edited[1].clarifications[0];
    if let Some(last) = rec.thread.last_mut() {
        last.body = "Redis.".into();
    }
    let d = decisions(&edited, &signers.public_keys(), all);
    assert!(
        d[0].decision.signature.contains("signature by engineer"),
        "{}",
        d[0].decision.signature
    );
    // Unsigned ledgers say so.
    let plain = ledgers(&Signers::new());
    let d = decisions(&plain, &PublicKeys::new(), all);
    assert_eq!(d[0].decision.signature, "unsigned");
}

#[test]
fn a_superseded_decision_names_what_replaced_it() {
    let signers = keyring();
    let mut ls = ledgers(&signers);
    let rec = &mut ls[1].clarifications[0];
    if let Some(last) = rec.thread.last_mut() {
        last.extra.insert(SUPERSEDES.into(), json!(["CLR-42-001"]));
    }
    let d = decisions(
        &ls,
        &signers.public_keys(),
        Select {
            all: true,
            since_ms: None,
        },
    );
    assert_eq!(d[0].supersedes, ["CLR-42-001"]);
    assert_eq!(d[2].id, "CLR-42-001");
    assert_eq!(d[2].status, Standing::Superseded);
    assert_eq!(d[2].superseded_by.as_deref(), Some("CLR-7-001"));
    let text = markdown(&d[2]);
    assert!(
        text.contains("- Status: superseded by CLR-7-001\n"),
        "{text}"
    );
    assert!(markdown(&d[0]).contains("- Supersedes: CLR-42-001\n"));
}

#[test]
fn the_record_escapes_what_the_ledger_holds_and_is_stable() {
    let signers = keyring();
    let ls = ledgers(&signers);
    let d = decisions(&ls, &signers.public_keys(), Select::default());
    let text = markdown(&d[0]);
    assert_eq!(text, markdown(&d[0]));
    assert!(
        text.starts_with("# Cache \\<b\\>backend\\</b\\>\n\n- Status: accepted\n"),
        "{text}"
    );
    assert!(
        !text.contains("<script>") && !text.contains("<b>"),
        "{text}"
    );
    // A body of several lines stays in its quote: the `#` line is no heading.
    assert!(text.contains("   > Memcached.\n   >\n   > &lt;script&gt;alert(1)&lt;/script&gt;\n   > # not a heading\n"), "{text}");
    assert!(text.contains("field `cache.backend`"), "{text}");
    assert!(
        text.contains("- Signature: signed by engineer: verified\n"),
        "{text}"
    );
    let hash = d[0].decision.hash.clone().unwrap_or_default();
    assert!(
        text.contains(&format!("- Resolution entry hash: `{hash}`\n")),
        "{text}"
    );
    assert!(text.ends_with('\n') && !text.ends_with("\n\n"), "{text:?}");
}

#[test]
fn file_names_are_stable_and_plain() {
    assert_eq!(
        file_stem(42, "Cache layer", "CLR-42-001"),
        "0042-cache-layer-clr-42-001"
    );
    assert_eq!(
        file_stem(12345, "¿Qué?", "CLR-12345-010"),
        "12345-qu-clr-12345-010"
    );
    assert_eq!(slug("!!!"), "decision");
    let long = slug(&"word ".repeat(40));
    assert!(long.len() <= 48 && !long.ends_with('-'), "{long}");
}

#[test]
fn a_value_shows_its_option_label() {
    let signers = keyring();
    let mut req = plain("engineer", "architect", "Store", "Which store?");
    req.answer = crate::kinds::AnswerSpec {
        kind: crate::kinds::AnswerKind::Choice,
        options: vec![
            serde_json::from_value(json!({"value": "pg", "label": "PostgreSQL"})).unwrap(),
            serde_json::from_value(json!({"value": "files"})).unwrap(),
        ],
        ..crate::kinds::AnswerSpec::default()
    };
    req.field = Some("store".into());
    let l = ask(None, &req, T0, &signers);
    let escalate = Action::Escalate {
        from: None,
        message: None,
    };
    let l = apply(&l, "CLR-42-001", escalate, T0 + MIN, &signers);
    let resolve = Action::ResolveValue {
        from: None,
        message: Some("PostgreSQL it is.".into()),
        value: json!("pg"),
    };
    let l = apply(&l, "CLR-42-001", resolve, T0 + 2 * MIN, &signers);
    let d = decisions(&[l], &signers.public_keys(), Select::default());
    assert_eq!(d[0].decision.value, Some(json!("pg")));
    assert_eq!(d[0].decision.label.as_deref(), Some("PostgreSQL"));
    assert!(markdown(&d[0]).contains("Chosen: `pg` (PostgreSQL)\n"));
}
