//! Phase 1: a pending record past its SLA goes stale, then is retried while retries remain,
//! else escalated. A record found already stale gets the retry-or-escalate step. A legacy
//! record without a question is escalated instead, never retried.

use super::Pass;
use crate::ledger::{EntryKind, Record, Status};

/// The first instant at which this phase acts on `record` by the passing of time alone:
/// just past the SLA of a pending record, at once for one found stale, never for the others.
/// The stale phase and the next wake-up ([`super::next_wakeup`]) both ask this.
pub fn due_at(record: &Record) -> Option<i64> {
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
        let due = due_at(record).is_some_and(|t| pass.now >= t);
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
        pass.escalate(
            index,
            &format!("SLA expired; retries used: {retries} of {max}"),
        );
    }
}
