//! Read-only views over ledgers: `list`, `show`, `ready`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::{Ledger, Record, Status};
use crate::names;

/// Which records `list` shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub issue: Option<u32>,
    /// Only these statuses (any of them); empty = the default set.
    pub statuses: Vec<Status>,
    /// Every record, terminal ones included.
    pub all: bool,
}

/// Records matching `filter`, ordered by issue then sequence. Default: open records.
pub fn list<'a>(ledgers: &'a [Ledger], filter: &ListFilter) -> Vec<(u32, &'a Record)> {
    let mut out: Vec<(u32, &Record)> = ledgers
        .iter()
        .filter(|l| filter.issue.is_none_or(|n| n == l.issue_number))
        .flat_map(|l| l.clarifications.iter().map(move |r| (l.issue_number, r)))
        .filter(|(_, r)| {
            let status = r.current_status();
            if !filter.statuses.is_empty() {
                filter.statuses.contains(&status)
            } else {
                filter.all || status.is_open()
            }
        })
        .collect();
    crate::stable_sort::sort_by(&mut out, |a, b| {
        (a.0, a.1.order_key()).cmp(&(b.0, b.1.order_key()))
    });
    out
}

/// Records as outputs show them (with `issueNumber`).
pub fn list_values(records: &[(u32, &Record)]) -> Vec<Value> {
    records
        .iter()
        .map(|(issue, r)| r.to_output(*issue))
        .collect()
}

/// One record by id across ledgers.
pub fn find<'a>(ledgers: &'a [Ledger], id: &str) -> Option<(u32, &'a Record)> {
    ledgers
        .iter()
        .find_map(|l| l.find(id).map(|r| (l.issue_number, r)))
}

/// An open blocking request that holds an issue up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    pub id: String,
    pub waiting_on: String,
}

/// One issue in `agentx ready`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadyIssue {
    pub issue_number: u32,
    /// Blocking records in pending or stale (and escalated, when asked), oldest first;
    /// empty = ready.
    pub blocked: Vec<Blocker>,
}

/// The ready queue: every issue with a ledger, ascending. Pending and stale blocking records
/// hold their issue; with `include_escalated` (every surface's default, docs/protocol.md) an
/// escalated blocking record does too, waiting on `human` (who resolves it).
pub fn ready(ledgers: &[Ledger], include_escalated: bool) -> Vec<ReadyIssue> {
    let waiting_on = |r| waiting_on(r, include_escalated);
    let mut out: Vec<ReadyIssue> = ledgers
        .iter()
        .map(|l| {
            // Records are sorted, not (record, name) pairs: the one sort of `&Record` the wasm
            // module already carries serves.
            let mut blockers: Vec<&Record> = l
                .clarifications
                .iter()
                .filter(|r| waiting_on(r).is_some())
                .collect();
            crate::stable_sort::sort_by_key(&mut blockers, |r| {
                (
                    r.created.as_ref().map_or(i64::MAX, |t| t.ms()),
                    r.order_key(),
                )
            });
            ReadyIssue {
                issue_number: l.issue_number,
                blocked: blockers
                    .into_iter()
                    .filter_map(|r| {
                        Some(Blocker {
                            id: r.id.clone(),
                            waiting_on: waiting_on(r)?.to_owned(),
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    crate::stable_sort::sort_by_key(&mut out, |r| r.issue_number);
    out
}

/// Whom a record's requester waits on, if the record holds its issue up.
fn waiting_on(r: &Record, include_escalated: bool) -> Option<&str> {
    if r.waits() {
        Some(&r.to)
    } else if include_escalated && r.blocking && r.current_status() == Status::Escalated {
        Some(names::HUMAN)
    } else {
        None
    }
}

/// The human line for one ready-queue entry.
pub fn ready_line(issue: &ReadyIssue) -> String {
    match issue.blocked.split_first() {
        None => format!("#{} ready", issue.issue_number),
        Some((first, [])) => {
            format!(
                "#{} BLOCKED: {} waiting on {}",
                issue.issue_number, first.id, first.waiting_on
            )
        }
        Some((first, rest)) => format!(
            "#{} BLOCKED: {} waiting on {} (+{} more)",
            issue.issue_number,
            first.id,
            first.waiting_on,
            rest.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_filters_and_shows_the_fold() {
        // AgentX left `pending` on a record whose thread has its answer (docs/protocol.md §20).
        let v = json!({"issueNumber": 1, "clarifications": [{
        "id": "CLR-1-001", "from": "engineer", "to": "architect", "topic": "Cache",
        "status": "pending", "round": 1, "maxRounds": 5, "resolvedAt": null,
        "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "Redis?",
             "timestamp": "2026-11-22T10:00:00.000Z"},
            {"round": 1, "from": "architect", "type": "answer", "body": "Yes.",
             "timestamp": "2026-11-22T10:04:00.000Z"}
        ]}]});
        let ledgers = vec![Ledger::from_value("issue-1.json", &v, Some(1)).unwrap()];
        let only = |status| ListFilter {
            statuses: vec![status],
            ..ListFilter::default()
        };
        let answered = list(&ledgers, &only(Status::Answered));
        assert_eq!(answered.len(), 1);
        assert_eq!(list_values(&answered)[0]["status"], "answered");
        assert!(list(&ledgers, &only(Status::Pending)).is_empty());
        assert!(ready(&ledgers, false)[0].blocked.is_empty());
    }
}
