//! The on-disk shape as read: lenient about what the reference implementation wrote
//! (record-level `issueNumber`, missing `slaMinutes`/`retries`/`hash`/`round`), strict about
//! types. `normalise` turns it into the in-memory model.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Entry, EntryKind, Ledger, Record, Status};
use crate::error::ClarifyError;
use crate::names::check_issue;
use crate::time::Timestamp;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawLedger {
    #[serde(default)]
    issue_number: Option<u64>,
    #[serde(default)]
    workflow: Option<String>,
    #[serde(default)]
    clarifications: Vec<RawRecord>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRecord {
    id: String,
    /// Written per record by the reference implementation; dropped on write.
    #[serde(default, rename = "issueNumber")]
    _issue_number: Option<Value>,
    from: String,
    to: String,
    topic: String,
    #[serde(default = "yes")]
    blocking: bool,
    status: Status,
    #[serde(default)]
    round: Option<u32>,
    #[serde(default)]
    max_rounds: Option<u32>,
    #[serde(default)]
    sla_minutes: Option<u32>,
    #[serde(default)]
    created: Option<Timestamp>,
    #[serde(default)]
    stale_after: Option<Timestamp>,
    #[serde(default)]
    retries: Option<u32>,
    #[serde(default)]
    resolved_at: Option<Timestamp>,
    #[serde(default)]
    field: Option<String>,
    #[serde(default)]
    suggestions: Vec<String>,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    thread: Vec<RawEntry>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct RawEntry {
    #[serde(default)]
    round: Option<u32>,
    from: String,
    #[serde(rename = "type")]
    kind: EntryKind,
    body: String,
    timestamp: Timestamp,
    #[serde(default)]
    hash: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn yes() -> bool {
    true
}

const DEFAULT_SLA_MINUTES: u32 = 30;

impl RawLedger {
    pub(super) fn normalise(self, file: &str, issue: Option<u32>) -> Result<Ledger, ClarifyError> {
        let issue_number = match (self.issue_number, issue) {
            (Some(n), _) => check_issue(n).map_err(|_| {
                ClarifyError::corrupt(file, format!("issueNumber {n} is out of range"))
            })?,
            (None, Some(n)) => n,
            (None, None) => return Err(ClarifyError::corrupt(file, "missing field `issueNumber`")),
        };
        Ok(Ledger {
            issue_number,
            workflow: self.workflow,
            clarifications: self
                .clarifications
                .into_iter()
                .map(RawRecord::normalise)
                .collect(),
            extra: self.extra,
        })
    }
}

impl RawRecord {
    fn normalise(self) -> Record {
        let mut thread = Vec::with_capacity(self.thread.len());
        let mut round = 0u32;
        for raw in self.thread {
            // Entries other than questions carry the current round; a question opens the next.
            let inferred = if raw.kind == EntryKind::Question {
                round.saturating_add(1)
            } else {
                round
            };
            let entry_round = raw.round.unwrap_or(inferred);
            if raw.kind == EntryKind::Question {
                round = entry_round;
            }
            thread.push(Entry {
                round: entry_round,
                from: raw.from,
                kind: raw.kind,
                body: raw.body,
                timestamp: raw.timestamp,
                hash: raw.hash,
                extra: raw.extra,
            });
        }
        let retries_in_thread = thread.iter().filter(|e| e.kind == EntryKind::Retry).count();
        let sla_minutes =
            self.sla_minutes
                .unwrap_or_else(|| match (&self.created, &self.stale_after) {
                    (Some(c), Some(s)) if s.ms() > c.ms() => {
                        u32::try_from((s.ms() - c.ms()) / 60_000)
                            .unwrap_or(DEFAULT_SLA_MINUTES)
                            .max(1)
                    }
                    _ => DEFAULT_SLA_MINUTES,
                });
        Record {
            max_rounds: self.max_rounds.unwrap_or(if self.blocking { 5 } else { 6 }),
            id: self.id,
            from: self.from,
            to: self.to,
            topic: self.topic,
            blocking: self.blocking,
            status: self.status,
            round: self.round.unwrap_or(round),
            sla_minutes,
            created: self.created,
            stale_after: self.stale_after,
            retries: self
                .retries
                .unwrap_or_else(|| u32::try_from(retries_in_thread).unwrap_or(u32::MAX)),
            resolved_at: self.resolved_at,
            field: self.field,
            suggestions: self.suggestions,
            idempotency_key: self.idempotency_key,
            thread,
            extra: self.extra,
        }
    }
}
