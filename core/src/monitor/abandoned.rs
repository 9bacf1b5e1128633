//! Phase 4: an active record whose requester has moved on is abandoned by the monitor:
//! the requester is `done` (whatever its issue), or `working` on another issue. An agent
//! absent from the status file, or working with no issue, never causes abandonment.
//!
//! Moved on *since it asked*, by its own report (docs/protocol.md, "Abandonment"): the status
//! counts only when its `reportedAt` — set by `hook`/`state`, never by a clarification
//! operation — is later than the record's latest question or retry. `lastActivity` moves
//! with every answer and question, so reading it abandoned live questions of an agent that
//! had only answered someone; AgentX's files (no `reportedAt`) never abandon.

use super::Pass;
use crate::agents::{DONE, WORKING};
use crate::ledger::EntryKind;
use crate::time::parse_ms;

pub(super) fn run(pass: &mut Pass<'_>) {
    let issue = u64::from(pass.ledger.issue_number);
    for index in 0..pass.ledger.clarifications.len() {
        let Some(record) = pass.ledger.clarifications.get(index) else {
            continue;
        };
        if !record.current_status().is_active() {
            continue;
        }
        let Some(status) = pass.statuses.get(&record.from) else {
            continue;
        };
        let changed_at = status.reported_at.as_deref().and_then(parse_ms);
        let moved_on_since = match (changed_at, record.last_ask_ms()) {
            (Some(changed), Some(asked)) => changed > asked,
            // No report to compare with: nothing shows the requester moved on after asking.
            _ => false,
        };
        if !moved_on_since {
            continue;
        }
        let reason = match (status.status.as_str(), status.issue) {
            (DONE, _) => format!("requester {} is done", record.from),
            (WORKING, Some(other)) if other != issue => {
                format!("requester {} moved to issue {other}", record.from)
            }
            _ => continue,
        };
        pass.append(index, EntryKind::Abandonment, &reason);
        let id = pass.id(index);
        pass.report.abandoned.push(id);
    }
}
