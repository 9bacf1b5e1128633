//! `ask --reuse CLR-…` (docs/protocol.md §36): the asker takes a decision made before, in
//! another record, instead of waiting for a new one. The new record is created as any ask
//! and resolved at once by its requester, with the cited decision's text and value, and
//! `ref` (the cited id), `refHash` (the cited resolution entry's hash) and `via: "reuse"` on
//! the resolution entry — hashed with it, so the audit shows whose decision was relied on.

use serde_json::{Map, Value};

use super::decision_of;
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::{EntryKind, NewEntry, Record, Status};
use crate::ops::Applied;
use crate::signing::Signers;

/// `via` of a resolution that reuses a decision.
pub const VIA_REUSE: &str = "reuse";

/// What a reuse cites: the record's id, and its decision's text, value and entry hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cited {
    pub id: String,
    pub text: String,
    pub value: Option<Value>,
    pub hash: Option<String>,
}

/// The decision of `record` (`id`) to cite; only a resolved record has one.
pub fn cite(id: &str, record: &Record) -> Result<Cited, ClarifyError> {
    let status = record.current_status();
    let decision = decision_of(record).filter(|_| status == Status::Resolved);
    let Some(d) = decision else {
        return Err(ClarifyError::InvalidTransition {
            op: "reuse".into(),
            id: id.to_owned(),
            status: status.as_str().to_owned(),
            allowed: "resolved (only a decision taken can be reused)".into(),
        });
    };
    Ok(Cited {
        id: id.to_owned(),
        text: d.text,
        value: d.value,
        hash: d.hash,
    })
}

/// Resolves the record `applied` just asked with `cited`'s decision, by its requester. An
/// idempotent replay or a suppressed re-ask (no new record) is returned as it is.
pub fn resolve_with(mut applied: Applied, cited: &Cited, now: i64, signers: &Signers) -> Applied {
    if applied.idempotent || applied.reused || applied.error.is_some() {
        return applied;
    }
    let issue = applied.ledger.issue_number;
    let Some(record) = applied
        .ledger
        .clarifications
        .iter_mut()
        .find(|r| r.id == applied.id)
    else {
        return applied;
    };
    let mut extra = Map::new();
    extra.insert("ref".into(), Value::String(cited.id.clone()));
    if let Some(h) = &cited.hash {
        extra.insert("refHash".into(), Value::String(h.clone()));
    }
    extra.insert("via".into(), Value::String(VIA_REUSE.into()));
    let from = record.from.clone();
    let entry = NewEntry {
        kind: EntryKind::Resolution,
        from: &from,
        body: &cited.text,
        value: cited.value.clone(),
        extra,
    };
    let at = record.append_entry(entry, now, signers);
    let event = Event::for_entry(issue, record, EntryKind::Resolution, &from, &cited.text, at);
    applied.events.extend(event);
    applied.ledger.seal();
    applied
}
