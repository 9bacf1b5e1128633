//! The clarification state machine (docs/protocol.md §4).
//!
//! ```text
//!               request                 answer                  resolve (requester)
//!    (none) ───────────▶ pending ─────────────▶ answered ─────────────────────▶ resolved
//!                         │  ▲ ◀──── follow-up ────┘ │                            ▲
//!           SLA expired   │  │ retry (retries < max) │ follow-up at max rounds    │
//!                         ▼  │                       ▼                            │
//!                         stale ── expiry with no retry left ──▶ escalated ── resolve (human)
//!                         stale ── answer ──▶ answered
//!    pending/stale/answered ── abandon ──▶ abandoned        (resolved, abandoned are terminal)
//!    pending/stale/answered ── escalate (manual, stuck, deadlock) ──▶ escalated
//! ```
//!
//! Every operation is a pure function of (ledger, input, policy, now) returning the new
//! ledger and its events, or a typed refusal. Nothing is written on refusal, except the
//! max-rounds escalation, which is returned *with* `MAX_ROUNDS_EXCEEDED`.

mod act;
mod asked_back;
mod reopen;
mod request;
mod transition;

pub use act::{
    act, act_by, act_noted, act_with, decide, decide_abandon, Action, Attribution, Verdict,
    Written, OPERATOR_OF,
};
pub use asked_back::asked_back_id;
pub use reopen::reopen;
pub(crate) use request::{decide_escalated, decide_request, open, request_forwarding};
pub use request::{
    request, request_escalated, request_owned, NewRequest, MAX_BLOCKED_OPERATIONS, MAX_GAP_ID,
};
pub use transition::{allowed_ops, who_may, Op, Who};

use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::Ledger;
use crate::time::MAX_EPOCH_MS;

/// The result of an operation that wrote something.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The ledger to write (sealed: snapshots equal folds).
    pub ledger: Ledger,
    /// The record the operation concerned.
    pub id: String,
    /// What happened, in order.
    pub events: Vec<Event>,
    /// True for an idempotent replay: nothing changed.
    pub idempotent: bool,
    /// True when a re-ask was answered from the record that already holds the question
    /// (docs/protocol.md §22): no entry was written; the ledger carries the re-ask's trace only.
    pub reused: bool,
    /// Set when the write is itself the answer to a refusal (`MAX_ROUNDS_EXCEEDED`): the
    /// caller writes the ledger and still reports the error.
    pub error: Option<ClarifyError>,
}

/// The record an operation acts on, after its input checks (§4's `NOT_FOUND`): a copy of
/// `ledger` to change and the index of record `id` (parsed as `parsed`) in it.
pub(crate) fn located(
    ledger: &Ledger,
    parsed: &crate::names::ClarificationId,
    id: &str,
) -> Result<(Ledger, usize), ClarifyError> {
    let index = (parsed.issue == ledger.issue_number)
        .then(|| ledger.position(id))
        .flatten()
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    Ok((ledger.clone(), index))
}

/// `INVALID_TRANSITION` unless `record` is escalated: what `reopen` and a person's claim,
/// handoff and approval need.
pub(crate) fn only_escalated(record: &crate::ledger::Record, op: &str) -> Result<(), ClarifyError> {
    let status = record.current_status();
    if status == crate::ledger::Status::Escalated {
        return Ok(());
    }
    Err(ClarifyError::InvalidTransition {
        op: op.to_owned(),
        id: record.id.clone(),
        status: status.as_str().to_owned(),
        allowed: allowed_ops(status, record.is_legacy_empty()),
    })
}

/// `now` must be a time the ledger format can hold.
pub fn check_now(now: i64) -> Result<(), ClarifyError> {
    if (0..=MAX_EPOCH_MS).contains(&now) {
        Ok(())
    } else {
        Err(ClarifyError::input(format!(
            "now {now} is out of range: expected epoch milliseconds from 0 to {MAX_EPOCH_MS}"
        )))
    }
}
