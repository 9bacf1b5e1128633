//! Decisions that stand (docs/protocol.md §36): a resolution may name the records whose
//! decisions it replaces (`supersedes`, on the resolution entry, hashed with it). Closed
//! records are never rewritten: search and `related` read who superseded a decision from the
//! resolutions that name it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Hit;
use crate::error::ClarifyError;
use crate::ledger::{EntryKind, Ledger, Record, Status};
use crate::names::ClarificationId;

/// The most records one resolution may supersede.
pub const MAX_SUPERSEDES: usize = 10;

/// The field of a resolution entry that names what it supersedes.
pub const SUPERSEDES: &str = "supersedes";

/// The ids `id`'s resolution supersedes, checked: 1 to [`MAX_SUPERSEDES`] valid ids, none of
/// them `id` itself; repeated ones kept once, in the order given.
pub fn check_ids(id: &str, ids: &[String]) -> Result<Vec<String>, ClarifyError> {
    if ids.len() > MAX_SUPERSEDES {
        return Err(ClarifyError::input(format!(
            "`supersedes` names {} records: at most {MAX_SUPERSEDES}",
            ids.len()
        )));
    }
    let mut out: Vec<String> = Vec::new();
    for s in ids {
        ClarificationId::parse(s)?;
        if s == id {
            return Err(ClarifyError::input(format!("{id} cannot supersede itself")));
        }
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    Ok(out)
}

/// Only a decision taken can be superseded: `record` (`id`) must be resolved.
pub fn check_superseded(id: &str, record: &Record) -> Result<(), ClarifyError> {
    let status = record.current_status();
    if status == Status::Resolved {
        return Ok(());
    }
    Err(ClarifyError::InvalidTransition {
        op: "supersede".into(),
        id: id.to_owned(),
        status: status.as_str().to_owned(),
        allowed: "resolved (only a decision taken can be superseded)".into(),
    })
}

/// The entry fields that record `ids` as superseded.
pub fn fields(ids: &[String]) -> Map<String, Value> {
    let mut m = Map::new();
    let list = ids.iter().cloned().map(Value::String).collect();
    m.insert(SUPERSEDES.into(), Value::Array(list));
    m
}

/// Which record superseded each decision, read from every resolution that names one (the
/// latest resolution wins when several do).
pub fn superseded_by(ledgers: &[Ledger]) -> BTreeMap<String, String> {
    let mut by: BTreeMap<String, (i64, String)> = BTreeMap::new();
    for r in ledgers.iter().flat_map(|l| l.clarifications.iter()) {
        for e in r.thread.iter().filter(|e| e.kind == EntryKind::Resolution) {
            let named = e.extra.get(SUPERSEDES).and_then(Value::as_array);
            for old in named.into_iter().flatten().filter_map(Value::as_str) {
                let at = e.timestamp.ms();
                let newer = by.get(old).is_none_or(|(t, _)| at >= *t);
                if newer {
                    by.insert(old.to_owned(), (at, r.id.clone()));
                }
            }
        }
    }
    by.into_iter().map(|(k, (_, v))| (k, v)).collect()
}

/// Marks each hit whose decision was superseded.
pub fn mark(hits: &mut [Hit], by: &BTreeMap<String, String>) {
    for h in hits {
        h.superseded_by = by.get(&h.id).cloned();
    }
}
