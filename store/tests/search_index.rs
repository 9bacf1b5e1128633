//! The full-text index of `clarify search` and `related` (docs/protocol.md §36): on the same
//! ledger files it gives exactly the scan's hits in the scan's order; it follows writes that
//! went around it (another tool's file, a removed ledger, a rename); a deleted, corrupt or
//! outdated index is rebuilt with the same answers.
#![cfg(feature = "fulltext")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use agentx_clarify_command::query::read_all;
use agentx_clarify_command::search::{rank, search};
use agentx_clarify_command::State;
use agentx_clarify_core::ledger::EntryKind;
use agentx_clarify_core::search::probe::Probe;
use agentx_clarify_core::search::{supersede, Filter, Hit, Query};
use agentx_clarify_core::{Ledger, Status};
use agentx_clarify_store::DiskStore;
use agentx_clarify_tests::fixtures::{ledger, Kind};
use serde_json::json;

const NOW: i64 = 1_795_341_600_000;
const WORDS: [&str; 9] = [
    "redis",
    "postgres",
    "kafka",
    "csv",
    "export",
    "retention",
    "billing",
    "auth",
    "sso",
];

fn clar(root: &Path) -> PathBuf {
    root.join(".agentx/state/clarifications")
}

/// Ledger `i`: the fixture's shape with its own words, fields and times; every 7th one's
/// first decision supersedes the one of issue `i - 3`.
fn varied(i: u64) -> Ledger {
    let kinds = [Kind::Clean, Kind::Finished, Kind::Stale, Kind::Stuck];
    let mut l = ledger(i, kinds[(i % 4) as usize], NOW - (i as i64) * 60_000);
    let (a, b) = (WORDS[(i % 9) as usize], WORDS[(i / 9 % 9) as usize]);
    for (n, r) in l.clarifications.iter_mut().enumerate() {
        r.topic = format!("{a} {}", r.topic);
        if n == 0 && i.is_multiple_of(5) {
            r.field = Some(format!("{b}.choice"));
        }
        if let Some(q) = r.thread.iter_mut().find(|e| e.kind == EntryKind::Question) {
            q.body = format!("{} {b}?", q.body.trim_end_matches('?'));
        }
        let superseding = n == 0 && i.is_multiple_of(7) && i >= 3;
        if let Some(e) = r
            .thread
            .iter_mut()
            .find(|e| e.kind == EntryKind::Resolution)
        {
            if superseding {
                e.extra
                    .insert("supersedes".into(), json!([format!("CLR-{}-001", i - 3)]));
            }
        }
    }
    l
}

fn put(root: &Path, l: &Ledger) {
    std::fs::create_dir_all(clar(root)).unwrap();
    let path = clar(root).join(format!("issue-{}.json", l.issue_number));
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, l.to_pretty_json()).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

fn workspace(n: u64) -> (tempfile::TempDir, DiskStore) {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=n {
        put(dir.path(), &varied(i));
    }
    let store = DiskStore::new(dir.path());
    (dir, store)
}

fn queries() -> Vec<(String, Option<String>, Filter)> {
    let mut out = Vec::new();
    let filters = [
        Filter::default(),
        Filter {
            limit: Some(3),
            ..Filter::default()
        },
        Filter {
            limit: Some(100),
            ..Filter::default()
        },
        Filter {
            statuses: vec![Status::Resolved],
            ..Filter::default()
        },
        Filter {
            statuses: vec![Status::Pending, Status::Stale],
            limit: Some(50),
            ..Filter::default()
        },
        Filter {
            field: Some("kafka.choice".into()),
            ..Filter::default()
        },
        Filter {
            from: Some("engineer".into()),
            to: Some("architect".into()),
            ..Filter::default()
        },
        Filter {
            not_issue: Some(9),
            limit: Some(20),
            ..Filter::default()
        },
    ];
    let texts = [
        "redis",
        "csv export",
        "session cache sso",
        "",
        "the",
        "nothing-matches",
        "Kafka billing retention?",
    ];
    for text in texts {
        for field in [None, Some("redis.choice".to_owned())] {
            for f in &filters {
                out.push((text.to_owned(), field.clone(), f.clone()));
            }
        }
    }
    out
}

/// The scan's answer: every ledger read, ranked by the core.
fn scanned(store: &DiskStore, q: &Query<'_>, f: &Filter) -> Vec<Hit> {
    let (ledgers, _) = read_all(store).unwrap();
    rank(&ledgers, q, f)
}

fn same_answers(store: &DiskStore) {
    for (text, field, f) in queries() {
        let q = Query {
            text: &text,
            field: field.as_deref(),
        };
        assert!(
            store.search_index(&Probe::search(&q, &f)).is_some(),
            "index unused"
        );
        let by_index = search(store, &q, &f).unwrap().hits;
        assert_eq!(by_index, scanned(store, &q, &f), "{text:?} {field:?} {f:?}");
    }
}

#[test]
fn the_index_gives_the_scans_hits_in_the_scans_order() {
    let (_dir, store) = workspace(300);
    same_answers(&store);
    // Superseded decisions are marked as the scan marks them.
    let q = Query {
        text: "redis",
        field: None,
    };
    let f = Filter {
        limit: Some(100),
        ..Filter::default()
    };
    let hits = search(&store, &q, &f).unwrap().hits;
    assert!(
        hits.iter().any(|h| h.superseded_by.is_some()),
        "no superseded hit"
    );
    let (ledgers, _) = read_all(&store).unwrap();
    assert!(!supersede::superseded_by(&ledgers).is_empty());
}

#[test]
fn related_by_the_index_is_related_by_the_scan() {
    let (_dir, store) = workspace(200);
    let (ledgers, _) = read_all(&store).unwrap();
    for text in [
        "Session cache: redis or an in-process LRU?",
        "csv export retention",
        "x",
    ] {
        for field in [None, Some("sso.choice")] {
            for min in [0, 30, 60, 90] {
                let q = Query { text, field };
                let probe = Probe::related(&q, 4, min);
                let found = store.search_index(&probe).unwrap();
                let records = ledgers
                    .iter()
                    .flat_map(|l| l.clarifications.iter().map(move |r| (l.issue_number, r)));
                let scan = agentx_clarify_core::search::related(&q, 4, min, records);
                let ids: Vec<(u32, String)> =
                    scan.iter().map(|h| (h.issue, h.id.clone())).collect();
                assert_eq!(found.records, ids, "{text:?} {field:?} {min}");
            }
        }
    }
}

#[test]
fn writes_around_the_index_are_seen_by_the_next_search() {
    let (dir, store) = workspace(60);
    same_answers(&store);
    // Another tool rewrites one ledger, removes another and adds a third.
    let mut l = varied(10);
    l.clarifications[0].topic = "zebra crossing".into();
    put(dir.path(), &l);
    std::fs::remove_file(clar(dir.path()).join("issue-11.json")).unwrap();
    put(dir.path(), &varied(61));
    let q = Query {
        text: "zebra",
        field: None,
    };
    let hits = search(&store, &q, &Filter::default()).unwrap().hits;
    assert_eq!(
        hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["CLR-10-001"]
    );
    same_answers(&store);
}

#[test]
fn a_deleted_corrupt_or_unreadable_index_is_rebuilt_with_the_same_answers() {
    let (dir, store) = workspace(80);
    same_answers(&store);
    let index = dir.path().join(".agentx/index/search");
    std::fs::remove_dir_all(&index).unwrap();
    same_answers(&store);
    std::fs::write(index.join("meta.json"), "{ not json").unwrap();
    same_answers(&store);
    for e in std::fs::read_dir(&index).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x != "json" && x != "lock") {
            std::fs::write(&p, b"garbage").unwrap();
        }
    }
    // A damaged segment may fail this search (it then scans) or the next: answers hold.
    for (text, field, f) in queries().into_iter().take(6) {
        let q = Query {
            text: &text,
            field: field.as_deref(),
        };
        assert_eq!(
            search(&store, &q, &f).unwrap().hits,
            scanned(&store, &q, &f)
        );
    }
    same_answers(&store);
}

#[test]
fn an_unreadable_ledger_is_reported_as_the_scan_reports_it() {
    let (dir, store) = workspace(20);
    std::fs::write(clar(dir.path()).join("issue-7.json"), "{ torn").unwrap();
    let q = Query {
        text: "redis",
        field: None,
    };
    let found = search(&store, &q, &Filter::default()).unwrap();
    assert_eq!(found.errors.len(), 1, "{:?}", found.errors);
    assert!(
        found.errors[0].file.contains("issue-7"),
        "{:?}",
        found.errors
    );
    assert_eq!(found.hits, scanned(&store, &q, &Filter::default()));
}

fn meta(root: &Path) -> String {
    std::fs::read_to_string(root.join(".agentx/index/search/meta.json")).unwrap()
}

fn write_through(store: &DiskStore, l: Ledger) {
    let config = agentx_clarify_core::Config::default();
    store
        .update_ledger(l.issue_number, &config, "test", |_| {
            Ok((Some(l.clone()), ()))
        })
        .unwrap();
}

#[test]
fn the_stores_own_writes_are_read_from_the_journal_not_by_listing() {
    let (dir, store) = workspace(60);
    // A full pass validates the active index's stamp: the directory is explained from here.
    read_all(&store).unwrap();
    same_answers(&store);
    let committed = meta(dir.path());
    let mut l = varied(5);
    l.clarifications[0].topic = "zebra crossing".into();
    write_through(&store, l);
    let q = Query {
        text: "zebra",
        field: None,
    };
    let hits = search(&store, &q, &Filter::default()).unwrap().hits;
    assert_eq!(
        hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["CLR-5-001"]
    );
    same_answers(&store);
    assert_eq!(
        meta(dir.path()),
        committed,
        "a journalled write made a commit"
    );
    // More journalled ledgers than a search reads itself: they are committed.
    for i in 61..=140 {
        write_through(&store, varied(i));
    }
    same_answers(&store);
    assert_ne!(meta(dir.path()), committed);
    // A write nobody journalled: the listing finds it.
    let mut l = varied(7);
    l.clarifications[1].topic = "okapi".into();
    put(dir.path(), &l);
    let q = Query {
        text: "okapi",
        field: None,
    };
    let hits = search(&store, &q, &Filter::default()).unwrap().hits;
    assert_eq!(
        hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["CLR-7-002"]
    );
    same_answers(&store);
}
