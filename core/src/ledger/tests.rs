use serde_json::json;

use super::*;

fn legacy() -> Value {
    json!({
        "issueNumber": 42,
        "labels": ["api"],
        "clarifications": [{
            "id": "CLR-42-001",
            "issueNumber": 42,
            "from": "engineer",
            "to": "architect",
            "topic": "Cache layer",
            "blocking": true,
            "status": "answered",
            "round": 1,
            "maxRounds": 5,
            "created": "2026-02-26T10:00:00.000Z",
            "staleAfter": "2026-02-26T10:45:00.000Z",
            "resolvedAt": null,
            "priority": "high",
            "thread": [
                {"round": 1, "from": "engineer", "type": "question", "body": "Redis?", "timestamp": "2026-02-26T10:00:00.000Z"},
                {"round": 1, "from": "architect", "type": "answer", "body": "Yes.", "timestamp": "2026-02-26T10:05:00.000Z"}
            ]
        }, {
            "id": "CLR-42-002",
            "from": "engineer",
            "to": "product-manager",
            "topic": "Empty",
            "status": "pending",
            "round": 0,
            "maxRounds": 5,
            "thread": []
        }]
    })
}

#[test]
fn reads_reference_ledgers() {
    let ledger = Ledger::from_value("issue-42.json", &legacy(), None).unwrap();
    let r = &ledger.clarifications[0];
    assert_eq!(
        r.sla_minutes, 45,
        "whole minutes between created and staleAfter"
    );
    assert_eq!(r.retries, 0);
    assert_eq!(r.extra.get("priority"), Some(&json!("high")));
    assert_eq!(ledger.extra.get("labels"), Some(&json!(["api"])));
    assert_eq!(r.chain_state(), ChainState::Unhashed);
    let empty = &ledger.clarifications[1];
    assert_eq!(empty.sla_minutes, 30);
    assert_eq!(empty.current_status(), Status::Pending);
    assert_eq!(empty.fold().round, 0);
}

#[test]
fn sealing_upgrades_and_keeps_unknown_fields() {
    let mut ledger = Ledger::from_value("issue-42.json", &legacy(), None).unwrap();
    ledger.seal();
    let text = ledger.to_pretty_json();
    assert!(text.ends_with("}\n"));
    let v: Value = serde_json::from_str(&text).unwrap();
    let r = &v["clarifications"][0];
    assert!(
        r.get("issueNumber").is_none(),
        "record-level issueNumber is dropped"
    );
    assert_eq!(r["priority"], "high");
    assert_eq!(r["slaMinutes"], 45);
    assert_eq!(v["labels"], json!(["api"]));
    assert!(r["thread"][0]["hash"].is_string());
    let again = Ledger::parse("issue-42.json", text.as_bytes(), None).unwrap();
    assert_eq!(again, ledger, "round trip is identity");
    assert_eq!(again.clarifications[0].chain_state(), ChainState::Intact);
}

#[test]
fn next_id_is_max_plus_one() {
    let mut ledger = Ledger::new(7);
    for id in ["CLR-7-001", "CLR-7-005", "CLR-8-900", "bogus"] {
        let mut r = Ledger::from_value("x", &legacy(), None)
            .unwrap()
            .clarifications
            .remove(0);
        r.id = id.into();
        ledger.clarifications.push(r);
    }
    assert_eq!(ledger.next_id().to_string(), "CLR-7-006");
}

#[test]
fn tampering_breaks_the_chain() {
    let mut ledger = Ledger::from_value("issue-42.json", &legacy(), None).unwrap();
    ledger.seal();
    ledger.clarifications[0].thread[0].body = "Memcached?".into();
    assert_eq!(
        ledger.clarifications[0].chain_state(),
        ChainState::BrokenAt(0)
    );
    ledger.clarifications[0].thread[0].hash = None;
    assert_eq!(ledger.clarifications[0].chain_state(), ChainState::Mixed);
}

#[test]
fn corrupt_bytes_are_an_error() {
    let err = Ledger::parse("issue-9.json", b"{ not json", Some(9)).unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
    assert!(
        err.to_string().starts_with("issue-9.json is corrupt ("),
        "{err}"
    );
    let err = Ledger::parse(
        "issue-9.json",
        br#"{"issueNumber": 9, "clarifications": [{"id": 1}]}"#,
        None,
    )
    .unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
}

#[test]
fn missing_issue_number_comes_from_the_file() {
    let l = Ledger::parse("issue-3.json", br#"{"clarifications": []}"#, Some(3)).unwrap();
    assert_eq!(l.issue_number, 3);
}
