//! The monitor that follows a command reads only what is due or touched (docs/protocol.md §29), and the
//! follow-up passes, taken together, find exactly what full monitor passes find at the same
//! instants: two file workspaces run the same commands at the same instants — one with its
//! index (each follow-up reads the ledgers written, due, on a cycle, or asked by an agent
//! whose status may abandon them), one whose index is deleted before every command (each
//! follow-up then reads every ledger: a full pass) — and every command's output (its
//! follow-up's report and events included: stale, retried, escalated, stuck, deadlocks,
//! abandoned, timed out) and every ledger and status file afterwards are identical.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod follow_up_steps;

use agentx_clarify_command::json::call;
use agentx_clarify_command::query::next_wakeup;
use agentx_clarify_command::store::ledgers::{Clarifications, DueTimes, Ledgers};
use agentx_clarify_command::{run_monitor, Scope};
use agentx_clarify_core::Config;
use agentx_clarify_store::DiskStore;
use follow_up_steps::*;
use proptest::prelude::*;

/// Runs `steps` (each `(minutes later, step)`) on both workspaces and holds them equal.
fn run_both(steps: &[(i64, Step)]) -> Found {
    let (indexed, full) = (workspace(), workspace());
    let (a, b) = (DiskStore::new(indexed.path()), DiskStore::new(full.path()));
    let mut now = T0;
    let mut found = Found::default();
    for (n, (later, step)) in steps.iter().enumerate() {
        now += later * MIN;
        let (op, input) = command(step);
        // The full side's follow-up has no index to trust: it reads every ledger.
        let _ = std::fs::remove_dir_all(full.path().join(".agentx/index"));
        let one = call(&a, op, &input, now);
        let two = call(&b, op, &input, now);
        assert_eq!(one, two, "step {n} {step:?} at +{} min", (now - T0) / MIN);
        found.add(&one);
        assert_eq!(
            state(indexed.path()),
            state(full.path()),
            "after step {n} {step:?}"
        );
        // The next wake-up from the index of due times is the one every ledger gives.
        assert_eq!(
            next_wakeup(&a, now).unwrap(),
            wakeup_by_reading_everything(&b, now),
            "the next wake-up after step {n} {step:?}"
        );
    }
    // Once a ledger was written the index exists and is trusted (a run whose every command
    // was refused wrote none, and then there is no index to plan from).
    let wrote = indexed
        .path()
        .join(agentx_clarify_command::paths::CLARIFICATIONS_DIR)
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some());
    assert!(
        !wrote
            || matches!(
                Ledgers::<Clarifications>::due_times(&a).unwrap(),
                DueTimes::Indexed { .. }
            ),
        "the indexed side plans from its index"
    );
    // And nothing is left that a full monitor at the last instant would find.
    let _ = std::fs::remove_dir_all(full.path().join(".agentx/index"));
    let config = Config::default();
    let one = run_monitor(&a, &config, now, true, Scope::Monitor).unwrap();
    let two = run_monitor(&b, &config, now, true, Scope::Monitor).unwrap();
    assert_eq!(one.report, two.report);
    found
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random workspaces grown by random commands at random instants (0 to 25 minutes apart,
    /// so SLAs of 10 minutes and deadlines of 15 pass between some of them).
    #[test]
    fn the_follow_ups_find_exactly_what_full_passes_find(
        steps in proptest::collection::vec((0i64..=25, step()), 1..40)
    ) {
        run_both(&steps);
    }
}

/// One run that gives every phase work, so the comparison above is not between two idle
/// monitors.
#[test]
fn every_phase_finds_work_in_a_known_run() {
    let found = run_both(&known_run());
    for kind in KINDS {
        assert!(
            found.counts.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in {:?}",
            found.counts
        );
    }
}
