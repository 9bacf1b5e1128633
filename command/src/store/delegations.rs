//! Delegations (docs/protocol.md §18) as every store reads them: one delegation ledger per
//! issue (the [`State`](crate::store::State) side, updated under its own exclusion exactly like a
//! clarification ledger) and the capability manifests (`.agentx/agents/<name>.toml`, the
//! [`Files`](crate::store::Files) side). What a pass makes of one file is decided here once.

use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::store::ledgers::{Delegations, LedgerKind, Read};
use crate::store::paths;

/// One delegation ledger as a workspace pass reads it.
pub type DelegationRead = Read<DelegationLedger>;

/// What `update_issue`'s decision writes: the clarification ledger, the delegation ledger
/// (`None`: leave it as it is) and the command's result.
pub type IssueWrite<T> = (Option<Ledger>, Option<DelegationLedger>, T);

/// Parses one delegation ledger's bytes, naming it as reports do.
pub fn parse_delegations(issue: u32, bytes: &[u8]) -> Result<DelegationLedger, ClarifyError> {
    Delegations::parse_issue(issue, bytes)
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
