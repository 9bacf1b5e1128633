//! Ledgers of both kinds through one generic interface (docs/protocol.md §21): one check,
//! written once over `Ledgers<K>`, runs for clarification and delegation ledgers on every
//! state store — memory, the workspace directory, PostgreSQL (a real server) and the picker
//! over each — and must see the same behaviour: nothing before the first write, the ledger
//! written read back, its bytes as every store prints them, a pass naming it as reports do,
//! and bytes that do not parse reported and never overwritten by an update.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Debug;

use agentx_clarify_command::store::ledgers::{Clarifications, Delegations, LedgerKind, Ledgers};
use agentx_clarify_command::{ask, MemStore, Scope, State, Store};
use agentx_clarify_core::{Config, NewRequest};
use agentx_clarify_store_any::{open_at, DiskStore, Location, PgStore};
use agentx_clarify_tests::fixtures::{delegate, Delegated};
use agentx_clarify_tests::pg::fresh_database;

const NOW: i64 = 1_795_341_600_000;
const ISSUE: u32 = 9;

/// One ledger of each kind as the command layer writes them (issue `ISSUE`).
fn samples() -> (
    <Clarifications as LedgerKind>::Ledger,
    <Delegations as LedgerKind>::Ledger,
) {
    let mem = MemStore::new();
    mem.init().unwrap();
    let request = NewRequest {
        issue_number: u64::from(ISSUE),
        from: "engineer".into(),
        to: "architect".into(),
        topic: "Cache".into(),
        question: "Which cache do we use?".into(),
        ..NewRequest::default()
    };
    ask(&mem, NOW, &request).unwrap();
    delegate(&mem, u64::from(ISSUE), Delegated::Accepted, NOW);
    (
        mem.read_ledger(ISSUE).unwrap().unwrap(),
        mem.read_delegations(ISSUE).unwrap().unwrap(),
    )
}

/// The whole interface, for kind `K` on `store`, with `sample` as the ledger to write.
fn one_interface<K, S>(store: &S, sample: &K::Ledger)
where
    K: LedgerKind,
    K::Ledger: PartialEq + Debug,
    S: Ledgers<K>,
{
    let config = Config::default();
    let kind = K::NAME;
    assert_eq!(store.read(ISSUE).unwrap(), None, "{kind}: nothing yet");
    assert!(!store.has(ISSUE).unwrap(), "{kind}: has nothing yet");

    let made = store
        .update(ISSUE, &config, "t", |current| {
            assert_eq!(current, None, "{kind}: the update sees no ledger");
            Ok((Some(sample.clone()), "made"))
        })
        .unwrap();
    assert_eq!(made, "made");
    assert_eq!(store.read(ISSUE).unwrap().as_ref(), Some(sample), "{kind}");
    assert!(store.has(ISSUE).unwrap(), "{kind}: has it now");

    // The bytes as stored are the pretty JSON every store prints.
    store
        .update_bytes(ISSUE, &config, "t", |bytes| {
            assert_eq!(bytes, Some(K::print(sample).as_bytes()), "{kind}: bytes");
            Ok((None, ()))
        })
        .unwrap();

    let seen = store
        .scan_ledgers(Scope::All, |read| {
            (read.issue, read.file, read.ledger.map_err(|e| e.code))
        })
        .unwrap();
    assert_eq!(
        seen,
        vec![(
            u64::from(ISSUE),
            K::file(u64::from(ISSUE)),
            Ok(sample.clone())
        )],
        "{kind}: the pass"
    );

    // Bytes that do not parse: read and pass report them, an update refuses and leaves them.
    store
        .update_bytes(ISSUE, &config, "t", |_| {
            Ok((Some(b"{not json".to_vec()), ()))
        })
        .unwrap();
    let read = store.read(ISSUE).unwrap_err();
    assert_eq!(read.code(), "LEDGER_CORRUPT", "{kind}: {read}");
    let refused = store
        .update(
            ISSUE,
            &config,
            "t",
            |_| -> Result<(Option<K::Ledger>, ()), _> {
                panic!("{kind}: decided on a ledger that does not parse")
            },
        )
        .unwrap_err();
    assert_eq!(refused.code(), "LEDGER_CORRUPT", "{kind}: {refused}");
    store
        .update_bytes(ISSUE, &config, "t", |bytes| {
            assert_eq!(bytes, Some(&b"{not json"[..]), "{kind}: left as it was");
            Ok((None, ()))
        })
        .unwrap();
    let seen = store
        .scan_ledgers(Scope::All, |read| {
            (read.file, read.ledger.map_err(|e| e.code))
        })
        .unwrap();
    assert_eq!(seen.len(), 1, "{kind}");
    assert_eq!(
        seen[0].0,
        K::file(u64::from(ISSUE)),
        "{kind}: named as reports do"
    );
    assert_eq!(seen[0].1, Err(String::from("LEDGER_CORRUPT")), "{kind}");
}

/// Both kinds on one store (each kind's ledgers are apart: the clarification ledger written
/// first stays as it is while the delegation ledger of the same issue is written).
fn both_kinds<S: State>(store: &S) {
    let (clarifications, delegations) = samples();
    one_interface::<Clarifications, S>(store, &clarifications);
    one_interface::<Delegations, S>(store, &delegations);
}

#[test]
fn memory_keeps_both_kinds_through_one_interface() {
    both_kinds(&MemStore::new());
}

#[test]
fn the_workspace_directory_keeps_both_kinds_through_one_interface() {
    let dir = tempfile::tempdir().unwrap();
    let store = DiskStore::new(dir.path());
    Store::init(&store).unwrap();
    both_kinds(&store);
    // Through the picker too.
    let dir = tempfile::tempdir().unwrap();
    Store::init(&DiskStore::new(dir.path())).unwrap();
    both_kinds(&open_at(dir.path(), Location::Files).unwrap().state);
}

#[test]
fn postgresql_keeps_both_kinds_through_one_interface() {
    let url = fresh_database("ledgers_generic");
    PgStore::init_schema(&url).unwrap();
    both_kinds(&PgStore::open(&url).unwrap());
    // Through the picker too, on another database.
    let url = fresh_database("ledgers_generic_any");
    PgStore::init_schema(&url).unwrap();
    let dir = tempfile::tempdir().unwrap();
    both_kinds(&open_at(dir.path(), Location::Postgres(url)).unwrap().state);
}
