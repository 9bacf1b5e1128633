//! `audit` (docs/protocol.md §16): Layer 4's audit record of one record or of an issue's ledger — every
//! ask/answer round with its timestamps and signatures, and whether the chain verifies.

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
        resolved: entries.iter().any(|e| e.kind == EntryKind::Resolution),
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
