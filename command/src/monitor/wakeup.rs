//! The monitor's next wake-up over a store (the `poll_timeout` of sans-IO libraries): the
//! earliest instant at which the passing of time alone makes the monitor act — a pending
//! record's SLA running out, a record found stale (now), an accepted delegation's deadline.
//! A long-running worker asks after every change, so the answer comes from the store's index
//! of due times (`Ledgers::due_times`, the keys the follow-up monitor reads, docs/protocol.md
//! §29) and costs the same whatever the open and finished work; only a store without a
//! trusted index is answered by reading every ledger, as before.

use agentx_clarify_core::ClarifyError;

use crate::store::ledgers::{Clarifications, Delegations, DueTimes, Ledgers};
use crate::store::Store;

/// The next instant, not before `now`, at which time alone makes the monitor act on the
/// store's ledgers of either kind (`None`: only a change can); a ledger that could not be read
/// never falls due by time (the monitor reports it when it runs).
pub fn next_wakeup<S: Store>(store: &S, now: i64) -> Result<Option<i64>, ClarifyError> {
    let clarifications = match Ledgers::<Clarifications>::due_times(store)? {
        DueTimes::Unknown => {
            let (ledgers, _) = crate::query::read_all(store)?;
            agentx_clarify_core::monitor::next_wakeup(&ledgers, now)
        }
        DueTimes::Indexed { earliest, at_once } => {
            // Keyed at once: a stale record (now) or a ledger that could not be read
            // (never); read those few to tell which.
            let held: Vec<_> = at_once
                .into_iter()
                .filter_map(|issue| store.read_ledger(issue).ok().flatten())
                .collect();
            let at_once = agentx_clarify_core::monitor::next_wakeup(&held, now);
            earliest
                .map(|t| t.max(now))
                .into_iter()
                .chain(at_once)
                .min()
        }
    };
    let delegations = match Ledgers::<Delegations>::due_times(store)? {
        DueTimes::Unknown => crate::delegate::next_wakeup(store)?,
        DueTimes::Indexed { earliest, at_once } => at_once
            .into_iter()
            .filter_map(|issue| store.read_delegations(issue).ok().flatten())
            .filter_map(|l| agentx_clarify_core::delegation::next_wakeup(&l))
            .chain(earliest)
            .min(),
    };
    // A deadline already passed is due now, as a record found stale is.
    Ok(clarifications
        .into_iter()
        .chain(delegations.map(|t| t.max(now)))
        .min())
}
