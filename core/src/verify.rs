//! `verify`: every ledger parses, ids are valid and unique, each snapshot equals the fold of
//! its thread, hash chains are intact and timestamps never decrease.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ledger::{ChainState, Ledger, Record};
use crate::names::ClarificationId;
use crate::time::Timestamp;

/// One problem found by `verify`; `id` is None for a file-level problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub file: String,
    pub id: Option<String>,
    pub message: String,
}

/// The issue number a ledger file name stands for (`issue-<n>.json`), if it is one.
pub fn issue_of_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("issue-")?.strip_suffix(".json")?;
    if crate::names::is_canonical_decimal(digits) {
        // Too many digits for a u64 fail here.
        digits.parse().ok()
    } else {
        None
    }
}

/// Verifies raw ledger bytes as read from `file`.
pub fn verify_file(file: &str, bytes: &[u8]) -> Vec<Problem> {
    let issue = issue_of_file_name(file).and_then(|n| u32::try_from(n).ok());
    match Ledger::parse(file, bytes, issue) {
        Ok(ledger) => verify_ledger(file, &ledger),
        Err(e) => vec![Problem {
            file: file.to_owned(),
            id: None,
            message: e.to_string(),
        }],
    }
}

/// Verifies a parsed ledger.
pub fn verify_ledger(file: &str, ledger: &Ledger) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut file_problem = |message: String| {
        problems.push(Problem {
            file: file.to_owned(),
            id: None,
            message,
        })
    };
    if let Some(n) = issue_of_file_name(file) {
        if n != u64::from(ledger.issue_number) {
            file_problem(format!(
                "file {file} holds the ledger of issue {}",
                ledger.issue_number
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for record in &ledger.clarifications {
        let mut report = |message: String| {
            problems.push(Problem {
                file: file.to_owned(),
                id: Some(record.id.clone()),
                message,
            });
        };
        match ClarificationId::parse(&record.id) {
            Err(e) => report(e.to_string()),
            Ok(id) if id.issue != ledger.issue_number => {
                report(format!(
                    "id {} belongs to issue {}, not {}",
                    record.id, id.issue, ledger.issue_number
                ));
            }
            Ok(id) => {
                if !seen.insert(id.seq) {
                    report(format!("id {} is not unique in this ledger", record.id));
                }
            }
        }
        for message in record_problems(record) {
            report(message);
        }
    }
    problems
}

fn record_problems(record: &Record) -> Vec<String> {
    let mut out = Vec::new();
    if record.thread.is_empty() {
        // A reference-implementation record with no thread has no fold to compare.
        return out;
    }
    let fold = record.fold();
    if record.status != fold.status {
        out.push(format!(
            "status is {} but the thread says {}",
            record.status.as_str(),
            fold.status.as_str()
        ));
    }
    if record.round != fold.round {
        out.push(format!(
            "round is {} but the thread has {} question(s)",
            record.round, fold.round
        ));
    }
    if record.retries != fold.retries {
        out.push(format!(
            "retries is {} but the thread has {} retry entries",
            record.retries, fold.retries
        ));
    }
    let same = |a: &Option<Timestamp>, b: &Option<Timestamp>| {
        a.as_ref().map(Timestamp::ms) == b.as_ref().map(Timestamp::ms)
    };
    if !same(&record.resolved_at, &fold.resolved_at) {
        out.push(format!(
            "resolvedAt is {} but the thread says {}",
            show(&record.resolved_at),
            show(&fold.resolved_at)
        ));
    }
    if !same(&record.stale_after, &fold.stale_after) {
        out.push(format!(
            "staleAfter is {} but the thread says {}",
            show(&record.stale_after),
            show(&fold.stale_after)
        ));
    }
    if !same(&record.created, &fold.created) {
        out.push(format!(
            "created is {} but the first question is at {}",
            show(&record.created),
            show(&fold.created)
        ));
    }
    for pair in record.thread.windows(2) {
        if let [a, b] = pair {
            if b.timestamp.ms() < a.timestamp.ms() {
                out.push(format!(
                    "timestamps go backwards: {} after {}",
                    b.timestamp, a.timestamp
                ));
                break;
            }
        }
    }
    match record.chain_state() {
        ChainState::Intact | ChainState::Unhashed => {}
        ChainState::Mixed => out.push(String::from("the thread mixes hashed and unhashed entries")),
        ChainState::BrokenAt(i) => out.push(format!(
            "hash chain broken at entry {} (history was edited)",
            i + 1
        )),
    }
    out
}

fn show(t: &Option<Timestamp>) -> String {
    t.as_ref()
        .map_or_else(|| String::from("null"), |t| t.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(issue_of_file_name("issue-42.json"), Some(42));
        assert_eq!(issue_of_file_name("issue-0.json"), Some(0));
        assert_eq!(issue_of_file_name("issue-042.json"), None);
        assert_eq!(issue_of_file_name("issue-42.json.lock"), None);
        assert_eq!(issue_of_file_name("issue-.json"), None);
    }

    #[test]
    fn reports_unparseable_files() {
        let p = verify_file("issue-1.json", b"[1,2");
        assert_eq!(p.len(), 1);
        assert!(p[0].id.is_none());
    }
}
