//! Phase 4: an active record whose requester has moved on is abandoned by the monitor:
//! the requester is `done` (whatever its issue), or `working` on another issue. An agent
//! absent from the status file, or working with no issue, never causes abandonment.

use super::Pass;
use crate::agents::{DONE, WORKING};
use crate::ledger::EntryKind;

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
