//! The monitor report, in the JSON shape of SPEC §7.

use serde::{Deserialize, Serialize};

use crate::names::ClarificationId;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EscalatedReport {
    pub id: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlockReport {
    /// Ids of every record inside the cycle's component, ascending by sequence.
    pub cycle: Vec<String>,
    /// Its agents in priority order.
    pub agents: Vec<String>,
    /// The record escalated to break it.
    pub escalated: String,
}

/// A ledger the monitor could not read (reported and skipped).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportError {
    pub file: String,
    pub code: String,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub stale: Vec<String>,
    pub retried: Vec<String>,
    pub escalated: Vec<EscalatedReport>,
    pub stuck: Vec<String>,
    pub deadlocks: Vec<DeadlockReport>,
    pub abandoned: Vec<String>,
    pub errors: Vec<ReportError>,
}

impl Report {
    /// True when the pass found nothing (errors aside).
    pub fn is_quiet(&self) -> bool {
        self.stale.is_empty()
            && self.retried.is_empty()
            && self.escalated.is_empty()
            && self.stuck.is_empty()
            && self.deadlocks.is_empty()
            && self.abandoned.is_empty()
    }

    /// Orders one ledger's lists by sequence number.
    pub(crate) fn sort(&mut self) {
        let seq = |id: &str| ClarificationId::parse(id).map_or(u64::MAX, |c| c.seq);
        for list in [
            &mut self.stale,
            &mut self.retried,
            &mut self.stuck,
            &mut self.abandoned,
        ] {
            list.sort_by_key(|id| seq(id));
            list.dedup();
        }
        self.escalated.sort_by_key(|e| seq(&e.id));
        self.deadlocks.sort_by_key(|d| seq(&d.escalated));
    }

    /// Appends a later ledger's report (ledgers are merged in ascending issue order).
    pub fn merge(&mut self, other: Report) {
        self.stale.extend(other.stale);
        self.retried.extend(other.retried);
        self.escalated.extend(other.escalated);
        self.stuck.extend(other.stuck);
        self.deadlocks.extend(other.deadlocks);
        self.abandoned.extend(other.abandoned);
        self.errors.extend(other.errors);
    }
}
