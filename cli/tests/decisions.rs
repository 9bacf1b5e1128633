//! `agentx decisions list` and `export` (issue 45, docs/protocol.md §36): the real binary on a
//! real workspace with signing keys. Exported twice the files are byte for byte the same; a
//! supersession rewrites the old one's status; the exported hash is the ledger entry's and
//! its signature verifies; what a ledger holds is escaped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{json_in, read_ledger, workspace};
use serde_json::Value;

fn ok(root: &std::path::Path, args: &[&str]) -> Value {
    let out = json_in(root, args);
    assert_eq!(out.code, 0, "{args:?}: {out:#?}");
    out.json()
}

fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

/// The hash of the last entry of record `id` in the ledger of `issue`.
fn last_hash(root: &std::path::Path, issue: u32, id: &str) -> String {
    let ledger = read_ledger(root, issue);
    let record = ledger["clarifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap()
        .clone();
    record["thread"].as_array().unwrap().last().unwrap()["hash"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn decisions_are_exported_once_and_a_supersession_rewrites_the_old_one() {
    let dir = workspace();
    let root = dir.path();
    for agent in ["agent-x", "engineer", "architect"] {
        ok(root, &["keys", "new", agent]);
    }
    let ask = |issue: &str, question: &str| {
        ok(
            root,
            &[
                "clarify",
                "ask",
                "--issue",
                issue,
                "--from",
                "engineer",
                "--to",
                "architect",
                "--topic",
                "Cache <b>layer</b>",
                "--question",
                question,
                "--field",
                "cache.layer",
            ],
        )
    };
    ask("7", "Redis or in-process?");
    ok(
        root,
        &[
            "clarify",
            "answer",
            "CLR-7-001",
            "--from",
            "architect",
            "--body",
            "Redis.\n<script>x</script>",
        ],
    );
    ok(
        root,
        &["clarify", "resolve", "CLR-7-001", "--from", "engineer"],
    );
    // A record without a field, of severity WARN: no decision unless --all.
    ok(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            "8",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Naming",
            "--question",
            "cfg?",
            "--severity",
            "WARN",
        ],
    );
    ok(
        root,
        &[
            "clarify",
            "answer",
            "CLR-8-001",
            "--from",
            "architect",
            "--body",
            "Yes.",
        ],
    );
    ok(
        root,
        &["clarify", "resolve", "CLR-8-001", "--from", "engineer"],
    );

    let listed = ok(root, &["decisions", "list"]);
    let ids: Vec<&str> = listed["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["CLR-7-001"], "{listed}");
    let all = ok(root, &["decisions", "list", "--all"]);
    assert_eq!(all["decisions"].as_array().unwrap().len(), 2, "{all}");

    let adr = root.join("docs/adr");
    let adr_arg = adr.to_str().unwrap();
    let first = ok(root, &["decisions", "export", "--format", "adr", adr_arg]);
    assert_eq!(
        first["written"],
        serde_json::json!(["0007-cache-b-layer-b-clr-7-001.md"]),
        "{first}"
    );
    let before = files(&adr);
    let text = String::from_utf8(before[0].1.clone()).unwrap();
    assert!(
        text.starts_with("# Cache \\<b\\>layer\\</b\\>\n\n- Status: accepted\n"),
        "{text}"
    );
    assert!(
        !text.contains("<script>") && !text.contains("<b>"),
        "{text}"
    );
    assert!(
        text.contains("- Signature: signed by engineer: verified\n"),
        "{text}"
    );
    let hash = last_hash(root, 7, "CLR-7-001");
    assert!(
        text.contains(&format!("- Resolution entry hash: `{hash}`\n")),
        "{text}"
    );

    // Twice: nothing changes.
    let again = ok(root, &["decisions", "export", "--format", "adr", adr_arg]);
    assert_eq!(again["unchanged"], 1, "{again}");
    assert_eq!(files(&adr), before);

    // A later decision supersedes it: the old file's status changes, the new one is added.
    ask("9", "Redis, still?");
    ok(
        root,
        &[
            "clarify",
            "escalate",
            "CLR-9-001",
            "--from",
            "engineer",
            "-m",
            "a person decides",
        ],
    );
    ok(
        root,
        &[
            "clarify",
            "resolve",
            "CLR-9-001",
            "-m",
            "In-process: one node.",
            "--supersedes",
            "CLR-7-001",
        ],
    );
    let third = ok(root, &["decisions", "export", "--format", "adr", adr_arg]);
    assert_eq!(
        third["updated"],
        serde_json::json!(["0007-cache-b-layer-b-clr-7-001.md"]),
        "{third}"
    );
    assert_eq!(
        third["written"],
        serde_json::json!(["0009-cache-b-layer-b-clr-9-001.md"]),
        "{third}"
    );
    let old = std::fs::read_to_string(adr.join("0007-cache-b-layer-b-clr-7-001.md")).unwrap();
    assert!(old.contains("- Status: superseded by CLR-9-001\n"), "{old}");
    let new = std::fs::read_to_string(adr.join("0009-cache-b-layer-b-clr-9-001.md")).unwrap();
    assert!(new.contains("- Supersedes: CLR-7-001\n"), "{new}");
    assert!(new.contains("verified"), "{new}");
    // An ask's text output shows what was decided before in other issues.
    let text = common::agentx()
        .args([
            &common::root_arg(root),
            "clarify",
            "ask",
            "--issue",
            "11",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Cache",
            "--question",
            "Redis or in-process now?",
            "--field",
            "cache.layer",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success(), "{shown}");
    assert!(
        shown.contains("decided before, in other issues:\n"),
        "{shown}"
    );
    assert!(
        shown.contains("\n  CLR-9-001  #9  Cache <b>layer</b> — In-process: one node. (by human,"),
        "{shown}"
    );
    assert!(
        shown.contains("\n  CLR-7-001  #7  Cache <b>layer</b> — Redis. (by engineer,"),
        "{shown}"
    );
    assert!(shown.contains("[superseded by CLR-9-001]"), "{shown}");
    assert!(shown.contains("--reuse <ID>"), "{shown}");
    // Every exported signature is one `verify` accepts.
    ok(root, &["clarify", "verify"]);

    // JSON: one document per decision, the same hash.
    let json_dir = root.join("decisions-json");
    ok(
        root,
        &[
            "decisions",
            "export",
            "--format",
            "json",
            "--all",
            json_dir.to_str().unwrap(),
        ],
    );
    let doc: Value = serde_json::from_slice(
        &std::fs::read(json_dir.join("0007-cache-b-layer-b-clr-7-001.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(doc["decision"]["hash"], hash.as_str());
    assert_eq!(doc["status"], "superseded");
    assert_eq!(doc["supersededBy"], "CLR-9-001");
    assert_eq!(files(&json_dir).len(), 3);
}

#[test]
fn a_bad_since_is_invalid_input() {
    let dir = workspace();
    let out = json_in(dir.path(), &["decisions", "list", "--since", "yesterday"]);
    assert_eq!(out.code, 3, "{out:#?}");
    assert_eq!(out.json()["error"]["code"], "INVALID_INPUT");
    let none = json_in(dir.path(), &["decisions", "list", "--since", "2026-11-01"]);
    assert_eq!(none.code, 0, "{none:#?}");
}
