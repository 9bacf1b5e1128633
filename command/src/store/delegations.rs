//! Delegations (docs/protocol.md §18) as every store reads them: one delegation ledger per
//! issue (the [`State`](crate::store::State) side, updated under its own exclusion exactly like a
//! clarification ledger) and the capability manifests (`.agentx/agents/<name>.toml`, the
//! [`Files`](crate::store::Files) side). What a pass makes of one file is decided here once.

use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::store::paths;

/// One delegation ledger as a workspace pass reads it.
#[derive(Debug)]
pub struct DelegationRead {
    /// The issue number of its name.
    pub issue: u64,
    /// Its name as reports show it (`delegations/issue-<n>.json`).
    pub file: String,
    /// The parsed ledger, or why it could not be read.
    pub ledger: Result<DelegationLedger, ReportError>,
}

/// What `update_issue`'s decision writes: the clarification ledger, the delegation ledger
/// (`None`: leave it as it is) and the command's result.
pub type IssueWrite<T> = (Option<Ledger>, Option<DelegationLedger>, T);

/// A delegation ledger file read by a pass: its name's number is checked, then its bytes are
/// parsed; either failure becomes a report error naming the file.
pub fn delegation_read(issue: u64, bytes: Result<&[u8], ClarifyError>) -> DelegationRead {
    let valid = u32::try_from(issue)
        .ok()
        .filter(|n| u64::from(*n) <= MAX_ISSUE);
    let file = format!("delegations/issue-{issue}.json");
    let fail = |e: ClarifyError| ReportError::new(file.as_str(), &e);
    let ledger = match valid {
        None => Err(fail(ClarifyError::InvalidIssue {
            value: issue.to_string(),
        })),
        Some(n) => bytes
            .map_err(fail)
            .and_then(|b| DelegationLedger::parse(&file, b, Some(n)).map_err(&fail)),
    };
    DelegationRead {
        issue,
        file,
        ledger,
    }
}

/// Parses one delegation ledger's bytes, naming it as reports do.
pub fn parse_delegations(issue: u32, bytes: &[u8]) -> Result<DelegationLedger, ClarifyError> {
    DelegationLedger::parse(&paths::delegation_file(issue), bytes, Some(issue))
}

/// The agent a manifest file is for: `<agent>.toml` directly in the agents directory. Other
/// names (`notes.md`, a backup `x.toml~`) are not manifests; a `.toml` whose stem is no agent
/// name is kept, so that its manifest fails as `CONFIG_INVALID` when that name is used.
pub fn manifest_agent(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(".toml")
        .filter(|stem| !stem.is_empty() && !stem.contains('/'))
}

/// Adds one manifest file's bytes (or why they could not be read) to `manifests`.
pub fn add_manifest(manifests: &mut Manifests, agent: &str, bytes: Result<&[u8], ClarifyError>) {
    let file = paths::manifest_path(agent);
    match bytes.and_then(|b| {
        std::str::from_utf8(b).map_err(|e| ClarifyError::ConfigInvalid {
            file: file.clone(),
            location: None,
            message: format!("not UTF-8: {e}"),
        })
    }) {
        Ok(text) => manifests.insert_text(agent, &file, text.trim_start_matches('\u{feff}')),
        Err(e) => manifests.insert_error(agent, e),
    }
}
