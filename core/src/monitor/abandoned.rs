//! Phase 4: an active record whose requester has moved on is abandoned by the monitor:
//! the requester is `done` (whatever its issue), or `working` on another issue. An agent
//! absent from the status file, or working with no issue, never causes abandonment.
//!
//! Moved on *since it asked* (SPEC §20): the status counts only when its `lastActivity` is
//! later than the record's latest question or retry. AgentX leaves agents `done` after
//! `hook finish`; that leftover must not abandon a question asked afterwards.

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
        let changed_at = status.last_activity.as_deref().and_then(parse_ms);
        let moved_on_since = match (changed_at, record.last_ask_ms()) {
            (Some(changed), Some(asked)) => changed > asked,
            // No time to compare with: nothing shows the requester moved on after asking.
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
