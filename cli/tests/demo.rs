//! `agentx demo`: the story played in a given root, refused where ledgers already exist.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
fn demo_plays_in_a_given_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo");
    let out = run([root_arg(&root), "--json".into(), "demo".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "root", "stats"]));
    assert!(v["stats"]["total"].as_u64().unwrap() > 0);
    assert_eq!(json_in(&root, &["clarify", "verify"]).code, 0);
    // The routed chapter: the architect's agent process answered, the failing one escalated
    // with its cause (as agent-x), and nothing else was written as an answer.
    let routed = json_in(&root, &["clarify", "show", "--issue", "47"]).json();
    let records = routed["ledger"]["clarifications"].as_array().unwrap();
    assert_eq!(records[0]["status"], "answered", "{routed}");
    assert_eq!(records[0]["thread"][1]["from"], "architect");
    assert!(records[0]["thread"][1]["body"]
        .as_str()
        .unwrap()
        .starts_with("A token bucket per API key"));
    assert_eq!(records[1]["status"], "escalated", "{routed}");
    let last = records[1]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["from"].as_str(), last["type"].as_str()),
        (Some("agent-x"), Some("escalation"))
    );
    assert!(records[1]["thread"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["type"] != "answer"));
    // A workspace that already holds ledgers is refused.
    assert_fails(&json_in(&root, &["demo"]), 3, "INVALID_INPUT");

    let other = dir.path().join("loud");
    let out = run([root_arg(&other), "--color=never".into(), "demo".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("CLR-42-001"), "{out:#?}");
    for shown in [
        "clarify route CLR-47-001",
        "CLARIFICATION RESPONSE",
        "agent error",
    ] {
        assert!(out.stdout.contains(shown), "{shown} missing: {out:#?}");
    }
    assert!(!out.stdout.contains('\u{1b}'));
}
