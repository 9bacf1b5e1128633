//! The fold of a thread: the snapshot every command acts on.

use super::{EntryKind, Record, Status};
use crate::time::Timestamp;

/// What a record's thread says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    pub status: Status,
    pub round: u32,
    pub retries: u32,
    pub resolved_at: Option<Timestamp>,
    pub stale_after: Option<Timestamp>,
    pub created: Option<Timestamp>,
}

impl Record {
    /// Folds the thread. A legacy record with an empty thread folds to its stored snapshot.
    pub fn fold(&self) -> Fold {
        if self.thread.is_empty() {
            return Fold {
                status: self.status,
                round: self.round,
                retries: self.retries,
                resolved_at: self.resolved_at.clone(),
                stale_after: self.stale_after.clone(),
                created: self.created.clone(),
            };
        }
        let mut status = self.status;
        let mut round = 0u32;
        let mut retries = 0u32;
        let mut resolved_at = None;
        let mut created = None;
        for entry in &self.thread {
            status = entry.kind.status_after();
            match entry.kind {
                EntryKind::Question => {
                    round = round.saturating_add(1);
                    if created.is_none() {
                        created = Some(entry.timestamp.clone());
                    }
                }
                EntryKind::Retry => {
                    retries = retries.saturating_add(1);
                }
                EntryKind::Resolution => resolved_at = Some(entry.timestamp.clone()),
                _ => {}
            }
        }
        let stale_after = self
            .sla_deadline_ms()
            .map(Timestamp::from_ms)
            .or_else(|| self.stale_after.clone());
        Fold {
            status,
            round,
            retries,
            resolved_at,
            stale_after,
            created: created.or_else(|| self.created.clone()),
        }
    }
}
