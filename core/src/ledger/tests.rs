use serde_json::json;

use super::*;
use crate::testkit::agentx_ts;

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

#[test]
fn a_misfiled_ledger_is_corrupt() {
    let text = br#"{"issueNumber": 7, "clarifications": []}"#;
    let err = Ledger::parse("issue-1.json", text, Some(1)).unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
    assert_eq!(
        err.to_string(),
        "issue-1.json is corrupt (it holds the ledger of issue 7, not of issue 1); it was left untouched"
    );
    // Without a file name to compare with (API objects), the ledger's own number stands.
    assert_eq!(Ledger::parse("x", text, None).unwrap().issue_number, 7);
    assert_eq!(
        Ledger::parse("issue-7.json", text, Some(7))
            .unwrap()
            .issue_number,
        7
    );
}

#[test]
fn a_record_level_issue_number_must_agree() {
    let mut v = agentx_ts();
    assert!(Ledger::from_value("issue-1.json", &v, Some(1)).is_ok());
    v["clarifications"][0]["issueNumber"] = json!(2);
    let err = Ledger::from_value("issue-1.json", &v, Some(1)).unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
    assert!(
        err.to_string()
            .contains("record CLR-1-001 says issueNumber 2, but the ledger is issue 1"),
        "{err}"
    );
    v["clarifications"][0]["issueNumber"] = json!("1");
    let err = Ledger::from_value("issue-1.json", &v, None).unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
}

#[test]
fn a_byte_order_mark_is_read_and_never_written() {
    let mut bytes = crate::encoding::BOM.to_vec();
    bytes.extend_from_slice(agentx_ts().to_string().as_bytes());
    let mut ledger = Ledger::parse("issue-1.json", &bytes, Some(1)).unwrap();
    assert_eq!(ledger.clarifications.len(), 2);
    ledger.seal();
    assert!(ledger.to_pretty_json().starts_with("{\n"));
    // Only a leading BOM: one inside the JSON is still not JSON.
    let err = Ledger::parse("issue-1.json", b"\n\xEF\xBB\xBF{}", Some(1)).unwrap_err();
    assert_eq!(err.code(), "LEDGER_CORRUPT");
}

#[test]
fn hashing_is_over_instants_not_spellings() {
    let mut ledger = Ledger::from_value("issue-1.json", &agentx_ts(), Some(1)).unwrap();
    ledger.seal();
    let sealed = ledger.clarifications[0].clone();
    assert_eq!(sealed.chain_state(), ChainState::Intact);
    // PowerShell 7 rewrites `.940Z` as `.94Z` and `.000Z` as `Z`, and keeps the hashes.
    for (i, spelling) in [
        (0, "2026-11-22T10:00:00.942000Z"),
        (1, "2026-11-22T10:04:00Z"),
        (1, "2026-11-22T11:04:00.0+01:00"),
    ] {
        let mut r = sealed.clone();
        r.thread[i].timestamp = Timestamp::parse(spelling).unwrap();
        assert_eq!(r.chain_state(), ChainState::Intact, "{spelling}");
    }
    // Any change of the instant breaks the chain, by a millisecond too.
    for (i, instant) in [
        (0, "2026-11-22T10:00:00.943Z"),
        (1, "2026-11-22T10:04:00.001Z"),
    ] {
        let mut r = sealed.clone();
        r.thread[i].timestamp = Timestamp::parse(instant).unwrap();
        assert_eq!(r.chain_state(), ChainState::BrokenAt(i), "{instant}");
    }
}

#[test]
fn canonical_hashes_are_unchanged() {
    // An entry of `tests/vectors/core/verify_problems.json`, hashed before hashing went over
    // instants: canonical timestamps hash exactly as they did.
    let entry = Entry {
        round: 1,
        from: "engineer".into(),
        kind: EntryKind::Question,
        body: "Fine?".into(),
        value: None,
        timestamp: Timestamp::parse("2026-11-22T09:00:00.000Z").unwrap(),
        hash: None,
        signer: None,
        signature: None,
        extra: Map::new(),
    };
    assert_eq!(
        entry_hash("CLR-30-001", "", &entry),
        "e17f5df6674491bf1c8b85be1315f58e121693fbb93edbc68a1b3915b3badd46"
    );
    let respelled = Entry {
        timestamp: Timestamp::parse("2026-11-22T09:00:00Z").unwrap(),
        ..entry.clone()
    };
    assert_eq!(
        entry_hash("CLR-30-001", "", &respelled),
        entry_hash("CLR-30-001", "", &entry)
    );
    // The generic path (unknown fields present) and signed entries canonicalise the same way.
    let mut with_extra = respelled;
    with_extra.extra.insert("note".into(), json!("engineer"));
    let mut canonical = entry;
    canonical.extra.insert("note".into(), json!("engineer"));
    assert_eq!(
        entry_hash("CLR-30-001", "", &with_extra),
        entry_hash("CLR-30-001", "", &canonical)
    );
    for e in [&mut with_extra, &mut canonical] {
        e.extra.clear();
        e.signer = Some("engineer".into());
    }
    assert_eq!(
        entry_hash("CLR-30-001", "", &with_extra),
        entry_hash("CLR-30-001", "", &canonical)
    );
}

#[test]
fn entries_appended_without_a_hash_join_the_chain_on_the_next_write() {
    let mut ledger = Ledger::from_value("issue-1.json", &agentx_ts(), Some(1)).unwrap();
    ledger.seal();
    let record = &mut ledger.clarifications[0];
    // AgentX's TypeScript appends two entries without hashes.
    for (kind, from, body) in [
        (EntryKind::Question, "engineer", "TTL?"),
        (EntryKind::Answer, "architect", "60 s."),
    ] {
        record.thread.push(Entry {
            round: 2,
            from: from.into(),
            kind,
            body: body.into(),
            value: None,
            timestamp: Timestamp::parse("2026-11-22T10:10:00.5Z").unwrap(),
            hash: None,
            signer: None,
            signature: None,
            extra: Map::new(),
        });
    }
    assert_eq!(record.chain_state(), ChainState::UnhashedTail(2));
    let mut appended = record.clone();
    appended.append(
        EntryKind::Resolution,
        "engineer",
        "thanks",
        1_795_342_300_000,
    );
    assert_eq!(appended.chain_state(), ChainState::Intact);
    ledger.seal();
    let record = &ledger.clarifications[0];
    assert_eq!(record.chain_state(), ChainState::Intact);
    assert_eq!(
        record.thread[2].timestamp.as_str(),
        "2026-11-22T10:10:00.500Z"
    );
    // An entry without a hash *before* a hashed one is not repaired: verify reports it.
    let mut stripped = record.clone();
    stripped.thread[1].hash = None;
    stripped.seal();
    assert_eq!(stripped.chain_state(), ChainState::Mixed);
}

#[test]
fn sealing_writes_canonical_timestamps() {
    let mut v = agentx_ts();
    v["clarifications"][0]["created"] = json!("2026-11-22T10:00:00.94Z");
    v["clarifications"][0]["thread"][1]["timestamp"] = json!("2026-11-22T10:04:00Z");
    let mut ledger = Ledger::from_value("issue-1.json", &v, Some(1)).unwrap();
    ledger.seal();
    let text = ledger.to_pretty_json();
    assert!(!text.contains(":00Z\"") && !text.contains(".94Z"), "{text}");
    let r = &ledger.clarifications[0];
    assert_eq!(r.thread[1].timestamp.as_str(), "2026-11-22T10:04:00.000Z");
    assert_eq!(
        r.created.as_ref().map(Timestamp::as_str),
        Some("2026-11-22T10:00:00.942Z"),
        "created is the first question's time"
    );
}

#[test]
fn outputs_show_the_fold() {
    // AgentX left `pending` (and its own round and staleAfter) on an answered record.
    let mut v = agentx_ts();
    v["clarifications"][0]["round"] = json!(0);
    v["clarifications"][0]["retries"] = json!(4);
    let ledger = Ledger::from_value("issue-1.json", &v, Some(1)).unwrap();
    let r = &ledger.clarifications[0];
    assert_eq!(
        r.status,
        Status::Pending,
        "the stored snapshot is kept as read"
    );
    let out = r.to_output(1);
    assert_eq!(out["issueNumber"], 1);
    assert_eq!(out["status"], "answered");
    assert_eq!(out["round"], 1);
    assert_eq!(out["retries"], 0);
    assert_eq!(out["resolvedAt"], Value::Null);
    assert_eq!(out["created"], "2026-11-22T10:00:00.942Z");
    assert_eq!(out["staleAfter"], "2026-11-22T10:30:00.942Z");
    assert_eq!(serde_json::to_value(r.output(1)).unwrap(), out);
    let shown = ledger.to_output_value();
    assert_eq!(shown["clarifications"][0]["status"], "answered");
    assert!(shown["clarifications"][0].get("issueNumber").is_none());
    assert_eq!(ledger.to_value()["clarifications"][0]["status"], "pending");
    // A legacy record stored as stale whose stale entry is missing shows what commands see.
    let mut v = agentx_ts();
    v["clarifications"][0]["status"] = json!("stale");
    v["clarifications"][0]["thread"]
        .as_array_mut()
        .unwrap()
        .pop();
    let ledger = Ledger::from_value("issue-1.json", &v, Some(1)).unwrap();
    assert_eq!(ledger.clarifications[0].to_output(1)["status"], "stale");
}
