//! Read-only commands: `list`, `show`, `stats`.

use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::stats::Stats;
use agentx_clarify_core::views::{self, ListFilter};
use agentx_clarify_core::{ClarifyError, Ledger, Record};

use crate::store::Workspace;

/// Records matching `filter` (default: open ones), by issue then sequence.
pub fn list(ws: &Workspace, filter: &ListFilter) -> Result<Vec<(u32, Record)>, ClarifyError> {
    let (ledgers, _) = ws.read_all()?;
    Ok(views::list(&ledgers, filter)
        .into_iter()
        .map(|(i, r)| (i, r.clone()))
        .collect())
}

/// One record by id.
pub fn show_id(ws: &Workspace, id: &str) -> Result<(u32, Record), ClarifyError> {
    let parsed = ClarificationId::parse(id)?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    let ledger = ws.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let record = ledger.find(id).cloned().ok_or_else(not_found)?;
    Ok((parsed.issue, record))
}

/// The whole ledger of an issue.
pub fn show_issue(ws: &Workspace, issue: u32) -> Result<Ledger, ClarifyError> {
    ws.read_ledger(issue)?
        .ok_or(ClarifyError::NoLedger { issue })
}

/// Analytics over every readable ledger, optionally only records created since `since`.
pub fn stats(ws: &Workspace, since: Option<i64>) -> Result<Stats, ClarifyError> {
    let (ledgers, _) = ws.read_all()?;
    Ok(agentx_clarify_core::stats::stats(&ledgers, since))
}
