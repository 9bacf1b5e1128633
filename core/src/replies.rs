//! Questions a routed agent asked back (docs/protocol.md §14.2 step 6): the new record names the one it
//! came from in `askedBack`. The pair runs in opposite directions by design, so the monitor
//! must not take it for a deadlock (§7.3) or a direction flip (§7.2): while the reply is
//! open, the original's requester waits on the reply's target, not on the agent that asked
//! back (docs/decisions.md, "Routing").
//!
//! Low in the crate (it reads only the ledger) so that the monitor, the operations and the input
//! reader use the link without reaching up into `routing`, which re-exports it.

use serde_json::Value;

use crate::ledger::{Ledger, Record, Status};

/// The record field naming the record a question was asked back from.
pub const ASKED_BACK: &str = "askedBack";

/// The id `record` was asked back from, if it was.
pub fn asked_back_from(record: &Record) -> Option<&str> {
    record.extra.get(ASKED_BACK).and_then(Value::as_str)
}

/// Ids of the records of `ledger` whose question was asked back and whose reply is still
/// unanswered (pending or stale): they wait on that reply. A list, in ledger order: callers
/// only ask whether an id is in it, and a ledger holds few such replies (a `BTreeSet` here
/// cost the wasm package its own set and sort code).
pub fn awaiting_reply(ledger: &Ledger) -> Vec<&str> {
    ledger
        .clarifications
        .iter()
        .filter(|r| matches!(r.current_status(), Status::Pending | Status::Stale))
        .filter_map(asked_back_from)
        .collect()
}

/// Whether one of `a`, `b` was asked back from the other.
pub fn linked(a: &Record, b: &Record) -> bool {
    asked_back_from(a) == Some(b.id.as_str()) || asked_back_from(b) == Some(a.id.as_str())
}

/// The questions asked back from `id` (any status), in ledger order: their answers belong in
/// the prompt when `id` is routed again.
pub fn replies<'l>(ledger: &'l Ledger, id: &str) -> Vec<&'l Record> {
    ledger
        .clarifications
        .iter()
        .filter(|r| asked_back_from(r) == Some(id))
        .collect()
}
