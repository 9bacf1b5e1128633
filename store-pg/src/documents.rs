//! Documents: what the file store keeps as files under `.agentx/state/`, kept as rows
//! `(kind, name, body)`. The mapping between the two is this file's, so export and import
//! cannot disagree about where a document goes.
//!
//! | file | kind | name |
//! |---|---|---|
//! | `.agentx/state/clarifications/issue-<n>.json` | `clarifications` | `issue-<n>.json` |
//! | `.agentx/state/delegations/issue-<n>.json` | `delegations` | `issue-<n>.json` |
//! | `.agentx/state/agent-status.json` | `state` | `agent-status.json` |
//!
//! Delegation ledgers (docs/protocol.md §18) are read and updated with the same row-locked transaction as
//! clarification ledgers (`delegations.rs`); they have no rows in `agentx.active` (the
//! monitor reads every delegation ledger, as the file store's does).

pub use agentx_clarify_command::paths::DELEGATIONS_DIR;
use agentx_clarify_command::paths::{CLARIFICATIONS_DIR, STATE_DIR, STATUS_FILE};
use agentx_clarify_command::store_delegations::parse_delegations;
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{Ledger, Record};

pub const CLARIFICATIONS: &str = "clarifications";
pub const DELEGATIONS: &str = "delegations";
pub const STATE: &str = "state";

/// The workspace path of a document.
pub fn path_of(kind: &str, name: &str) -> String {
    match kind {
        CLARIFICATIONS => format!("{CLARIFICATIONS_DIR}{name}"),
        DELEGATIONS => format!("{DELEGATIONS_DIR}{name}"),
        _ => format!("{STATE_DIR}{name}"),
    }
}

/// The document a workspace path holds, if it is one: a ledger file named
/// `issue-<n>.json` in one of the two ledger directories, or the statuses file.
pub fn document_of(path: &str) -> Option<(&'static str, &str)> {
    let ledger = |dir: &str, kind: &'static str| {
        path.strip_prefix(dir)
            .filter(|name| issue_of_file_name(name).is_some())
            .map(|name| (kind, name))
    };
    ledger(CLARIFICATIONS_DIR, CLARIFICATIONS)
        .or_else(|| ledger(DELEGATIONS_DIR, DELEGATIONS))
        .or_else(|| {
            (path.strip_prefix(STATE_DIR) == Some(STATUS_FILE)).then_some((STATE, STATUS_FILE))
        })
}

/// A row of `agentx.active`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ActiveRow {
    pub record: String,
    pub status: &'static str,
    pub stale_after: Option<i64>,
    pub requester: Option<String>,
}

/// The active records of a ledger (none when the monitor can never act on it).
pub(crate) fn active_rows(ledger: &Ledger) -> Vec<ActiveRow> {
    if !may_act(ledger) {
        return Vec::new();
    }
    ledger
        .clarifications
        .iter()
        .filter_map(active_row)
        .collect()
}

/// The row of one record of a ledger that has an active record, if it is active itself.
pub(crate) fn active_row(r: &Record) -> Option<ActiveRow> {
    let status = r.current_status();
    status.is_active().then(|| ActiveRow {
        record: r.id.clone(),
        status: status.as_str(),
        stale_after: r.stale_after_ms(),
        requester: Some(r.from.clone()),
    })
}

/// The rows of a document as imported or written whole: a clarification ledger's active
/// records, a delegation ledger's accepted delegations that can time out, or one `unreadable`
/// row when either does not parse (or its number is out of range), so the monitor keeps
/// reporting it as the file store does.
pub(crate) fn rows_of(kind: &str, name: &str, body: &[u8]) -> Vec<ActiveRow> {
    let issue = issue_of_file_name(name)
        .filter(|n| *n <= MAX_ISSUE)
        .and_then(|n| u32::try_from(n).ok());
    let rows = match kind {
        CLARIFICATIONS => issue.and_then(|n| {
            Ledger::parse(name, body, Some(n))
                .ok()
                .map(|l| active_rows(&l))
        }),
        DELEGATIONS => {
            issue.and_then(|n| parse_delegations(n, body).ok().map(|l| delegation_rows(&l)))
        }
        _ => return Vec::new(),
    };
    rows.unwrap_or_else(|| {
        vec![ActiveRow {
            record: String::new(),
            status: "unreadable",
            stale_after: None,
            requester: None,
        }]
    })
}

/// A delegation ledger's rows: one per accepted delegation with a deadline (what the
/// monitor's timeout phase can act on), `stale_after` = the deadline.
pub(crate) fn delegation_rows(ledger: &DelegationLedger) -> Vec<ActiveRow> {
    ledger
        .delegations
        .iter()
        .filter_map(|d| {
            Some(ActiveRow {
                record: d.id.clone(),
                status: "accepted",
                stale_after: Some(d.times_out_at()?),
                requester: None,
            })
        })
        .collect()
}

/// The columns of `rows` as arrays, for one `unnest` insert.
pub(crate) type Columns = (
    Vec<String>,
    Vec<String>,
    Vec<Option<i64>>,
    Vec<Option<String>>,
);

pub(crate) fn columns(rows: Vec<ActiveRow>) -> Columns {
    let mut c: Columns = Default::default();
    for r in rows {
        c.0.push(r.record);
        c.1.push(r.status.to_owned());
        c.2.push(r.stale_after);
        c.3.push(r.requester);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_documents_map_both_ways() {
        for (kind, name) in [
            (CLARIFICATIONS, "issue-42.json"),
            (DELEGATIONS, "issue-7.json"),
            (STATE, "agent-status.json"),
        ] {
            assert_eq!(document_of(&path_of(kind, name)), Some((kind, name)));
        }
        assert_eq!(
            document_of(".agentx/state/clarifications/issue-42.json.lock"),
            None
        );
        assert_eq!(
            document_of(".agentx/state/clarifications/.agentx-tmp-x"),
            None
        );
        assert_eq!(document_of(".agentx/config.toml"), None);
        assert_eq!(document_of(".agentx/state/other.json"), None);
    }

    #[test]
    fn unreadable_ledgers_keep_a_row() {
        let rows = rows_of(CLARIFICATIONS, "issue-9.json", b"{ not json");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, "unreadable");
        assert_eq!(
            rows_of(CLARIFICATIONS, "issue-99999999999.json", b"{}").len(),
            1
        );
        assert_eq!(
            rows_of(DELEGATIONS, "issue-9.json", b"{ not json")[0].status,
            "unreadable"
        );
        assert!(rows_of(STATE, "agent-status.json", b"{ not json").is_empty());
        let empty = br#"{"issueNumber": 9, "clarifications": []}"#;
        assert!(rows_of(CLARIFICATIONS, "issue-9.json", empty).is_empty());
    }
}
