//! Decisions that were taken, read back as architecture decision records (docs/protocol.md
//! §36, "Decisions exported"): which resolved records count as decisions, what each one
//! says (the question and its thread, the decision, who took it, when and through what, the
//! entry's hash and whether its signature verifies), and whether it still stands. Pure: the
//! ledgers and the workspace's public keys come in, values go out; `adr.rs` renders one as
//! Markdown, `name.rs` names its file.

mod adr;
mod name;

use serde::Serialize;
use serde_json::Value;

use crate::ledger::{EntryKind, Ledger, Record, Severity, Status};
use crate::search::supersede::{superseded_by, SUPERSEDES};
use crate::signing::PublicKeys;
use crate::time::Timestamp;

pub use adr::markdown;
pub use name::{file_stem, slug};

/// Which resolved records are decisions: those deciding a `field`, or of severity BLOCK,
/// unless `all` (every resolved record); with `since_ms`, only those decided at or after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Select {
    pub all: bool,
    pub since_ms: Option<i64>,
}

/// Whether a decision stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    Accepted,
    Superseded,
}

/// One entry of the thread, as a decision record quotes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Said {
    pub from: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub body: String,
    pub at: Timestamp,
}

/// The decision itself: the value (and its option's label), the text, who took it, when,
/// through what surface, and the resolution entry's hash and signer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decided {
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub text: String,
    pub at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// `verified`, `unsigned`, or what is wrong with the signature.
    pub signature: String,
}

/// A decision record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub id: String,
    pub issue: u32,
    pub topic: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub severity: Severity,
    pub question: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub status: Standing,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    pub decision: Decided,
    pub thread: Vec<Said>,
    /// The file name an export gives it, without the extension.
    pub file: String,
}

/// Every decision of `ledgers` that `select` takes, ordered by issue then record.
pub fn decisions(ledgers: &[Ledger], keys: &PublicKeys, select: Select) -> Vec<Decision> {
    let replaced = superseded_by(ledgers);
    let mut out = Vec::new();
    for ledger in ledgers {
        for record in &ledger.clarifications {
            let Some(d) = decision(ledger.issue_number, record, keys) else {
                continue;
            };
            let counts = select.all || record.field.is_some() || d.severity == Severity::Block;
            let recent = select.since_ms.is_none_or(|t| d.decision.at.ms() >= t);
            if counts && recent {
                let superseded_by = replaced.get(&record.id).cloned();
                out.push(Decision {
                    status: match superseded_by {
                        Some(_) => Standing::Superseded,
                        None => Standing::Accepted,
                    },
                    superseded_by,
                    ..d
                });
            }
        }
    }
    out.sort_by(|a, b| (a.issue, &a.id).cmp(&(b.issue, &b.id)));
    out
}

/// The decision `record` (of `issue`) holds, standing as accepted; `None` unless resolved.
fn decision(issue: u32, record: &Record, keys: &PublicKeys) -> Option<Decision> {
    if record.current_status() != Status::Resolved {
        return None;
    }
    let hit = crate::search::decision_of(record)?;
    let (index, entry) = record
        .thread
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| e.kind == EntryKind::Resolution)?;
    let label = hit.value.as_ref().and_then(|v| label_of(record, v));
    let signature = match (
        &entry.signature,
        crate::verify::entry_signature_problem(record, index, keys),
    ) {
        (None, _) => "unsigned".to_owned(),
        (Some(_), None) => "verified".to_owned(),
        (Some(_), Some(problem)) => problem,
    };
    let supersedes = entry
        .extra
        .get(SUPERSEDES)
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some(Decision {
        id: record.id.clone(),
        issue,
        topic: record.topic.clone(),
        field: record.field.clone(),
        severity: record.severity(),
        question: record.first_question().unwrap_or_default().to_owned(),
        context: record.context.clone(),
        status: Standing::Accepted,
        superseded_by: None,
        supersedes,
        decision: Decided {
            by: hit.by,
            value: hit.value,
            label,
            text: hit.text,
            at: hit.at,
            via: entry
                .extra
                .get("via")
                .and_then(Value::as_str)
                .map(str::to_owned),
            hash: hit.hash,
            signer: entry.signer.clone(),
            signature,
        },
        thread: record
            .thread
            .iter()
            .map(|e| Said {
                from: e.from.clone(),
                kind: e.kind.as_str(),
                body: e.body.clone(),
                at: e.timestamp.clone(),
            })
            .collect(),
        file: file_stem(issue, &record.topic, &record.id),
    })
}

/// The labels of the options `value` names (one, or several for a multiple choice).
fn label_of(record: &Record, value: &Value) -> Option<String> {
    let shown = |v: &str| {
        record
            .answer
            .options
            .iter()
            .find(|o| o.value == v)
            .map(|o| o.shown().to_owned())
    };
    match value {
        Value::String(v) => shown(v),
        Value::Array(vs) => {
            let labels: Option<Vec<String>> =
                vs.iter().map(|v| v.as_str().and_then(shown)).collect();
            labels.map(|l| l.join(", "))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
