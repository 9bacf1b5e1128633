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

/// Whether `record` waits on an answer (pending or stale).
fn unanswered(record: &Record) -> bool {
    matches!(record.current_status(), Status::Pending | Status::Stale)
}

/// The open question asked back from `record` of its own requester (pending or stale, oldest
/// first): while it is unanswered, `record`'s target waits on that requester (issue 49).
pub fn open_reply<'l>(ledger: &'l Ledger, record: &Record) -> Option<&'l Record> {
    ledger.clarifications.iter().find(|r| {
        asked_back_from(r) == Some(record.id.as_str()) && r.to == record.from && unanswered(r)
    })
}

/// The record `record` was asked back from, with its position, when the two are one
/// conversation (the question went back to the original's requester, not forwarded).
pub fn origin<'l>(ledger: &'l Ledger, record: &Record) -> Option<(usize, &'l Record)> {
    let id = asked_back_from(record)?;
    ledger
        .clarifications
        .iter()
        .enumerate()
        .find(|(_, r)| r.id == id && r.from == record.to && r.to == record.from)
}

/// What keeps `waiter` from getting an answer to `awaited` (issue 49: asking back must wake the
/// asker): a question of the same ledger that waits on `waiter` — the one asked back from
/// `awaited` first, else any other pending or stale question addressed to `waiter`, oldest
/// first. A question the waiter itself asked back about does not count: it is the waiter
/// who waits there (the architect waiting on its question back is not woken by the question
/// it asked back about). `None` when there is none, or `awaited` no longer waits.
pub fn waits_on_waiter<'l>(
    ledger: &'l Ledger,
    awaited: &Record,
    waiter: &str,
) -> Option<&'l Record> {
    if !unanswered(awaited) && awaited.current_status() != Status::Escalated {
        return None;
    }
    let addressed = |r: &&Record| {
        r.id != awaited.id && r.to == waiter && unanswered(r) && open_reply(ledger, r).is_none()
    };
    let mut open = ledger.clarifications.iter().filter(addressed);
    let first = open.clone().next();
    open.find(|r| asked_back_from(r) == Some(awaited.id.as_str()))
        .or(first)
}
