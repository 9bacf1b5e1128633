//! `agentx demo`: the story played in a given root, refused where ledgers already exist.

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
    // A workspace that already holds ledgers is refused.
    assert_fails(&json_in(&root, &["demo"]), 3, "INVALID_INPUT");

    let other = dir.path().join("loud");
    let out = run([root_arg(&other), "--color=never".into(), "demo".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("CLR-42-001"), "{out:#?}");
    assert!(!out.stdout.contains('\u{1b}'));
}
