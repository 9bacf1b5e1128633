//! `agentx migrate` (docs/protocol.md §20) on ledgers written the way AgentX's own writers write them:
//! the TypeScript router (`JSON.stringify(ledger, null, 2)`, record-level `issueNumber`, no
//! hashes, `created` a few ms before the question, a stored `pending` whose thread has its
//! answer), PowerShell (a BOM, `ConvertTo-Json`, a stored `stale` without its entry, re-spelled
//! timestamps), an entry appended without a hash after ours, and a router crash (round 0).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};

/// AgentX's TypeScript router: `JSON.stringify(ledger, null, 2)`.
fn typescript(issue: u32, status: &str, thread: Value) -> String {
    let ledger = json!({
        "issueNumber": issue,
        "clarifications": [{
            "id": format!("CLR-{issue}-001"),
            "issueNumber": issue,
            "from": "engineer",
            "to": "architect",
            "topic": "Cache",
            "blocking": true,
            "status": status,
            "round": 1,
            "maxRounds": 5,
            "created": "2026-11-22T10:00:00.940Z",
            "staleAfter": "2026-11-22T10:30:00.940Z",
            "resolvedAt": null,
            "thread": thread
        }]
    });
    serde_json::to_string_pretty(&ledger).unwrap()
}

fn question() -> Value {
    json!({"round": 1, "from": "engineer", "type": "question", "body": "Redis?",
        "timestamp": "2026-11-22T10:00:00.942Z"})
}

fn answer() -> Value {
    json!({"round": 1, "from": "architect", "type": "answer", "body": "Yes.",
        "timestamp": "2026-11-22T10:04:00.000Z"})
}

fn warned_files(root: &Path) -> Vec<(String, String)> {
    // Exit 8 for issue-9.json, which is no ledger; warnings are never problems.
    let out = json_in(root, &["clarify", "verify"]);
    let v = out.json();
    assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["problems"][0]["file"], "issue-9.json", "{v}");
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["file"].as_str().unwrap().to_owned(),
                w["id"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

fn write(root: &Path, issue: u32, bytes: &[u8]) {
    std::fs::write(ledger_path(root, issue), bytes).unwrap();
}

#[test]
fn migrate_upgrades_agentx_ledgers_reports_each_change_and_verify_is_then_clean() {
    let dir = workspace();
    let root = dir.path();
    // 3: ours (first: its follow-up monitor would upgrade the others), then an answer
    // appended by the TypeScript router (no hash, a timestamp spelled its own way).
    let out = json_at(root, T0, &argv(&ask_args(3, "Ours", "hashed?")));
    assert_eq!(out.code, 0);
    let mut ours = read_ledger(root, 3);
    ours["clarifications"][0]["thread"]
        .as_array_mut()
        .unwrap()
        .push(
            json!({"round": 1, "from": "architect", "type": "answer", "body": "By TS.",
            "timestamp": "2026-11-22T10:05:00.5Z"}),
        );
    ours["clarifications"][0]["status"] = json!("answered");
    write(
        root,
        3,
        serde_json::to_string_pretty(&ours).unwrap().as_bytes(),
    );
    // 1: TypeScript, pending on disk though the thread holds the answer.
    write(
        root,
        1,
        typescript(1, "pending", json!([question(), answer()])).as_bytes(),
    );
    // 2: PowerShell 5 (BOM), marked stale without a stale entry.
    let mut ps = b"\xEF\xBB\xBF".to_vec();
    ps.extend(typescript(2, "stale", json!([question()])).into_bytes());
    write(root, 2, &ps);
    // 4: the router crashed before the question (round 0, empty thread).
    let mut crashed: Value = serde_json::from_str(&typescript(4, "pending", json!([]))).unwrap();
    crashed["clarifications"][0]["round"] = json!(0);
    write(
        root,
        4,
        serde_json::to_string_pretty(&crashed).unwrap().as_bytes(),
    );
    // 9: not a ledger at all.
    write(root, 9, b"{ \"issueNumber\": 9, \"clarif");
    let before: Vec<Vec<u8>> = [1, 2, 3, 4, 9]
        .iter()
        .map(|n| std::fs::read(ledger_path(root, *n)).unwrap())
        .collect();

    let warned = warned_files(root);
    for file in [
        "issue-1.json",
        "issue-2.json",
        "issue-3.json",
        "issue-4.json",
    ] {
        assert!(warned.iter().any(|(f, _)| f == file), "{file}: {warned:?}");
    }

    // A dry run says everything and writes nothing.
    let out = json_in(root, &["migrate", "--dry-run"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let dry = out.json();
    assert_eq!(dry["dryRun"], true);
    let files: Vec<&str> = dry["migrated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "issue-1.json",
            "issue-2.json",
            "issue-3.json",
            "issue-4.json"
        ]
    );
    assert_eq!(dry["errors"][0]["file"], "issue-9.json");
    assert_eq!(dry["errors"][0]["code"], "LEDGER_CORRUPT");
    assert!(out.stderr.contains("issue-9.json"), "{out:#?}");
    for (n, bytes) in [1, 2, 3, 4, 9].iter().zip(&before) {
        assert_eq!(
            &std::fs::read(ledger_path(root, *n)).unwrap(),
            bytes,
            "issue {n}"
        );
    }
    let changes = |v: &Value, file: &str| -> Vec<String> {
        v["migrated"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["file"] == file)
            .map(|m| {
                m["changes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {}",
                            c["id"].as_str().unwrap_or("-"),
                            c["message"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let one = changes(&dry, "issue-1.json");
    for expected in [
        "CLR-1-001 status \"pending\" → \"answered\" (from the thread)",
        "CLR-1-001 dropped issueNumber (was 1)",
        "CLR-1-001 hashed entries 1–2 in order",
    ] {
        assert!(one.contains(&expected.to_owned()), "{expected}: {one:?}");
    }
    assert_eq!(
        changes(&dry, "issue-2.json")[0],
        "- removed the UTF-8 byte order mark"
    );
    let three = changes(&dry, "issue-3.json");
    assert!(
        three.contains(&"CLR-3-001 hashed entry 2 in order".to_owned()),
        "{three:?}"
    );

    // The real run: one line per change in text mode.
    let out = run([root_arg(root), "migrate".into()]);
    assert_eq!(out.code, 0, "{out:#?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.contains(&"issue-1.json  CLR-1-001  dropped issueNumber (was 1)"),
        "{}",
        out.stdout
    );
    assert_eq!(
        lines.len(),
        one.len()
            + changes(&dry, "issue-2.json").len()
            + three.len()
            + changes(&dry, "issue-4.json").len()
            + 1,
        "one line per change and a summary: {}",
        out.stdout
    );
    assert_eq!(
        lines.last().copied(),
        Some("migrated 4 ledger file(s), 0 already current, 1 could not be read")
    );
    assert!(
        out.stderr
            .contains("issue-9.json could not be read [LEDGER_CORRUPT]"),
        "{out:#?}"
    );
    assert_eq!(
        std::fs::read(ledger_path(root, 9)).unwrap(),
        before[4],
        "left untouched"
    );
    assert!(!std::fs::read(ledger_path(root, 2))
        .unwrap()
        .starts_with(b"\xEF\xBB\xBF"));

    // verify: no warnings left but two the core leaves on purpose: the stale entry another
    // tool never wrote is the monitor's to append (at a `now`), and a record without a question
    // stays visible so the user knows why it cannot be answered.
    let mut left = warned_files(root);
    left.dedup();
    assert_eq!(
        left,
        [
            ("issue-2.json".to_owned(), "CLR-2-001".to_owned()),
            ("issue-4.json".to_owned(), "CLR-4-001".to_owned())
        ]
    );
    assert_eq!(json_at(root, T0, &["clarify", "monitor"]).code, 0);
    assert_eq!(
        warned_files(root),
        [("issue-4.json".to_owned(), "CLR-4-001".to_owned())]
    );
    // What AgentX left is now worked on as ours: the answered record can be resolved.
    let out = json_at(
        root,
        T0,
        &["clarify", "resolve", "CLR-1-001", "--from=engineer"],
    );
    assert_eq!(out.code, 0, "{out:#?}");

    // Again: nothing to do.
    let again = json_in(root, &["migrate"]).json();
    assert_eq!(again["migrated"], json!([]));
    assert_eq!(again["unchanged"], 4);
}

#[test]
fn migrate_takes_each_ledgers_lock() {
    let dir = workspace();
    let root = dir.path();
    write_config(root, "[clarify]\nlock_timeout_ms = 200\n");
    let text = typescript(5, "pending", json!([question()]));
    write(root, 5, text.as_bytes());
    let lock = clarifications_dir(root).join("issue-5.json.lock");
    std::fs::write(
        &lock,
        json!({"pid": std::process::id(), "hostname": this_host(), "timestamp": wall_ms(), "agent": "router"})
            .to_string(),
    )
    .unwrap();
    let v = json_in(root, &["migrate"]).json();
    assert_eq!(v["errors"][0]["file"], "issue-5.json", "{v}");
    assert_eq!(v["errors"][0]["code"], "LOCK_TIMEOUT", "{v}");
    assert_eq!(v["migrated"], json!([]), "{v}");
    assert_eq!(std::fs::read_to_string(ledger_path(root, 5)).unwrap(), text);
    std::fs::remove_file(&lock).unwrap();
    let v = json_in(root, &["migrate"]).json();
    assert_eq!(v["migrated"][0]["file"], "issue-5.json", "{v}");
}

fn argv(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}
