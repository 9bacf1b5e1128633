//! `audit` (docs/protocol.md §16): Layer 4's audit record of one record or of an issue's ledger — every
//! ask/answer round with its timestamps and signatures, who answered and who decided (the
//! person, the option, the note: [`AuditStep`]), and whether the chain verifies.

use serde::Serialize;

use crate::error::ClarifyError;
use crate::ledger::{Entry, EntryKind, Ledger, Record, Status};
use crate::render::{round_entries, rounds};
use crate::signing::PublicKeys;
use crate::verify::check_ledger_with;

/// What to audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditScope<'a> {
    /// One record, by id.
    Record(&'a str),
    /// Every record of the ledger.
    Issue,
}

/// Layer 4's audit record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Audit {
    /// The records' common session id (null when they have none or differ).
    pub session_id: Option<String>,
    pub chain: Vec<AuditRound>,
    pub total_rounds: usize,
    /// Every audited record is resolved.
    pub all_resolved: bool,
    /// The signature of the record's last entry, which covers its whole chain through the
    /// hashes. Null when unsigned, and for an issue of more than one record (each record is
    /// its own chain; `verified` covers them all).
    pub chain_signature: Option<String>,
    /// No problem found: hash chains, snapshots and signatures all check out.
    pub verified: bool,
    pub problems: Vec<AuditProblem>,
}

/// One ask/answer round. `round` counts the rounds of the audit from 1; `clarificationId`
/// names the record the round belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditRound {
    pub round: usize,
    #[serde(rename = "clarificationId")]
    pub clarification_id: String,
    pub ask_timestamp: String,
    pub ask_signature: Option<String>,
    pub gap: AuditGap,
    pub answer_timestamp: Option<String>,
    pub answer: Option<String>,
    pub answer_signature: Option<String>,
    /// The round ended in a resolution (a follow-up round means the answer did not settle it).
    pub resolved: bool,
    /// Who answered, and what (the round's answer entry); null when nobody did.
    pub answered: Option<AuditStep>,
    /// Who decided, and what (the round's resolution entry): the person behind a `human`
    /// resolution, the option they chose and their note; null when the round was not
    /// resolved.
    pub decided: Option<AuditStep>,
}

/// One answer or decision of a round, as the audit leads with it: who (`from`, and for a
/// person `by` and `via`), what (`value`, its `label`, the `note`), when, and who signed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditStep {
    pub from: String,
    /// The person behind a `human` entry (docs/protocol.md §23); null for an agent's.
    pub by: Option<String>,
    /// The door the person came in by (`web`, `elicitation`, `github`, `cli`…).
    pub via: Option<String>,
    /// The typed value (docs/protocol.md §22), null for free text.
    pub value: Option<serde_json::Value>,
    /// What the value stands for, as people read it (the options' labels, `yes`/`no`).
    pub label: Option<String>,
    /// What was written beside the value — or, without one, the answer itself.
    pub note: Option<String>,
    pub timestamp: String,
    pub signer: Option<String>,
    pub signature: Option<String>,
    /// Where it was taken, when the door has an address for it (a GitHub comment).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

impl AuditStep {
    /// The step `entry` of `record` records.
    pub fn of(record: &Record, entry: &Entry) -> AuditStep {
        let text = |key: &str| {
            entry
                .extra
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        let label = entry.value.as_ref().map(|v| record.answer.render(v));
        let body = entry.body.trim();
        let note = (!body.is_empty() && Some(body) != label.as_deref()).then(|| body.to_owned());
        AuditStep {
            from: entry.from.clone(),
            by: text("by"),
            via: text("via"),
            value: entry.value.clone(),
            label,
            note,
            timestamp: entry.timestamp.as_str().to_owned(),
            signer: entry.signer.clone(),
            signature: entry.signature.clone(),
            reference: text("ref"),
        }
    }

    /// Who took the step, for people: `architect`, or `alice (human via web)`.
    pub fn who(&self) -> String {
        match (&self.by, &self.via) {
            (Some(by), Some(via)) => format!("{by} ({} via {via})", self.from),
            (Some(by), None) => format!("{by} ({})", self.from),
            _ => self.from.clone(),
        }
    }
}

/// The gap a round asked about: its Layer 4 id (the record id for plain requests), field
/// and the round's question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditGap {
    pub id: String,
    pub field: Option<String>,
    pub question: String,
}

/// A problem found while auditing: `SIGNATURE_INVALID` for signatures, `LEDGER_INCONSISTENT`
/// for everything `verify` checks besides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditProblem {
    pub code: &'static str,
    pub id: Option<String>,
    pub message: String,
}

/// Audits `scope` of `ledger`, checking signatures against `keys` (`require_signatures`:
/// unsigned entries are problems too). A record id that is not in the ledger is `NOT_FOUND`.
pub fn audit(
    ledger: &Ledger,
    scope: AuditScope<'_>,
    keys: &PublicKeys,
    require_signatures: bool,
) -> Result<Audit, ClarifyError> {
    let records: Vec<&Record> = match scope {
        AuditScope::Record(id) => vec![ledger
            .find(id)
            .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?],
        AuditScope::Issue => ledger.clarifications.iter().collect(),
    };
    let file = format!("issue-{}.json", ledger.issue_number);
    let in_scope = |id: &Option<String>| match scope {
        AuditScope::Record(wanted) => id.as_deref() == Some(wanted),
        AuditScope::Issue => true,
    };
    let problems: Vec<AuditProblem> = check_ledger_with(&file, ledger, keys, require_signatures)
        .problems
        .into_iter()
        .filter(|p| in_scope(&p.id))
        .map(|p| AuditProblem {
            code: p.failure_code().as_str(),
            id: p.id,
            message: p.message,
        })
        .collect();
    let mut chain = Vec::new();
    for record in &records {
        for round in rounds(record) {
            let entries = round_entries(record, round);
            if let Some(item) = audit_round(record, &entries, chain.len() + 1) {
                chain.push(item);
            }
        }
    }
    let session_id = common_session(&records);
    let chain_signature = match records.as_slice() {
        [only] => only.thread.last().and_then(|e| e.signature.clone()),
        _ => None,
    };
    Ok(Audit {
        session_id,
        total_rounds: chain.len(),
        chain,
        all_resolved: records
            .iter()
            .all(|r| r.current_status() == Status::Resolved),
        chain_signature,
        verified: problems.is_empty(),
        problems,
    })
}

fn audit_round(record: &Record, entries: &[&Entry], n: usize) -> Option<AuditRound> {
    let ask = entries.iter().find(|e| e.kind == EntryKind::Question)?;
    let answer = entries.iter().find(|e| e.kind == EntryKind::Answer);
    let resolution = entries.iter().find(|e| e.kind == EntryKind::Resolution);
    Some(AuditRound {
        round: n,
        clarification_id: record.id.clone(),
        ask_timestamp: ask.timestamp.as_str().to_owned(),
        ask_signature: ask.signature.clone(),
        gap: AuditGap {
            id: record.gap_id.clone().unwrap_or_else(|| record.id.clone()),
            field: record.field.clone(),
            question: ask.body.clone(),
        },
        answer_timestamp: answer.map(|a| a.timestamp.as_str().to_owned()),
        answer: answer.map(|a| a.body.clone()),
        answer_signature: answer.and_then(|a| a.signature.clone()),
        resolved: resolution.is_some(),
        answered: answer.map(|a| AuditStep::of(record, a)),
        decided: resolution.map(|r| AuditStep::of(record, r)),
    })
}

/// The session id every record shares, if they all have the same one.
fn common_session(records: &[&Record]) -> Option<String> {
    let first = records.first()?.session_id.as_ref()?;
    records
        .iter()
        .all(|r| r.session_id.as_ref() == Some(first))
        .then(|| first.clone())
}
