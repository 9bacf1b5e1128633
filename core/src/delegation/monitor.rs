//! The monitor's delegation phase: an accepted delegation past its deadline times out.

use super::ops::{entry, Event};
use super::{DelegationLedger, Status};
use crate::names::MONITOR;
use crate::ops::check_now;

/// What [`timeouts`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedOut {
    /// The ledger to write (sealed).
    pub ledger: DelegationLedger,
    /// The delegations that timed out, in ledger order.
    pub ids: Vec<String>,
    pub events: Vec<Event>,
}

/// Every `ACCEPTED` delegation whose deadline (accepted + `timeoutMinutes`) is at or before
/// `now` gets a `TIMEOUT` entry by `monitor`. `None` when nothing is due (or `now` is out of
/// range): nothing to write.
pub fn timeouts(ledger: &DelegationLedger, now: i64) -> Option<TimedOut> {
    check_now(now).ok()?;
    let due = |d: &super::Delegation| d.times_out_at().is_some_and(|t| t <= now);
    if !ledger.delegations.iter().any(due) {
        return None;
    }
    let mut out = ledger.clone();
    let issue = out.issue_number;
    let (mut ids, mut events) = (Vec::new(), Vec::new());
    for d in out.delegations.iter_mut().filter(|d| due(d)) {
        let f = d.fold();
        let body = format!(
            "deadline {} passed: accepted at {}, timeout {} minutes",
            f.deadline.as_ref().map_or("", |t| t.as_str()),
            f.accepted_at.as_ref().map_or("", |t| t.as_str()),
            d.timeout_minutes
        );
        let at = d.append(entry(Status::Timeout, MONITOR, &body), now);
        events.push(Event::for_entry(
            issue,
            d,
            Status::Timeout,
            MONITOR,
            &body,
            at,
        ));
        ids.push(d.id.clone());
    }
    out.seal();
    Some(TimedOut {
        ledger: out,
        ids,
        events,
    })
}

/// The earliest instant (epoch ms) at which [`timeouts`] would act on this ledger.
pub fn next_wakeup(ledger: &DelegationLedger) -> Option<i64> {
    ledger
        .delegations
        .iter()
        .filter_map(super::Delegation::times_out_at)
        .min()
}
