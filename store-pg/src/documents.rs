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
//! clarification ledgers (`delegations.rs`), and have rows in `agentx.active` for their
//! accepted delegations that can time out.

pub use agentx_clarify_command::paths::DELEGATIONS_DIR;
use agentx_clarify_command::paths::{CLARIFICATIONS_DIR, STATE_DIR, STATUS_FILE};
use agentx_clarify_command::store::delegations::parse_delegations;
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::monitor::follow::{has_cycle, wait_edges, EdgeRow};
use agentx_clarify_core::monitor::{due_at, may_act, watched};
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

/// A row of `agentx.active`. The follow-up monitor's columns (docs/protocol.md §29) hold the core's
/// decisions (`agentx_clarify_core::monitor::follow`), so the store only keeps them:
/// `due_ms` (when the monitor acts on the record by time alone: `due_at`, an accepted
/// delegation's deadline, `i64::MIN` for a document that does not parse), `asked_ms` (an active
/// record's latest question or retry: abandonment compares its requester's status with it),
/// `waits_on` (the record is a wait-for edge `requester → waits_on`) and `cycle` (the
/// document's edges hold a cycle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ActiveRow {
    pub record: String,
    pub status: &'static str,
    pub stale_after: Option<i64>,
    pub requester: Option<String>,
    pub due_ms: Option<i64>,
    pub asked_ms: Option<i64>,
    pub waits_on: Option<String>,
    pub cycle: bool,
}

impl ActiveRow {
    fn bare(record: String, status: &'static str) -> ActiveRow {
        ActiveRow {
            record,
            status,
            stale_after: None,
            requester: None,
            due_ms: None,
            asked_ms: None,
            waits_on: None,
            cycle: false,
        }
    }
}

/// What a record's row needs to know of the whole ledger: which records are wait-for edges
/// (a record asked back waits on the reply instead) and whether the edges hold a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LedgerContext {
    edges: Vec<EdgeRow>,
    cycle: bool,
}

impl LedgerContext {
    pub(crate) fn of(ledger: &Ledger) -> LedgerContext {
        let edges = wait_edges(ledger);
        LedgerContext {
            cycle: has_cycle(&edges),
            edges,
        }
    }
}

/// The active records of a ledger (none when the monitor can never act on it).
pub(crate) fn active_rows(ledger: &Ledger) -> Vec<ActiveRow> {
    if !may_act(ledger) {
        return Vec::new();
    }
    let context = LedgerContext::of(ledger);
    ledger
        .clarifications
        .iter()
        .filter_map(|r| active_row(r, &context))
        .collect()
}

/// The row of one record of a ledger that has an active record, if it is active itself.
pub(crate) fn active_row(r: &Record, context: &LedgerContext) -> Option<ActiveRow> {
    let status = r.current_status();
    let edge = context.edges.iter().find(|e| e.id == r.id);
    // A held escalated record has a row too: its claim lapses by time (docs/protocol.md §37).
    watched(r).then(|| ActiveRow {
        stale_after: r.stale_after_ms(),
        requester: Some(r.from.clone()),
        due_ms: due_at(r),
        asked_ms: r.last_ask_ms(),
        waits_on: edge.map(|e| e.to.clone()),
        cycle: context.cycle && edge.is_some(),
        ..ActiveRow::bare(r.id.clone(), status.as_str())
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
            due_ms: Some(i64::MIN),
            ..ActiveRow::bare(String::new(), "unreadable")
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
            let deadline = d.times_out_at()?;
            Some(ActiveRow {
                stale_after: Some(deadline),
                due_ms: Some(deadline),
                ..ActiveRow::bare(d.id.clone(), "accepted")
            })
        })
        .collect()
}

/// The columns of `rows` as arrays, for one `unnest` insert.
#[derive(Debug, Default)]
pub(crate) struct Columns {
    pub records: Vec<String>,
    pub statuses: Vec<String>,
    pub stale_after: Vec<Option<i64>>,
    pub requesters: Vec<Option<String>>,
    pub due_ms: Vec<Option<i64>>,
    pub asked_ms: Vec<Option<i64>>,
    pub waits_on: Vec<Option<String>>,
    pub cycle: Vec<bool>,
}

/// The columns of `agentx.active` after `(kind, name)`, as [`Columns::params`] gives them.
pub(crate) const ACTIVE_COLUMNS: &str =
    "record, status, stale_after, requester, due_ms, asked_ms, waits_on, cycle";

/// The `unnest` arguments of [`Columns::params`] from parameter `$first` on (rows of
/// [`ACTIVE_COLUMNS`]).
pub(crate) fn unnest_columns(first: usize) -> String {
    let types = [
        "text", "text", "int8", "text", "int8", "int8", "text", "bool",
    ];
    let args: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("${}::{t}[]", first + i))
        .collect();
    args.join(", ")
}

impl Columns {
    /// The arrays as statement parameters, in [`ACTIVE_COLUMNS`] order.
    pub(crate) fn params(&self) -> [&(dyn postgres::types::ToSql + Sync); 8] {
        [
            &self.records,
            &self.statuses,
            &self.stale_after,
            &self.requesters,
            &self.due_ms,
            &self.asked_ms,
            &self.waits_on,
            &self.cycle,
        ]
    }
}

/// Inserts `agentx.active` rows in one statement: row `i` belongs to document
/// (`kinds[i]`, `names[i]`). The migration that rewrites the index and `store import` share it.
pub(crate) fn insert_active<T: postgres::types::ToSql + Sync>(
    tx: &mut postgres::Transaction<'_>,
    kinds: &[T],
    names: &[T],
    rows: Vec<ActiveRow>,
) -> Result<u64, postgres::Error> {
    let cols = columns(rows);
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&kinds, &names];
    params.extend(cols.params());
    tx.execute(
        &format!(
            "INSERT INTO agentx.active (kind, name, {ACTIVE_COLUMNS}) SELECT * FROM unnest($1::text[], $2::text[], {})",
            unnest_columns(3)
        ),
        &params,
    )
}

pub(crate) fn columns(rows: Vec<ActiveRow>) -> Columns {
    let mut c = Columns::default();
    for r in rows {
        c.records.push(r.record);
        c.statuses.push(r.status.to_owned());
        c.stale_after.push(r.stale_after);
        c.requesters.push(r.requester);
        c.due_ms.push(r.due_ms);
        c.asked_ms.push(r.asked_ms);
        c.waits_on.push(r.waits_on);
        c.cycle.push(r.cycle);
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
