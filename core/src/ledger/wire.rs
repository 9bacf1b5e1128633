//! The on-disk shape as read: lenient about what the reference implementation wrote
//! (record-level `issueNumber`, missing `slaMinutes`/`retries`/`hash`/`round`), strict about
//! types. `normalise` turns it into the in-memory model.

use serde_json::{Map, Value};

use super::{Entry, EntryKind, Ledger, Record, Reuse, Reuses, Severity, Status};
use crate::error::ClarifyError;
use crate::keep_unknown::extensible_deserialize;
use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use crate::names::check_issue;
use crate::time::Timestamp;
use crate::workflow::DEFAULT_SLA_MINUTES;

#[derive(Default)]
pub(super) struct RawLedger {
    issue_number: Option<u64>,
    workflow: Option<String>,
    clarifications: Option<Vec<RawRecord>>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawLedger, required: [], fields: {
    issue_number => "issueNumber",
    workflow => "workflow",
    clarifications => "clarifications",
});

#[derive(Default)]
struct RawRecord {
    id: Option<String>,
    /// Written per record by the reference implementation; checked against the ledger's,
    /// then dropped on write.
    issue_number: Option<Value>,
    from: Option<String>,
    to: Option<String>,
    topic: Option<String>,
    blocking: Option<bool>,
    status: Option<Status>,
    round: Option<u32>,
    max_rounds: Option<u32>,
    sla_minutes: Option<u32>,
    created: Option<Timestamp>,
    stale_after: Option<Timestamp>,
    retries: Option<u32>,
    resolved_at: Option<Timestamp>,
    field: Option<String>,
    suggestions: Option<Vec<String>>,
    idempotency_key: Option<String>,
    severity: Option<Severity>,
    context: Option<String>,
    blocked_operations: Option<Vec<String>>,
    session_id: Option<String>,
    gap_id: Option<String>,
    answer_kind: Option<AnswerKind>,
    options: Option<Vec<AnswerOption>>,
    allow_other: Option<bool>,
    min_select: Option<u32>,
    max_select: Option<u32>,
    fingerprint: Option<String>,
    reuse_count: Option<u32>,
    reuses: Option<Vec<Reuse>>,
    thread: Option<Vec<RawEntry>>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawRecord, required: [id, from, to, topic, status], fields: {
    id => "id",
    issue_number => "issueNumber",
    from => "from",
    to => "to",
    topic => "topic",
    blocking => "blocking",
    status => "status",
    round => "round",
    max_rounds => "maxRounds",
    sla_minutes => "slaMinutes",
    created => "created",
    stale_after => "staleAfter",
    retries => "retries",
    resolved_at => "resolvedAt",
    field => "field",
    suggestions => "suggestions",
    idempotency_key => "idempotencyKey",
    severity => "severity",
    context => "context",
    blocked_operations => "blockedOperations",
    session_id => "sessionId",
    gap_id => "gapId",
    answer_kind => "answerKind",
    options => "options",
    allow_other => "allowOther",
    min_select => "minSelect",
    max_select => "maxSelect",
    fingerprint => "fingerprint",
    reuse_count => "reuseCount",
    reuses => "reuses",
    thread => "thread",
});

#[derive(Default)]
struct RawEntry {
    round: Option<u32>,
    from: Option<String>,
    kind: Option<EntryKind>,
    body: Option<String>,
    value: Option<Value>,
    timestamp: Option<Timestamp>,
    hash: Option<String>,
    signer: Option<String>,
    signature: Option<String>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawEntry, required: [from, kind, body, timestamp], fields: {
    round => "round",
    from => "from",
    kind => "type",
    body => "body",
    value => "value",
    timestamp => "timestamp",
    hash => "hash",
    signer => "signer",
    signature => "signature",
});

impl RawLedger {
    pub(super) fn normalise(self, file: &str, issue: Option<u32>) -> Result<Ledger, ClarifyError> {
        let issue_number = match (self.issue_number, issue) {
            (Some(n), _) => check_issue(n).map_err(|_| {
                ClarifyError::corrupt(file, format!("issueNumber {n} is out of range"))
            })?,
            (None, Some(n)) => n,
            (None, None) => return Err(ClarifyError::corrupt(file, "missing field `issueNumber`")),
        };
        // A ledger misfiled under another issue's name would be answered, listed and shown as
        // that issue's: every command refuses it instead (docs/protocol.md §20).
        if let Some(expected) = issue.filter(|n| *n != issue_number) {
            return Err(ClarifyError::corrupt(
                file,
                misfiled_message(expected, issue_number),
            ));
        }
        let records = self.clarifications.unwrap_or_default();
        for record in &records {
            if let Some(n) = &record.issue_number {
                if n.as_u64() != Some(u64::from(issue_number)) {
                    return Err(ClarifyError::corrupt(
                        file,
                        format!(
                            "record {} says issueNumber {n}, but the ledger is issue {issue_number}",
                            crate::error::shown(record.id.as_deref().unwrap_or("?"))
                        ),
                    ));
                }
            }
        }
        Ok(Ledger {
            issue_number,
            workflow: self.workflow,
            clarifications: records.into_iter().map(RawRecord::normalise).collect(),
            extra: self.extra,
        })
    }
}

/// The one message for a ledger file holding another issue's ledger (parse and `verify`).
pub(crate) fn misfiled_message(expected: u32, found: u32) -> String {
    format!("it holds the ledger of issue {found}, not of issue {expected}")
}

impl RawRecord {
    // Required fields (id, from, to, topic, status; an entry's from, type, body, timestamp)
    // were checked while reading: the fallbacks below are never taken.
    fn normalise(self) -> Record {
        let raw_thread = self.thread.unwrap_or_default();
        let mut thread = Vec::with_capacity(raw_thread.len());
        let mut round = 0u32;
        for raw in raw_thread {
            let kind = raw.kind.unwrap_or(EntryKind::Question);
            // Entries other than questions carry the current round; a question opens the next.
            let inferred = if kind == EntryKind::Question {
                round.saturating_add(1)
            } else {
                round
            };
            let entry_round = raw.round.unwrap_or(inferred);
            if kind == EntryKind::Question {
                round = entry_round;
            }
            thread.push(Entry {
                round: entry_round,
                from: raw.from.unwrap_or_default(),
                kind,
                body: raw.body.unwrap_or_default(),
                value: raw.value,
                timestamp: raw.timestamp.unwrap_or_else(|| Timestamp::from_ms(0)),
                hash: raw.hash,
                signer: raw.signer,
                signature: raw.signature,
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
        // A given severity sets `blocking` (docs/protocol.md §16), whatever a foreign writer stored.
        let blocking = match self.severity {
            Some(s) => s.is_blocking(),
            None => self.blocking.unwrap_or(true),
        };
        Record {
            id: self.id.unwrap_or_default(),
            from: self.from.unwrap_or_default(),
            to: self.to.unwrap_or_default(),
            topic: self.topic.unwrap_or_default(),
            blocking,
            status: self.status.unwrap_or(Status::Pending),
            round: self.round.unwrap_or(round),
            max_rounds: self
                .max_rounds
                .unwrap_or_else(|| crate::scope::default_max_rounds(blocking)),
            sla_minutes,
            created: self.created,
            stale_after: self.stale_after,
            retries: self
                .retries
                .unwrap_or_else(|| u32::try_from(retries_in_thread).unwrap_or(u32::MAX)),
            resolved_at: self.resolved_at,
            field: self.field,
            suggestions: self.suggestions.unwrap_or_default(),
            idempotency_key: self.idempotency_key,
            severity: self.severity,
            context: self.context,
            blocked_operations: self.blocked_operations.unwrap_or_default(),
            session_id: self.session_id,
            gap_id: self.gap_id,
            answer: AnswerSpec {
                kind: self.answer_kind.unwrap_or_default(),
                options: self.options.unwrap_or_default(),
                allow_other: self.allow_other,
                min_select: self.min_select,
                max_select: self.max_select,
            },
            fingerprint: self.fingerprint,
            reuses: Reuses {
                count: self.reuse_count.unwrap_or(0),
                latest: self.reuses.unwrap_or_default(),
            },
            thread,
            extra: self.extra,
        }
    }
}
