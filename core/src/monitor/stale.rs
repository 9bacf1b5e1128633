//! Phase 1: a pending record past its SLA goes stale, then is retried while retries remain,
//! else escalated. A record found already stale gets the retry-or-escalate step. A legacy
//! record without a question is escalated instead, never retried.

use super::Pass;
use crate::ledger::{EntryKind, Record, Status};
use crate::replies;

/// The first instant at which this phase acts on `record` by the passing of time alone:
/// just past the SLA of a pending record, at once for one found stale, never for the others.
/// The stale phase and the next wake-up ([`super::next_wakeup`]) both ask this.
pub fn due_at(record: &Record) -> Option<i64> {
    match record.current_status() {
        Status::Escalated => crate::people::lapse_due(record),
        _ => sla_due(record),
    }
}

/// When a pending record's SLA runs out (a stale one: at once); `None` for other statuses.
fn sla_due(record: &Record) -> Option<i64> {
    match record.current_status() {
        Status::Pending => record.stale_after_ms().map(|t| t.saturating_add(1)),
        Status::Stale => Some(i64::MIN),
        _ => None,
    }
}

/// The escalation reason of a legacy record that never got its question.
const LEGACY_WITHOUT_QUESTION: &str = "legacy record without a question";

pub(super) fn run(pass: &mut Pass<'_>) {
    for index in 0..pass.ledger.clarifications.len() {
        let Some(record) = pass.ledger.clarifications.get(index) else {
            continue;
        };
        let due = sla_due(record).is_some_and(|t| pass.now >= t);
        if record.is_legacy_empty() {
            // AgentX's router crashed between creating the record (round 0) and writing its
            // question. A retry would re-route nothing and an answer would answer nothing: a
            // human decides (docs/protocol.md §20). Stored `stale` was already past its SLA.
            if due {
                pass.escalate(index, LEGACY_WITHOUT_QUESTION);
            }
            continue;
        }
        match record.current_status() {
            Status::Pending if due => {
                mark_stale(pass, index);
                retry_or_escalate(pass, index);
            }
            Status::Stale => {
                // A legacy record stored as stale whose thread lacks the `stale` entry.
                if record.has_missing_stale_entry() {
                    mark_stale(pass, index);
                }
                retry_or_escalate(pass, index);
            }
            _ => {}
        }
    }
}

fn mark_stale(pass: &mut Pass<'_>, index: usize) {
    pass.append(index, EntryKind::Stale, "SLA expired");
    let id = pass.id(index);
    pass.report.stale.push(id);
}

fn retry_or_escalate(pass: &mut Pass<'_>, index: usize) {
    let retries = pass
        .ledger
        .clarifications
        .get(index)
        .map_or(0, crate::ledger::Record::folded_retries);
    let max = pass.config.max_retries;
    if retries < max {
        pass.append(
            index,
            EntryKind::Retry,
            &format!("retry {} of {max}", retries + 1),
        );
        let id = pass.id(index);
        pass.report.retried.push(id);
    } else {
        escalate_overdue(
            pass,
            index,
            &format!("SLA expired; retries used: {retries} of {max}"),
        );
    }
}

/// The body of the monitor's escalation of a question asked back, escalated with the record
/// it was asked back from: the pair is one conversation before a person, and only the
/// original's escalation is notified (`notify::outbox::events_of` skips this one).
pub const ESCALATED_WITH: &str = "escalated with ";

/// Escalates record `index`, past its SLA and its retries. A question and the question asked
/// back from it are one conversation (issue 49), escalated once:
///
/// - the original, while the question asked back of its requester is unanswered, is stale
///   only because of it: the reason says so ("waits on CLR-50-002, asked back and unanswered
///   by engineer");
/// - the question asked back escalates its original with that reason (unless a person
///   already has it: escalated, or closed after an escalation) and itself with
///   [`ESCALATED_WITH`], so the pair makes one notification, never two, and neither stays due.
fn escalate_overdue(pass: &mut Pass<'_>, index: usize, sla: &str) {
    let ledger = &*pass.ledger;
    let Some(record) = ledger.clarifications.get(index) else {
        return;
    };
    if let Some((at, origin)) = replies::origin(ledger, record) {
        let status = origin.current_status();
        let escalated_before = origin
            .thread
            .iter()
            .any(|e| e.kind == EntryKind::Escalation);
        let with = format!(
            "{ESCALATED_WITH}{}: asked back from it, one conversation before a person",
            origin.id
        );
        if matches!(status, Status::Pending | Status::Stale) {
            let reason = waits_on(&record.id, &record.to);
            pass.escalate(at, &reason);
            pass.escalate(index, &with);
            return;
        }
        if status == Status::Escalated || (status.is_terminal() && escalated_before) {
            pass.escalate(index, &with);
            return;
        }
    }
    let reason = match replies::open_reply(ledger, record) {
        Some(reply) => waits_on(&reply.id, &record.from),
        None => sla.to_owned(),
    };
    pass.escalate(index, &reason);
}

/// "waits on CLR-50-002, asked back and unanswered by engineer".
fn waits_on(reply: &str, requester: &str) -> String {
    format!("waits on {reply}, asked back and unanswered by {requester}")
}
