use serde_json::json;

use super::*;
use crate::ledger::ChainState;
use crate::testkit::AGENTX_TS;
use crate::verify::check_file;

fn messages(m: &Migration) -> Vec<(Option<&str>, &str)> {
    m.changes
        .iter()
        .map(|c| (c.id.as_deref(), c.message.as_str()))
        .collect()
}

#[test]
fn upgrades_an_agentx_ledger_and_says_how() {
    let m = migrate_file("issue-1.json", AGENTX_TS.as_bytes(), Some(1)).unwrap();
    let first = Some("CLR-1-001");
    let second = Some("CLR-1-002");
    assert_eq!(
        messages(&m),
        vec![
            (first, "status \"pending\" → \"answered\" (from the thread)"),
            (first, "set slaMinutes to 30 (was missing)"),
            (
                first,
                "created \"2026-11-22T10:00:00.940Z\" → \"2026-11-22T10:00:00.942Z\" (from the thread)"
            ),
            (
                first,
                "staleAfter \"2026-11-22T10:30:00.940Z\" → \"2026-11-22T10:30:00.942Z\" (from the thread)"
            ),
            (first, "set retries to 0 (was missing; from the thread)"),
            (first, "dropped issueNumber (was 1)"),
            (first, "hashed entries 1–2 in order"),
            (second, "set slaMinutes to 30 (was missing)"),
            (second, "set retries to 0 (was missing; from the thread)"),
            (second, "dropped issueNumber (was 1)"),
        ]
    );
    let r = &m.ledger.clarifications[0];
    assert_eq!(r.chain_state(), ChainState::Intact);
    assert_eq!(r.extra.get("recordType"), Some(&json!("clarification")));
    // The result verifies clean but for the record that never got its question.
    let found = check_file("issue-1.json", m.text.as_bytes());
    assert!(found.problems.is_empty());
    assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);
    assert_eq!(found.warnings[0].id.as_deref(), Some("CLR-1-002"));
}

#[test]
fn migrating_twice_changes_nothing_the_second_time() {
    let once = migrate_file("issue-1.json", AGENTX_TS.as_bytes(), Some(1)).unwrap();
    let twice = migrate_file("issue-1.json", once.text.as_bytes(), Some(1)).unwrap();
    assert_eq!(twice.changes, vec![]);
    assert_eq!(twice.text, once.text);
    assert_eq!(twice.ledger, once.ledger);
}

#[test]
fn powershell_spellings_bom_and_layout() {
    // PowerShell 7 re-spells timestamps (`.94Z`, no fraction at all) when it rewrites a file
    // we wrote; PowerShell 5 adds a BOM.
    let ours = migrate_file("issue-1.json", AGENTX_TS.as_bytes(), Some(1))
        .unwrap()
        .text;
    let respelled = ours
        .replace("10:00:00.940Z", "10:00:00.94Z")
        .replace("10:04:00.000Z", "10:04:00Z");
    let mut bytes = crate::encoding::BOM.to_vec();
    bytes.extend_from_slice(respelled.as_bytes());
    let m = migrate_file("issue-1.json", &bytes, Some(1)).unwrap();
    assert_eq!(
        messages(&m),
        vec![
            (None, "removed the UTF-8 byte order mark"),
            (
                Some("CLR-1-001"),
                "wrote the timestamps of entry 2 in canonical form (same instants)"
            ),
        ]
    );
    assert_eq!(
        m.text, ours,
        "the same file as before PowerShell touched it"
    );
    // Only the layout differs: one change says so.
    let compact = serde_json::to_string(&m.ledger).unwrap();
    let m = migrate_file("issue-1.json", compact.as_bytes(), Some(1)).unwrap();
    assert_eq!(
        messages(&m),
        vec![(
            None,
            "rewrote the layout: pretty JSON with 2-space indents and a trailing newline"
        )]
    );
}

#[test]
fn corrupt_and_misfiled_ledgers_are_refused() {
    for (bytes, issue) in [
        (&b"{ not json"[..], Some(1)),
        (AGENTX_TS.as_bytes(), Some(2)),
    ] {
        let e = migrate_file("issue-x.json", bytes, issue).unwrap_err();
        assert_eq!(e.code(), "LEDGER_CORRUPT");
    }
}

#[test]
fn values_migrate_like_files() {
    let v: Value = serde_json::from_str(AGENTX_TS).unwrap();
    let from_value = migrate_value("issue-1.json", &v, Some(1)).unwrap();
    let from_file = migrate_file("issue-1.json", AGENTX_TS.as_bytes(), Some(1)).unwrap();
    assert_eq!(from_value, from_file);
}
