//! Phase 1: a pending record past its SLA goes stale, then is retried while retries remain,
//! else escalated. A record found already stale gets the retry-or-escalate step.

use super::Pass;
use crate::ledger::{EntryKind, Status};

pub(super) fn run(pass: &mut Pass<'_>) {
    for index in 0..pass.ledger.clarifications.len() {
        let Some(record) = pass.ledger.clarifications.get(index) else {
            continue;
        };
        match record.current_status() {
            Status::Pending if record.stale_after_ms().is_some_and(|t| pass.now > t) => {
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
