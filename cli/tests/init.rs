//! `agentx init`: the layout it creates on disk, and that it never overwrites what is there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

#[test]
fn init_creates_the_layout_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(keys(&v), set(&["ok", "created"]));
    let created: Vec<&str> = v["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for path in [
        ".agentx/",
        ".agentx/workflows/",
        ".agentx/state/",
        ".agentx/state/clarifications/",
        ".agentx/workflows/feature.toml",
        ".agentx/workflows/story.toml",
        ".agentx/workflows/bug.toml",
        ".agentx/config.toml",
    ] {
        assert!(created.contains(&path), "{path} not in {created:?}");
        assert!(root.join(path).exists(), "{path} missing on disk");
    }
    let feature = std::fs::read_to_string(root.join(".agentx/workflows/feature.toml")).unwrap();
    assert!(feature.contains("can_clarify"), "{feature}");
    let bug = std::fs::read_to_string(root.join(".agentx/workflows/bug.toml")).unwrap();
    assert!(bug.contains("clarify_blocking_allowed = false"), "{bug}");

    // Second run: the user's edit survives byte for byte, only a deleted file comes back.
    let feature_path = root.join(".agentx/workflows/feature.toml");
    let edited = format!("# my own notes\n{feature}\n# trailing comment, no newline");
    std::fs::write(&feature_path, &edited).unwrap();
    std::fs::remove_file(root.join(".agentx/workflows/story.toml")).unwrap();
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json()["created"],
        json!([".agentx/workflows/story.toml"])
    );
    assert_eq!(bytes(&feature_path), edited.as_bytes());

    // Third run: nothing to create, nothing touched.
    let before = snapshot(root);
    let out = json_in(root, &["init"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json(), json!({"ok": true, "created": []}));
    let out = run([root_arg(root), "init".to_owned()]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("nothing to create"), "{out:#?}");
    assert_eq!(snapshot(root), before, "a repeated init changed files");
}
