//! The index of delegation ledgers (docs/protocol.md §19, like the clarifications' in `index.rs`): the
//! monitor's timeout phase after a command reads only the delegation ledgers with an accepted
//! delegation that can time out (and those it cannot read); a ledger written behind the
//! store's back is noticed; the full monitor reads them all and times out what is due.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::time::Duration;

use agentx_clarify_command::{run_monitor, Scope};
use agentx_clarify_core::Config;
use agentx_clarify_store::DiskStore;
use agentx_clarify_tests::fixtures::{delegate, scanned_delegations, Delegated};

const NOW: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;

fn visited(store: &DiskStore, scope: Scope) -> BTreeSet<u64> {
    scanned_delegations(store, scope).into_iter().collect()
}

fn follow_up(store: &DiskStore) -> BTreeSet<u64> {
    visited(
        store,
        Scope::FollowUp {
            written: None,
            held: false,
            now: NOW + 61 * MIN,
            candidates: &[],
        },
    )
}

fn set(items: &[u64]) -> BTreeSet<u64> {
    items.iter().copied().collect()
}

#[test]
fn the_timeout_phase_reads_only_delegations_that_can_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = DiskStore::new(dir.path());
    for issue in 1..=12 {
        delegate(&store, issue, Delegated::Failed, NOW);
    }
    delegate(&store, 3, Delegated::Accepted, NOW);
    delegate(&store, 5, Delegated::Requested, NOW);
    delegate(&store, 8, Delegated::Accepted, NOW);
    // The first pass after writers who kept the index may trust it or rebuild it; either way
    // it reads at least what can time out, and then exactly that.
    assert!(follow_up(&store).is_superset(&set(&[3, 8])));
    assert_eq!(follow_up(&store), set(&[3, 8]));
    let marker = dir
        .path()
        .join(".agentx/index/delegations/active/issue-3.json");
    assert!(marker.is_file(), "{} missing", marker.display());
    // A full pass still reads every delegation ledger.
    assert_eq!(visited(&store, Scope::All).len(), 12);
    assert_eq!(visited(&store, Scope::Monitor).len(), 12);

    // Finished through the store (issue 3's second delegation fails): its marker goes with
    // the write.
    let id = "DLG-3-002";
    agentx_clarify_command::delegate::act(
        &store,
        NOW,
        id,
        &agentx_clarify_core::delegation::Action::fail("tester", None),
    )
    .unwrap();
    assert_eq!(follow_up(&store), set(&[8]));

    // Written behind the store's back (a text editor, `git checkout`): an accepted ledger
    // copied in and a corrupt one are noticed by the next pass, which reads everything.
    std::thread::sleep(Duration::from_millis(30));
    let deleg = dir.path().join(".agentx/state/delegations");
    std::fs::copy(deleg.join("issue-8.json"), deleg.join("issue-40.json")).unwrap();
    let copied = std::fs::read_to_string(deleg.join("issue-40.json"))
        .unwrap()
        .replace("DLG-8-", "DLG-40-")
        .replace("\"issueNumber\": 8", "\"issueNumber\": 40");
    std::fs::write(deleg.join("issue-40.json"), copied).unwrap();
    std::fs::write(deleg.join("issue-41.json"), "{ not json").unwrap();
    let first = follow_up(&store);
    assert!(first.is_superset(&set(&[8, 40, 41])), "{first:?}");
    assert_eq!(follow_up(&store), set(&[8, 40, 41]));

    // The monitor an hour later times out what was accepted, through the index.
    let config = Config::default();
    let run = run_monitor(
        &store,
        &config,
        NOW + 61 * MIN,
        false,
        Scope::FollowUp {
            written: None,
            held: false,
            now: NOW + 61 * MIN,
            candidates: &[],
        },
    )
    .unwrap();
    assert_eq!(run.report.errors.len(), 1, "{:?}", run.report.errors);
    assert_eq!(
        follow_up(&store),
        set(&[41]),
        "only the unreadable one stays"
    );
}
