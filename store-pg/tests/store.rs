//! `PgStore` against a real PostgreSQL server: the schema and its versions, concurrent writers
//! (no lost update, no duplicate id, new issues created without a race), the index of active
//! records, and failures — connection refused, the backend killed mid-transaction, a server
//! restart (between commands and inside one), serialization failures (retried, then given
//! up), a row lock not granted in time — each a clear error with nothing half-written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Barrier;

use agentx_clarify_command::State as _;
use agentx_clarify_command::{ask, Scope, Store};
use agentx_clarify_core::{Config, Ledger, NewRequest};
use agentx_clarify_pg::PgStore;
use agentx_clarify_tests::fixtures::{engineer_asks, ledger, Kind};
use agentx_clarify_tests::pg::{fresh_database, psql, Cluster};

const NOW: i64 = 1_795_341_600_000;

/// A fresh database with the schema, and a workspace directory (default settings).
fn setup(prefix: &str) -> (String, tempfile::TempDir) {
    let url = fresh_database(prefix);
    PgStore::init_schema(&url).expect("create the schema");
    (url, workspace_dir())
}

/// A workspace directory with the default settings and workflows.
fn workspace_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    agentx_clarify_store::DiskStore::new(dir.path())
        .init()
        .expect("init");
    dir
}

fn request(issue: u64, n: usize) -> NewRequest {
    engineer_asks(
        issue,
        format!("Topic {n}"),
        format!("Question number {n} about the cache?"),
    )
}

fn ids(store: &agentx_clarify_pg::PgWorkspace, issue: u32) -> Vec<String> {
    store
        .read_ledger(issue)
        .unwrap()
        .map(|l| l.clarifications.iter().map(|r| r.id.clone()).collect())
        .unwrap_or_default()
}

/// Everything stored for the ledger of `issue`: its document row and its record rows.
fn stored(url: &str, issue: u32) -> String {
    psql(
        url,
        &format!(
            "SELECT d.rev || ' ' || coalesce(d.records::text, '-') || E'\\n' || encode(d.body, 'escape')
                || coalesce((SELECT string_agg(r.pos || ' ' || r.rev || ' ' || r.body, E'\\n' ORDER BY r.pos)
                    FROM agentx.records r WHERE r.kind = d.kind AND r.name = d.name), '')
             FROM agentx.documents d WHERE d.kind = 'clarifications' AND d.name = 'issue-{issue}.json'"
        ),
    )
}

/// `(records, rows of agentx.records, rows written by the last revision)` of issue's ledger.
fn rows(url: &str, issue: u32) -> String {
    psql(
        url,
        &format!(
            "SELECT coalesce(d.records::text, '-') || ' ' || count(r.pos) || ' '
                || count(r.pos) FILTER (WHERE r.rev = d.rev)
             FROM agentx.documents d LEFT JOIN agentx.records r ON r.kind = d.kind AND r.name = d.name
             WHERE d.kind = 'clarifications' AND d.name = 'issue-{issue}.json' GROUP BY d.records, d.rev"
        ),
    )
    .trim()
    .to_owned()
}

fn ledger_path(issue: u32) -> String {
    format!(".agentx/state/clarifications/issue-{issue}.json")
}

#[test]
fn the_schema_is_created_migrated_and_checked() {
    let url = fresh_database("schema");
    let dir = tempfile::tempdir().unwrap();
    let e = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    assert!(e.to_string().contains("agentx store init"), "{e}");
    let first = PgStore::init_schema(&url).unwrap();
    let version = agentx_clarify_pg::schema::VERSION;
    assert_eq!(
        (first.from, first.to, first.applied.len()),
        (0, version, usize::try_from(version).unwrap())
    );
    let again = PgStore::init_schema(&url).unwrap();
    assert_eq!((again.from, again.to), (version, version));
    assert!(again.applied.is_empty(), "init is idempotent");
    agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    // A database of version 1 (before routing leases) is refused until `init`
    // migrates it; its documents stay.
    psql(
        &url,
        "INSERT INTO agentx.documents (kind, name, body) VALUES ('state', 'agent-status.json', '\\x7b7d');
         DROP TABLE agentx.leases; DROP TABLE agentx.records;
         ALTER TABLE agentx.documents DROP COLUMN rev, DROP COLUMN records;
         DROP SEQUENCE agentx.revisions; DROP TABLE agentx.state_docs;
         DROP TABLE agentx.search_records;
         DELETE FROM agentx.migrations WHERE version >= 2;
         ALTER TABLE agentx.active DROP COLUMN due_ms, DROP COLUMN asked_ms,
             DROP COLUMN waits_on, DROP COLUMN cycle;
         ALTER TABLE agentx.documents ALTER COLUMN body SET COMPRESSION pglz",
    );
    let old = format!("{url}&application_name=old");
    let e = agentx_clarify_pg::open_workspace(dir.path(), &old).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("schema version 1, this agentx needs {version}")),
        "{e}"
    );
    let migrated = PgStore::init_schema(&url).unwrap();
    assert_eq!((migrated.from, migrated.to), (1, 11));
    assert_eq!(
        migrated.applied,
        [
            "2: routing leases",
            "3: lz4 compression for document bodies",
            "4: clarification ledgers as one row per record",
            "5: delegation ledgers in the index of active records",
            "6: the follow-up monitor's columns in the index of active records",
            "7: access tokens of agentx serve, documents by revision",
            "8: small state documents: the notification outbox, GitHub Mode's cursors",
            "9: access tokens as the tokens state document",
            "10: the search index of clarification records",
            "11: held escalated records in the index of active records"
        ]
    );
    // Ledger bodies are compressed with lz4 (Debian's server is built with it).
    let compression = "SELECT attcompression FROM pg_attribute
        WHERE attrelid = 'agentx.documents'::regclass AND attname = 'body'";
    assert_eq!(psql(&url, compression).trim(), "l");
    agentx_clarify_pg::open_workspace(dir.path(), &old).unwrap();
    assert_eq!(
        psql(&url, "SELECT count(*) FROM agentx.documents").trim(),
        "1"
    );
    psql(
        &url,
        "INSERT INTO agentx.migrations (version, description) VALUES (99, 'future')",
    );
    // The version is checked when a connection is opened (a pooled one was checked already).
    let e = agentx_clarify_pg::open_workspace(dir.path(), &format!("{url}&application_name=newer"))
        .unwrap_err();
    assert!(e.to_string().contains("upgrade agentx"), "{e}");
}

#[test]
fn concurrent_asks_on_one_issue_lose_nothing() {
    let (url, dir) = setup("asks");
    let (threads, each) = (8, 15);
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (url, dir, barrier) = (&url, dir.path(), &barrier);
            s.spawn(move || {
                // A store (a connection) per thread, as separate processes would have.
                let store = agentx_clarify_pg::open_workspace(dir, url).unwrap();
                barrier.wait();
                for i in 0..each {
                    ask(&store, NOW, &request(42, t * each + i)).unwrap();
                }
            });
        }
    });
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let got = ids(&store, 42);
    let want: Vec<String> = (1..=threads * each)
        .map(|n| format!("CLR-42-{n:03}"))
        .collect();
    assert_eq!(got, want, "every ask kept, ids unique and dense");
    // Stored as one row per record; its bytes are what the file store would write.
    assert_eq!(rows(&url, 42), "120 120 1");
    let l = store.read_ledger(42).unwrap().unwrap();
    let bytes = store.state.document(&ledger_path(42)).unwrap().unwrap();
    assert_eq!(String::from_utf8(bytes).unwrap(), l.to_pretty_json());
}

#[test]
fn a_ledger_is_kept_as_rows_and_writers_move_only_what_changed() {
    let (url, dir) = setup("rows");
    let a = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    for n in 0..3 {
        ask(&a, NOW, &request(6, n)).unwrap();
    }
    assert_eq!(rows(&url, 6), "3 3 1", "the last ask wrote one record row");
    // Another process (its own store, its own copy of the ledger) changes an old record:
    // the first store, which holds the ledger as it was, sees the change on its next write.
    let b = agentx_clarify_pg::open_workspace(dir.path(), &format!("{url}&application_name=b"))
        .unwrap();
    b.update_ledger(6, &Config::default(), "t", |current| {
        let mut l = current.unwrap();
        l.clarifications[0].topic = String::from("Changed by b");
        Ok((Some(l), ()))
    })
    .unwrap();
    assert_eq!(
        rows(&url, 6),
        "3 3 1",
        "b rewrote only the record it changed"
    );
    ask(&a, NOW, &request(6, 3)).unwrap();
    let seen = a
        .update_ledger(6, &Config::default(), "t", |current| {
            let l = current.unwrap();
            Ok((
                None,
                (l.clarifications[0].topic.clone(), l.clarifications.len()),
            ))
        })
        .unwrap();
    assert_eq!(seen, (String::from("Changed by b"), 4));
    // A shorter ledger drops the rows past its end.
    b.update_ledger(6, &Config::default(), "t", |current| {
        let mut l = current.unwrap();
        l.clarifications.truncate(2);
        Ok((Some(l), ()))
    })
    .unwrap();
    assert_eq!(rows(&url, 6), "2 2 0");
    assert_eq!(ids(&a, 6), ["CLR-6-001", "CLR-6-002"]);
    // Bytes written as bytes are kept whole (no record rows), and the next command's write
    // stores the ledger as rows again; every store follows.
    let whole = a.state.document(&ledger_path(6)).unwrap().unwrap();
    a.update_ledger_bytes(6, &Config::default(), "t", |_| {
        Ok((Some(whole.clone()), ()))
    })
    .unwrap();
    assert_eq!(rows(&url, 6), "- 0 0");
    assert_eq!(a.state.document(&ledger_path(6)).unwrap().unwrap(), whole);
    ask(&b, NOW, &request(6, 4)).unwrap();
    assert_eq!(rows(&url, 6), "3 3 3");
    ask(&a, NOW, &request(6, 5)).unwrap();
    assert_eq!(
        ids(&b, 6),
        ["CLR-6-001", "CLR-6-002", "CLR-6-003", "CLR-6-004"]
    );
    // A record row that went missing is a corrupt ledger, not a guess.
    psql(
        &url,
        "DELETE FROM agentx.records WHERE name = 'issue-6.json' AND pos = 1",
    );
    let fresh =
        agentx_clarify_pg::open_workspace(dir.path(), &format!("{url}&application_name=fresh"))
            .unwrap();
    let e = fresh
        .update_ledger(6, &Config::default(), "t", |l| Ok((l, ())))
        .unwrap_err();
    assert_eq!(e.code(), "LEDGER_CORRUPT", "{e}");
}

#[test]
fn a_new_issue_is_created_once_however_many_ask_first() {
    let (url, dir) = setup("create");
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (url, dir, barrier) = (&url, dir.path(), &barrier);
            s.spawn(move || {
                let store = agentx_clarify_pg::open_workspace(dir, url).unwrap();
                barrier.wait();
                ask(&store, NOW, &request(7, t)).unwrap();
            });
        }
    });
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    assert_eq!(ids(&store, 7).len(), 8);
}

#[test]
fn statuses_are_updated_under_their_row_lock() {
    let (url, dir) = setup("statuses");
    std::thread::scope(|s| {
        for t in 0..8 {
            let (url, dir) = (&url, dir.path());
            s.spawn(move || {
                let store = agentx_clarify_pg::open_workspace(dir, url).unwrap();
                for i in 0..5 {
                    agentx_clarify_command::state_set(
                        &store,
                        NOW,
                        &format!("agent-{t}-{i}"),
                        "working",
                        Some(1),
                    )
                    .unwrap();
                }
            });
        }
    });
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    assert_eq!(store.read_statuses().unwrap().len(), 40);
}

#[test]
fn the_monitor_reads_only_ledgers_with_active_records() {
    let (url, dir) = setup("index");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let mut docs = Vec::new();
    for i in 1..=40u64 {
        let kind = if [5, 17].contains(&i) {
            Kind::Stale
        } else {
            Kind::Finished
        };
        docs.push((
            format!(".agentx/state/clarifications/issue-{i}.json"),
            ledger(i, kind, NOW).to_pretty_json().into_bytes(),
        ));
    }
    docs.push((
        ".agentx/state/clarifications/issue-41.json".into(),
        b"{ not json".to_vec(),
    ));
    store.state.import_documents(&docs, false).unwrap();
    let visited = |scope: Scope<'_>| -> BTreeSet<u64> {
        store
            .scan(scope, |r| r.issue)
            .unwrap()
            .into_iter()
            .collect()
    };
    assert_eq!(visited(Scope::All).len(), 41);
    assert_eq!(visited(Scope::Monitor), BTreeSet::from([5, 17, 41]));
    assert_eq!(
        visited(Scope::FollowUp {
            written: Some(3),
            held: false,
            now: NOW,
            candidates: &[],
        }),
        BTreeSet::from([3, 5, 17, 41])
    );
    assert_eq!(
        visited(Scope::FollowUp {
            written: Some(17),
            held: true,
            now: NOW,
            candidates: &[],
        }),
        BTreeSet::from([5, 41]),
        "the one written is held by the command: not read"
    );
    // A write maintains the index in its own transaction.
    store
        .update_ledger(3, &Config::default(), "t", |_| {
            Ok((Some(ledger(3, Kind::Clean, NOW)), ()))
        })
        .unwrap();
    store
        .update_ledger(5, &Config::default(), "t", |_| {
            Ok((Some(ledger(5, Kind::Finished, NOW)), ()))
        })
        .unwrap();
    // docs/protocol.md §29: open work that is not due is not read by a follow-up until it is due (issue
    // 3's question was asked a minute ago, with an hour's SLA) — or until an agent whose
    // status may abandon it asked there before that status changed.
    use agentx_clarify_core::monitor::follow::AbandonCandidate;
    let follow = |now: i64, candidates: &[AbandonCandidate]| {
        visited(Scope::FollowUp {
            written: None,
            held: false,
            now,
            candidates,
        })
    };
    assert_eq!(follow(NOW, &[]), BTreeSet::from([17, 41]));
    assert_eq!(follow(NOW + 86_400_000, &[]), BTreeSet::from([3, 17, 41]));
    let done = |since, except| {
        vec![AbandonCandidate {
            agent: "engineer".into(),
            since,
            except,
        }]
    };
    assert_eq!(follow(NOW, &done(NOW, None)), BTreeSet::from([3, 17, 41]));
    assert_eq!(follow(NOW, &done(NOW, Some(3))), BTreeSet::from([17, 41]));
    assert_eq!(
        follow(NOW, &done(NOW - 45 * 60_000, None)),
        BTreeSet::from([17, 41]),
        "asked after the status changed"
    );
    // Two blocking records waiting on each other: on a cycle, read at any time.
    store
        .update_ledger(6, &Config::default(), "t", |_| {
            Ok((Some(ledger(6, Kind::Deadlock, NOW)), ()))
        })
        .unwrap();
    assert_eq!(follow(NOW, &[]), BTreeSet::from([6, 17, 41]));
    let edges = psql(
        &url,
        "SELECT string_agg(requester || '>' || waits_on || ':' || cycle, ' ' ORDER BY record)
         FROM agentx.active WHERE name = 'issue-6.json' AND waits_on IS NOT NULL",
    );
    assert_eq!(
        edges.trim(),
        "engineer>product-manager:true engineer>architect:true architect>engineer:true"
    );
    assert_eq!(visited(Scope::Monitor), BTreeSet::from([3, 6, 17, 41]));
    let rows = psql(&url, "SELECT string_agg(name || ':' || record || ':' || status, ',' ORDER BY name, record) FROM agentx.active WHERE name = 'issue-3.json'");
    assert_eq!(
        rows,
        "issue-3.json:CLR-3-002:answered,issue-3.json:CLR-3-003:pending"
    );
}

#[test]
fn serialization_failures_are_retried_then_given_up() {
    let (url, dir) = setup("serial");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    ask(&store, NOW, &request(9, 0)).unwrap();
    // A trigger fails the first n updates with SQLSTATE 40001; its counter is a sequence,
    // which a rolled-back attempt does not roll back.
    psql(&url, "CREATE SEQUENCE agentx_test_seq");
    psql(
        &url,
        "CREATE OR REPLACE FUNCTION agentx_test_fail() RETURNS trigger AS $$
         BEGIN
           IF nextval('agentx_test_seq') <= current_setting('agentx_test.fail')::int THEN
             RAISE EXCEPTION 'injected serialization failure' USING ERRCODE = '40001';
           END IF;
           RETURN NEW;
         END $$ LANGUAGE plpgsql;
         CREATE TRIGGER agentx_test_fail BEFORE UPDATE ON agentx.documents
           FOR EACH ROW EXECUTE FUNCTION agentx_test_fail();",
    );
    let db = psql(&url, "SELECT current_database()");
    psql(
        &url,
        &format!("ALTER DATABASE {db} SET agentx_test.fail = '3'"),
    );
    // A new connection picks the setting up.
    let store =
        agentx_clarify_pg::open_workspace(dir.path(), &format!("{url}&application_name=retry"))
            .unwrap();
    let calls = AtomicU32::new(0);
    let before = store.read_ledger(9).unwrap().unwrap();
    store
        .update_ledger(9, &Config::default(), "t", |current| {
            calls.fetch_add(1, Ordering::Relaxed);
            let mut l: Ledger = current.unwrap();
            l.clarifications.truncate(0);
            Ok((Some(l), ()))
        })
        .unwrap();
    assert_eq!(
        calls.load(Ordering::Relaxed),
        4,
        "three failures, then it went through"
    );
    assert!(store
        .read_ledger(9)
        .unwrap()
        .unwrap()
        .clarifications
        .is_empty());
    // Failures that never stop: an error that says nothing was written, and nothing was.
    psql(
        &url,
        &format!("ALTER DATABASE {db} SET agentx_test.fail = '1000000'"),
    );
    let store =
        agentx_clarify_pg::open_workspace(dir.path(), &format!("{url}&application_name=giveup"))
            .unwrap();
    let e = store
        .update_ledger(9, &Config::default(), "t", |_| {
            Ok((Some(before.clone()), ()))
        })
        .unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    assert!(e.to_string().contains("nothing was written; retry"), "{e}");
    assert!(store
        .read_ledger(9)
        .unwrap()
        .unwrap()
        .clarifications
        .is_empty());
}

#[test]
fn a_backend_killed_mid_transaction_writes_nothing() {
    let (url, dir) = setup("killed");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    ask(&store, NOW, &request(5, 0)).unwrap();
    let before = stored(&url, 5);
    let e = store
        .update_ledger(5, &Config::default(), "t", |current| {
            // Another session terminates this one while it holds the row lock.
            psql(
                &url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'agentx'",
            );
            let mut l = current.unwrap();
            l.clarifications.clear();
            Ok((Some(l), ()))
        })
        .unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    let text = e.to_string();
    assert!(text.contains("nothing was written; retry"), "{text}");
    assert_eq!(stored(&url, 5), before, "nothing half-written");
    // The same store reconnects for the next call.
    ask(&store, NOW, &request(5, 1)).unwrap();
    assert_eq!(ids(&store, 5).len(), 2);
}

#[test]
fn a_server_restart_is_a_clear_error_then_forgotten() {
    let cluster = Cluster::start();
    let url = cluster.url.clone();
    PgStore::init_schema(&url).unwrap();
    let dir = workspace_dir();
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    ask(&store, NOW, &request(3, 0)).unwrap();
    // Between two commands: the held connection is gone; the next call says so, and the one
    // after reconnects.
    cluster.restart();
    let e = ask(&store, NOW, &request(3, 1)).unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    assert!(e.to_string().contains("retry"), "{e}");
    ask(&store, NOW, &request(3, 1)).unwrap();
    // Inside a transaction: the restart kills it; nothing is written.
    let before = stored(&url, 3);
    let e = store
        .update_ledger(3, &Config::default(), "t", |current| {
            cluster.restart();
            let mut l = current.unwrap();
            l.clarifications.clear();
            Ok((Some(l), ()))
        })
        .unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    assert!(e.to_string().contains("nothing was written; retry"), "{e}");
    assert_eq!(stored(&url, 3), before);
    assert_eq!(ids(&store, 3).len(), 2);
}

#[test]
fn a_refused_connection_is_an_io_error_that_says_retry() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "postgres://agentx@/agentx?host={}&port=5432",
        dir.path().join("no-server-here").display()
    );
    let e = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    let text = e.to_string();
    assert!(text.contains("cannot connect"), "{text}");
    assert!(
        text.contains("retry when the server accepts connections"),
        "{text}"
    );
}

#[test]
fn a_row_lock_not_granted_in_time_is_a_lock_timeout() {
    let (url, dir) = setup("locked");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    ask(&store, NOW, &request(4, 0)).unwrap();
    let mut holder = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut tx = holder.transaction().unwrap();
    tx.execute(
        "SELECT 1 FROM agentx.documents WHERE name = 'issue-4.json' FOR UPDATE",
        &[],
    )
    .unwrap();
    let config = Config {
        lock_timeout_ms: 300,
        ..Config::default()
    };
    let e = store
        .update_ledger(4, &config, "t", |l| Ok((l, ())))
        .unwrap_err();
    assert_eq!(e.code(), "LOCK_TIMEOUT", "{e}");
    tx.rollback().unwrap();
    ask(&store, NOW, &request(4, 1)).unwrap();
}

#[test]
fn delegation_ledgers_that_can_time_out_are_indexed() {
    use agentx_clarify_tests::fixtures::{delegate, scanned_delegations, Delegated};
    let (url, dir) = setup("delegations");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    delegate(&store, 1, Delegated::Accepted, NOW);
    delegate(&store, 2, Delegated::Requested, NOW);
    delegate(&store, 3, Delegated::Failed, NOW);
    let indexed = "SELECT name || ' ' || record || ' ' || status || ' ' || stale_after
        FROM agentx.active WHERE kind = 'delegations' ORDER BY name, record";
    let deadline = NOW + 60 * 60_000;
    assert_eq!(
        psql(&url, indexed).trim(),
        format!("issue-1.json DLG-1-001 accepted {deadline}")
    );
    let scanned = |scope| scanned_delegations(&store, scope);
    let follow_up = Scope::FollowUp {
        written: None,
        held: false,
        now: deadline,
        candidates: &[],
    };
    assert_eq!(scanned(follow_up), [1]);
    assert_eq!(scanned(Scope::Monitor), [1]);
    assert_eq!(scanned(Scope::All), [1, 2, 3]);
    // A database migrated from schema 4 gets the rows of the ledgers it already holds.
    psql(
        &url,
        "DELETE FROM agentx.active WHERE kind = 'delegations';
         ALTER TABLE agentx.active DROP CONSTRAINT active_status_check;
         ALTER TABLE agentx.active ADD CONSTRAINT active_status_check
             CHECK (status IN ('pending', 'stale', 'answered', 'unreadable'));
         ALTER TABLE agentx.active DROP COLUMN due_ms, DROP COLUMN asked_ms,
             DROP COLUMN waits_on, DROP COLUMN cycle;
         DROP INDEX agentx.documents_rev; DROP TABLE agentx.state_docs;
         DROP TABLE agentx.search_records;
         DELETE FROM agentx.migrations WHERE version >= 5;",
    );
    let migrated = PgStore::init_schema(&url).unwrap();
    assert_eq!((migrated.from, migrated.to), (4, 11));
    // Migration 6 wrote the follow-up's column: the timeout phase after a command finds it.
    assert_eq!(
        psql(
            &url,
            "SELECT due_ms FROM agentx.active WHERE kind = 'delegations'"
        )
        .trim(),
        deadline.to_string()
    );
    assert_eq!(scanned(follow_up), [1]);
    assert_eq!(
        psql(&url, indexed).trim(),
        format!("issue-1.json DLG-1-001 accepted {deadline}")
    );
    // Past the deadline the monitor times it out, and its row goes with that write.
    let run = agentx_clarify_command::run_monitor(
        &store,
        &Config::default(),
        deadline + 1,
        false,
        follow_up,
    )
    .unwrap();
    assert!(run.report.errors.is_empty(), "{:?}", run.report.errors);
    assert_eq!(psql(&url, indexed).trim(), "");
    assert_eq!(scanned(follow_up), Vec::<u64>::new());
}

#[test]
fn a_version_8_database_gets_its_token_rows_as_the_tokens_document() {
    use agentx_clarify_command::store::docs::{self, TOKENS};
    let (url, dir) = setup("tokens");
    // Back to version 8: migration 7's table of tokens, one row per token.
    let to_v8 = |rows: &str| {
        psql(
            &url,
            &format!(
                "CREATE TABLE agentx.tokens (pos integer PRIMARY KEY CHECK (pos >= 0), body text NOT NULL);
                 {rows}
                 DROP TABLE agentx.search_records;
                 DELETE FROM agentx.migrations WHERE version >= 9;"
            ),
        )
    };
    let gone = "SELECT to_regclass('agentx.tokens') IS NULL";
    let docs_rows = "SELECT count(*) FROM agentx.state_docs WHERE name = 'tokens'";
    // No tokens: the table goes, no document is made.
    to_v8("");
    let migrated = PgStore::init_schema(&url).unwrap();
    assert_eq!((migrated.from, migrated.to), (8, 11));
    assert_eq!(
        migrated.applied,
        [
            "9: access tokens as the tokens state document",
            "10: the search index of clarification records",
            "11: held escalated records in the index of active records"
        ]
    );
    assert_eq!(psql(&url, gone).trim(), "t");
    assert_eq!(psql(&url, docs_rows).trim(), "0");
    // Two tokens, stored out of order: the document has them in `pos` order, each entry as
    // stored (keys in their order), in the text the state side writes.
    let alice = serde_json::json!({"id": "tok_a", "name": "alice", "kind": "human",
        "sha256": "ab", "created": 1});
    let bob = serde_json::json!({"id": "tok_b", "name": "bob", "kind": "agent",
        "sha256": "cd", "created": 2, "lastUsed": 3});
    to_v8(&format!(
        "INSERT INTO agentx.tokens (pos, body) VALUES (1, '{bob}'), (0, '{alice}');"
    ));
    let migrated = PgStore::init_schema(&url).unwrap();
    assert_eq!((migrated.from, migrated.to), (8, 11));
    assert_eq!(psql(&url, gone).trim(), "t");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let text = store.state.read_doc(TOKENS).unwrap().unwrap();
    let expected = serde_json::json!({"tokens": [alice, bob]});
    assert_eq!(
        text,
        format!("{}\n", serde_json::to_string_pretty(&expected).unwrap())
    );
    // Read and written back through the typed helpers: unchanged means not rewritten.
    let read: serde_json::Value = docs::read_json(&store.state, TOKENS).unwrap();
    assert_eq!(read, expected);
    docs::update_json(
        &store.state,
        TOKENS,
        &Config::default(),
        "test",
        |_: &mut serde_json::Value| (),
    )
    .unwrap();
    assert_eq!(store.state.read_doc(TOKENS).unwrap().unwrap(), text);
}

/// A document's first update that changes nothing leaves it unwritten (issue 51: the first
/// `github sync` of an issue without comments left an empty row, and every later read of the
/// document was `LEDGER_CORRUPT "github.json is corrupt"`); an empty row a release before this
/// one left behind reads as never written.
#[test]
fn an_unchanged_first_update_leaves_no_document() {
    use agentx_clarify_command::store::docs::{self, GITHUB};
    use agentx_clarify_core::github::SyncState;
    let (url, dir) = setup("emptydoc");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let rows = "SELECT count(*) FROM agentx.state_docs WHERE name = 'github'";
    docs::update_json(
        &store.state,
        GITHUB,
        &Config::default(),
        "test",
        |_: &mut SyncState| (),
    )
    .unwrap();
    assert_eq!(psql(&url, rows).trim(), "0", "nothing to lock on is kept");
    assert_eq!(store.state.read_doc(GITHUB).unwrap(), None);
    let read: SyncState = docs::read_json(&store.state, GITHUB).unwrap();
    assert_eq!(read, SyncState::default());
    // The row an earlier release left.
    psql(
        &url,
        "INSERT INTO agentx.state_docs (name, body) VALUES ('github', '')",
    );
    let read: SyncState = docs::read_json(&store.state, GITHUB).unwrap();
    assert_eq!(read, SyncState::default());
    docs::update_json(
        &store.state,
        GITHUB,
        &Config::default(),
        "test",
        |s: &mut SyncState| s.advance(7, "2026-11-22T10:00:00Z"),
    )
    .unwrap();
    let read: SyncState = docs::read_json(&store.state, GITHUB).unwrap();
    assert_eq!(
        read.cursors.get(&7).map(String::as_str),
        Some("2026-11-22T10:00:00Z")
    );
}
