//! The follow-up's indexed queries (docs/protocol.md §29) against full passes: a PostgreSQL store, whose
//! follow-ups read only the rows due, on a cycle, or asked by an agent whose status may
//! abandon them, and a file workspace whose index is deleted before every command (each of its
//! follow-ups reads every ledger) run the same commands at the same instants; every command's
//! output (its follow-up's report and events included) and the ledgers and statuses at the end
//! are identical. Needs `AGENTX_TEST_PG_URL` (scripts/pg-cluster), as the other tests here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../store/tests/follow_up_steps/mod.rs"]
mod follow_up_steps;

use agentx_clarify_command::json::call;
use agentx_clarify_command::query::next_wakeup;
use agentx_clarify_pg::PgStore;
use agentx_clarify_store::DiskStore;
use agentx_clarify_tests::pg::fresh_database;
use follow_up_steps::*;
use proptest::prelude::*;
use serde_json::{json, Value};

/// What both stores hold at the end: every ledger as listed, and the statuses.
fn holdings<S: agentx_clarify_command::Store>(store: &S, now: i64) -> (Value, Value) {
    (
        call(store, "list", &json!({"all": true}), now),
        call(store, "state", &json!({}), now),
    )
}

fn run_pg(steps: &[(i64, Step)]) -> Found {
    let (indexed, full) = (workspace(), workspace());
    let url = fresh_database("follow");
    PgStore::init_schema(&url).expect("create the schema");
    let a = agentx_clarify_pg::open_workspace(indexed.path(), &url).expect("open");
    let b = DiskStore::new(full.path());
    let mut now = T0;
    let mut found = Found::default();
    for (n, (later, step)) in steps.iter().enumerate() {
        now += later * MIN;
        let (op, input) = command(step);
        let _ = std::fs::remove_dir_all(full.path().join(".agentx/index"));
        let one = call(&a, op, &input, now);
        let two = call(&b, op, &input, now);
        assert_eq!(one, two, "step {n} {step:?} at +{} min", (now - T0) / MIN);
        found.add(&one);
        // The next wake-up from `agentx.active` is the one every ledger gives.
        assert_eq!(
            next_wakeup(&a, now).unwrap(),
            wakeup_by_reading_everything(&b, now),
            "the next wake-up after step {n} {step:?}"
        );
    }
    assert_eq!(holdings(&a, now), holdings(&b, now));
    found
}

#[test]
fn every_phase_finds_work_in_a_known_run_in_postgresql() {
    let found = run_pg(&known_run());
    for kind in KINDS {
        assert!(
            found.counts.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in {:?}",
            found.counts
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn the_indexed_queries_find_exactly_what_full_passes_find(
        steps in proptest::collection::vec((0i64..=25, step()), 1..30)
    ) {
        run_pg(&steps);
    }
}
