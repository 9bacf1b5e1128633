//! What routing, signals and delegation need of `PgStore`, against a real PostgreSQL server:
//! routing leases as rows (one holder at a time, across stores and machines; a dead local
//! holder or an expired lease is taken over), both ledgers of an issue written in one
//! transaction (a failure writes neither), and a decision that reads the store while its
//! update holds a row lock (a connection of its own, never a wait on itself).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentx_clarify_command::LeaseTake;
use agentx_clarify_command::State;
use agentx_clarify_command::Store;
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::Config;
use agentx_clarify_pg::PgStore;
use agentx_clarify_tests::fixtures::{ledger, Kind};
use agentx_clarify_tests::pg::{fresh_database, psql};

const NOW: i64 = 1_795_341_600_000;
const ID: &str = "CLR-42-001";

fn setup(prefix: &str) -> (String, tempfile::TempDir) {
    let url = fresh_database(prefix);
    PgStore::init_schema(&url).expect("create the schema");
    let dir = tempfile::tempdir().expect("tempdir");
    agentx_clarify_store::DiskStore::new(dir.path())
        .init()
        .expect("init");
    (url, dir)
}

fn holder(take: LeaseTake<agentx_clarify_pg::PgLease>) -> String {
    match take {
        LeaseTake::Held { holder } => holder,
        LeaseTake::Taken(lease) => panic!("taken: {lease:?}"),
    }
}

#[test]
fn a_lease_has_one_holder_until_released_or_expired() {
    let (url, dir) = setup("lease");
    let (a, b) = (
        agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap(),
        agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap(),
    );
    let LeaseTake::Taken(lease) = a.take_lease(ID, 60_000).unwrap() else {
        panic!("the first router takes the lease");
    };
    let held = holder(b.take_lease(ID, 60_000).unwrap());
    let host = agentx_clarify_store::this_host();
    assert!(
        held.starts_with(&format!("pid {} on {host} until ", std::process::id())),
        "{held}"
    );
    assert!(b.lease_held(ID) && !b.lease_held("CLR-42-002"));
    a.release_lease(lease);
    assert!(!b.lease_held(ID));
    let LeaseTake::Taken(second) = b.take_lease(ID, 60_000).unwrap() else {
        panic!("released: the next router takes it");
    };
    // A release by a router whose lease was taken over leaves the new holder's alone.
    psql(&url, "UPDATE agentx.leases SET expires_ms = 1");
    let LeaseTake::Taken(third) = a.take_lease(ID, 60_000).unwrap() else {
        panic!("expired by the server's clock: taken over");
    };
    b.release_lease(second);
    assert!(a.lease_held(ID), "the taken-over lease is still held");
    a.release_lease(third);
    assert_eq!(psql(&url, "SELECT count(*) FROM agentx.leases").trim(), "0");
    assert_eq!(a.take_lease("CLR-x", 1).unwrap_err().code(), "INVALID_ID");
}

#[test]
fn a_dead_local_holder_is_broken_a_remote_one_is_trusted() {
    let (url, dir) = setup("lease_dead");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let host = agentx_clarify_store::this_host();
    let live_until = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 600000";
    // pid 0x7fffffff does not exist on this host: its lease is broken at once.
    psql(
        &url,
        &format!(
            "INSERT INTO agentx.leases VALUES ('{ID}', 'dead', 2147483647, '{host}', 0, {live_until})"
        ),
    );
    assert!(!store.lease_held(ID));
    assert!(matches!(
        store.take_lease(ID, 60_000).unwrap(),
        LeaseTake::Taken(_)
    ));
    // The same pid on another machine cannot be judged from here: held until it expires.
    psql(
        &url,
        &format!(
            "DELETE FROM agentx.leases; INSERT INTO agentx.leases VALUES ('{ID}', 'remote', 2147483647, 'elsewhere', 0, {live_until})"
        ),
    );
    assert!(store.lease_held(ID));
    assert!(
        holder(store.take_lease(ID, 60_000).unwrap()).starts_with("pid 2147483647 on elsewhere")
    );
}

#[test]
fn both_ledgers_of_an_issue_commit_together_or_not_at_all() {
    let (url, dir) = setup("issue_tx");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let config = Config::default();
    // The delegation ledger's insert fails inside the transaction (as a full disk would).
    psql(
        &url,
        "CREATE FUNCTION agentx.refuse() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
         CREATE TRIGGER refuse BEFORE INSERT ON agentx.documents FOR EACH ROW
           WHEN (NEW.kind = 'delegations') EXECUTE FUNCTION agentx.refuse();",
    );
    let write_both = |_: Option<&_>, _: Option<&_>| {
        Ok((
            Some(ledger(42, Kind::Clean, NOW)),
            Some(DelegationLedger::new(42)),
            (),
        ))
    };
    let e = store
        .update_issue(42, &config, "t", write_both)
        .unwrap_err();
    assert_eq!(e.code(), "IO_ERROR");
    assert!(e.to_string().contains("nothing was written"), "{e}");
    assert_eq!(
        store.read_ledger(42).unwrap(),
        None,
        "neither ledger written"
    );
    assert_eq!(store.read_delegations(42).unwrap(), None);
    psql(&url, "DROP TRIGGER refuse ON agentx.documents");
    store.update_issue(42, &config, "t", write_both).unwrap();
    assert!(store.read_ledger(42).unwrap().is_some());
    assert_eq!(
        store.read_delegations(42).unwrap(),
        Some(DelegationLedger::new(42))
    );
    let scanned = store
        .scan_delegations(agentx_clarify_command::Scope::All)
        .unwrap();
    assert_eq!(scanned.len(), 1);
    assert_eq!(scanned[0].file, "delegations/issue-42.json");
}

#[test]
fn a_decision_may_read_the_store_while_its_row_is_locked() {
    let (url, dir) = setup("reentrant");
    let store = agentx_clarify_pg::open_workspace(dir.path(), &url).unwrap();
    let config = Config::default();
    store
        .update_ledger(7, &config, "t", |_| {
            Ok((Some(ledger(7, Kind::Clean, NOW)), ()))
        })
        .unwrap();
    let seen = store
        .update_ledger(8, &config, "t", |_| {
            // The migrate and ingest flows read other documents from inside a decision.
            let other = store.read_ledger(7)?.map(|l| l.clarifications.len());
            let delegations = store.read_delegations(8)?;
            Ok((Some(ledger(8, Kind::Clean, NOW)), (other, delegations)))
        })
        .unwrap();
    assert_eq!(seen, (Some(3), None));
}
