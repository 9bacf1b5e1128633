//! The monitor's delegation phase (docs/protocol.md §18): accepted delegations past their
//! deadline time out. Apart from the delegation commands (`delegate.rs`), which run the
//! monitor after every mutation: the monitor depends on this, never on them.

use agentx_clarify_core::delegation;
use agentx_clarify_core::monitor::{Report, ReportError};
use agentx_clarify_core::Config;

use crate::store::Scope;
use crate::store::Store;

/// What the monitor's delegation phase did.
#[derive(Clone, Debug, Default)]
pub struct Timeouts {
    /// `DLG-…` ids now `TIMEOUT`, by issue then sequence.
    pub ids: Vec<String>,
    pub events: Vec<delegation::Event>,
    pub errors: Vec<ReportError>,
}

/// The monitor's delegation phase (docs/protocol.md §18): every accepted delegation past its deadline
/// gets a `TIMEOUT` entry by `monitor`. Each ledger found due is re-read and re-decided inside
/// its own update, never written from the pass's copy; with `dry_run` nothing is written.
pub fn timeout_phase<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    dry_run: bool,
    scope: Scope,
) -> Timeouts {
    let mut out = Timeouts::default();
    let reads = match store.scan_delegations(scope) {
        Ok(reads) => reads,
        Err(e) => {
            out.errors
                .push(ReportError::new(crate::store::paths::DELEGATIONS_DIR, &e));
            return out;
        }
    };
    for read in reads {
        let ledger = match read.ledger {
            Ok(l) => l,
            Err(e) => {
                out.errors.push(e);
                continue;
            }
        };
        let Some(found) = delegation::timeouts(&ledger, now) else {
            continue;
        };
        if dry_run {
            out.ids.extend(found.ids);
            out.events.extend(found.events);
            continue;
        }
        let issue = ledger.issue_number;
        let result = store.update_delegations(issue, config, "monitor", |current| {
            Ok(
                match current.and_then(|fresh| delegation::timeouts(&fresh, now)) {
                    Some(t) => (Some(t.ledger), Some((t.ids, t.events))),
                    None => (None, None),
                },
            )
        });
        match result {
            Ok(Some((ids, events))) => {
                out.ids.extend(ids);
                out.events.extend(events);
            }
            Ok(None) => {}
            Err(e) => out.errors.push(ReportError::new(read.file.as_str(), &e)),
        }
    }
    out
}

impl Timeouts {
    /// Adds what the phase did to a monitor run's report and events.
    pub fn merge_into(self, report: &mut Report, events: &mut Vec<delegation::Event>) {
        report.timed_out.extend(self.ids);
        report.errors.extend(self.errors);
        events.extend(self.events);
    }
}
