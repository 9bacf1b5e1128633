//! Clarification ledgers as rows (schema migration 4): a ledger written by a command is kept as
//! its head — the ledger without its records, compact JSON — in `documents.body`, and one row
//! per record in `agentx.records`, by position, each stamped with the revision that last wrote
//! it. A write rewrites only the records that changed; a process keeps the ledgers it wrote or
//! read (`Cache`) and, under the row lock, fetches only the rows newer than the revision it
//! holds. With eight writers on one issue, each ask used to read, parse, serialise and rewrite
//! the whole ledger under its lock; now it moves the handful of records the others wrote.
//!
//! What readers see does not change: a ledger is assembled from its rows and parsed exactly as
//! the file store's bytes would be, and its bytes (export, `verify`, `document`) are the pretty
//! JSON the file store writes, so export → import → export stays the identity.

use std::collections::HashMap;

use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Ledger, Record};

/// A document as stored: whole bytes, or a ledger's head and its records' JSON by position.
#[derive(Clone, Debug)]
pub(crate) enum Stored {
    Raw(Vec<u8>),
    Split { head: Vec<u8>, records: Vec<String> },
}

impl Stored {
    /// From a row's `body` and its records (`None` when `documents.records` is NULL).
    pub fn from_columns(body: Vec<u8>, records: Option<Vec<String>>) -> Stored {
        match records {
            None => Stored::Raw(body),
            Some(records) => Stored::Split {
                head: body,
                records,
            },
        }
    }

    /// The ledger it holds, parsed as the file store parses the file `name`.
    pub fn ledger(&self, name: &str, issue: u32) -> Result<Ledger, ClarifyError> {
        match self {
            Stored::Raw(bytes) => Ledger::parse(name, bytes, Some(issue)),
            Stored::Split { head, records } => assemble(name, issue, head, records),
        }
    }

    /// The bytes the file store would hold for it (`issue`: the number of its name, when it
    /// is a clarification ledger's).
    pub fn to_bytes(&self, name: &str, issue: Option<u32>) -> Result<Vec<u8>, ClarifyError> {
        match (self, issue) {
            (Stored::Raw(bytes), _) => Ok(bytes.clone()),
            (split, Some(issue)) => Ok(split.ledger(name, issue)?.to_pretty_json().into_bytes()),
            (Stored::Split { .. }, None) => Err(corrupt(
                name,
                "stored as records, but its name is not a ledger's",
            )),
        }
    }
}

/// The issue number of a clarification ledger's name, when it is one a ledger can have.
pub(crate) fn ledger_number(name: &str) -> Option<u32> {
    issue_of_file_name(name).and_then(|n| u32::try_from(n).ok())
}

/// `LEDGER_CORRUPT` for document `file`.
pub(crate) fn corrupt(file: &str, message: impl Into<String>) -> ClarifyError {
    ClarifyError::LedgerCorrupt {
        file: file.to_owned(),
        message: message.into(),
    }
}

/// The head of `ledger`: everything but its records, compact.
pub(crate) fn head_of(ledger: &Ledger) -> String {
    let head = Ledger {
        issue_number: ledger.issue_number,
        workflow: ledger.workflow.clone(),
        clarifications: Vec::new(),
        extra: ledger.extra.clone(),
    };
    serde_json::to_string(&head).unwrap_or_default()
}

/// One record's row body.
pub(crate) fn record_text(record: &Record) -> String {
    serde_json::to_string(record).unwrap_or_default()
}

/// Parses records' row bodies as the records of ledger `name` (one parse for all of them).
pub(crate) fn parse_records<S: AsRef<str>>(
    name: &str,
    issue: u32,
    texts: &[S],
) -> Result<Vec<Record>, ClarifyError> {
    let mut doc =
        String::with_capacity(64 + texts.iter().map(|t| t.as_ref().len() + 1).sum::<usize>());
    doc.push_str("{\"issueNumber\":");
    doc.push_str(&issue.to_string());
    doc.push_str(",\"clarifications\":[");
    for (i, t) in texts.iter().enumerate() {
        if i > 0 {
            doc.push(',');
        }
        doc.push_str(t.as_ref());
    }
    doc.push_str("]}");
    Ok(Ledger::parse(name, doc.as_bytes(), Some(issue))?.clarifications)
}

/// The ledger of a head and its records' row bodies.
pub(crate) fn assemble<S: AsRef<str>>(
    name: &str,
    issue: u32,
    head: &[u8],
    records: &[S],
) -> Result<Ledger, ClarifyError> {
    let mut ledger = Ledger::parse(name, head, Some(issue))?;
    ledger.clarifications = parse_records(name, issue, records)?;
    Ok(ledger)
}

/// What a write of `new` over `old` (the ledger as stored, if it was stored as records) must
/// put in `agentx.records`: the positions and bodies of the records that differ, and `new`
/// as a reader will parse it back (`None` if a changed record does not parse back).
pub(crate) struct Changes {
    pub positions: Vec<i32>,
    pub bodies: Vec<String>,
    pub head: String,
    pub count: i32,
}

pub(crate) fn changes(old: Option<&Ledger>, new: &Ledger) -> Result<Changes, ClarifyError> {
    let count = i32::try_from(new.clarifications.len())
        .map_err(|_| ClarifyError::input("a ledger holds too many records to store"))?;
    let (mut positions, mut bodies) = (Vec::new(), Vec::new());
    for (i, record) in new.clarifications.iter().enumerate() {
        let same = old
            .and_then(|o| o.clarifications.get(i))
            .is_some_and(|r| r == record);
        if !same {
            positions.push(i32::try_from(i).unwrap_or(i32::MAX));
            bodies.push(record_text(record));
        }
    }
    Ok(Changes {
        positions,
        bodies,
        head: head_of(new),
        count,
    })
}

/// `new` as a reader parses it back once `changes` (made from it) are stored: the changed
/// records and the head as parsed from what was stored, the others as they are (they equal
/// what a reader already had). Takes `new` over instead of copying it.
pub(crate) fn after(
    name: &str,
    issue: u32,
    mut new: Ledger,
    changes: &Changes,
) -> Result<Ledger, ClarifyError> {
    let head = Ledger::parse(name, changes.head.as_bytes(), Some(issue))?;
    let parsed = parse_records(name, issue, &changes.bodies)?;
    for (pos, record) in changes.positions.iter().zip(parsed) {
        let slot = usize::try_from(*pos)
            .ok()
            .and_then(|p| new.clarifications.get_mut(p))
            .ok_or_else(|| corrupt(name, "a changed record is not in the ledger"))?;
        *slot = record;
    }
    new.issue_number = head.issue_number;
    new.workflow = head.workflow;
    new.extra = head.extra;
    Ok(new)
}

/// Ledgers this process wrote or read under their row lock, by document name, with the
/// revision they are at. Bounded: a long-lived shell (the MCP server, the Node binding) that
/// touches many issues keeps only the last few.
#[derive(Default)]
pub(crate) struct Cache {
    entries: HashMap<String, (i64, Ledger)>,
    order: Vec<String>,
}

/// Ledgers kept per store.
const CACHED: usize = 16;

impl Cache {
    /// The ledger `name` as held, and its revision.
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&(i64, Ledger)> {
        self.entries.get(name)
    }

    /// Whether a ledger `name` is held.
    pub fn holds(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Takes the ledger `name` out (an update puts back what it leaves).
    pub fn take(&mut self, name: &str) -> Option<(i64, Ledger)> {
        let taken = self.entries.remove(name);
        if taken.is_some() {
            self.order.retain(|n| n != name);
        }
        taken
    }

    pub fn put(&mut self, name: &str, rev: i64, ledger: Ledger) {
        if self
            .entries
            .insert(name.to_owned(), (rev, ledger))
            .is_none()
        {
            self.order.push(name.to_owned());
            if self.order.len() > CACHED {
                let oldest = self.order.remove(0);
                self.entries.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_clarify_core::Ledger;

    fn sample() -> Ledger {
        let text = r#"{"issueNumber": 7, "workflow": "feature", "clarifications": [
            {"id": "CLR-7-001", "from": "engineer", "to": "architect", "topic": "Cache",
             "status": "pending", "created": "2026-11-24T10:00:00.000Z",
             "thread": [{"round": 1, "from": "engineer", "type": "question", "body": "Redis?",
                         "timestamp": "2026-11-24T10:00:00.000Z"}]},
            {"id": "CLR-7-002", "from": "engineer", "to": "pm", "topic": "Scope",
             "status": "pending", "x-unknown": [1, 2]}
        ], "x-extra": {"kept": true}}"#;
        Ledger::parse("issue-7.json", text.as_bytes(), Some(7)).unwrap()
    }

    #[test]
    fn a_ledger_stored_as_rows_reads_and_prints_as_its_file() {
        let ledger = sample();
        let all = changes(None, &ledger).unwrap();
        assert_eq!(all.positions, [0, 1]);
        let stored = Stored::Split {
            head: all.head.clone().into_bytes(),
            records: all.bodies.clone(),
        };
        let back = stored.ledger("issue-7.json", 7).unwrap();
        assert_eq!(back, ledger);
        let bytes = stored.to_bytes("issue-7.json", Some(7)).unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), ledger.to_pretty_json());
        assert_eq!(
            after("issue-7.json", 7, ledger.clone(), &all).unwrap(),
            ledger
        );
    }

    #[test]
    fn only_changed_records_are_written() {
        let old = sample();
        let mut new = old.clone();
        new.clarifications[1].topic = String::from("Scope, again");
        new.clarifications.push(old.clarifications[0].clone());
        let c = changes(Some(&old), &new).unwrap();
        assert_eq!((c.positions.as_slice(), c.count), (&[1, 2][..], 3));
        assert_eq!(after("issue-7.json", 7, new.clone(), &c).unwrap(), new);
        // Fewer records: nothing to write but the count.
        let mut shorter = old.clone();
        shorter.clarifications.truncate(1);
        let c = changes(Some(&old), &shorter).unwrap();
        assert!(c.positions.is_empty());
        assert_eq!(c.count, 1);
        // A change at a position the ledger does not have is refused, not guessed.
        let mut bad = changes(Some(&old), &new).unwrap();
        bad.positions[0] = 9;
        assert_eq!(
            after("issue-7.json", 7, new.clone(), &bad)
                .unwrap_err()
                .code(),
            "LEDGER_CORRUPT"
        );
    }

    #[test]
    fn the_cache_keeps_the_last_few() {
        let mut cache = Cache::default();
        for i in 0..CACHED + 2 {
            cache.put(&format!("issue-{i}.json"), 1, Ledger::new(1));
        }
        assert!(cache.get("issue-0.json").is_none());
        assert!(cache.get("issue-1.json").is_none());
        assert!(cache.get(&format!("issue-{}.json", CACHED + 1)).is_some());
        assert!(cache.holds(&format!("issue-{}.json", CACHED + 1)));
        assert!(!cache.holds("issue-0.json"));
        let last = format!("issue-{}.json", CACHED + 1);
        assert_eq!(cache.take(&last).map(|(rev, _)| rev), Some(1));
        assert!(cache.get(&last).is_none());
    }
}
