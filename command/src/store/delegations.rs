//! What a store adds to hold delegations (docs/protocol.md §18): one delegation ledger per issue, read and
//! updated under its own exclusion exactly like a clarification ledger, and the capability
//! manifests (`.agentx/agents/<name>.toml`). An extension of [`Store`](crate::Store), so that
//! stores gain it without touching the base trait; every command that runs the monitor needs
//! it (the monitor times delegations out), and the keys too (the monitor signs with the hub
//! key), hence `KeyStore` beneath it.
//!
//! A store implements four methods; [`DelegationStore::update_issue`], which `signals ingest`
//! uses to change both ledgers of an issue at once, has a default built from them.

use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::{ClarifyError, Config, Ledger};

use crate::paths;
use crate::store::Scope;
use crate::store_keys::KeyStore;

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

pub trait DelegationStore: KeyStore {
    /// The delegation ledger of `issue`, if there is one. One that does not parse is
    /// `LEDGER_CORRUPT` and is never overwritten.
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError>;

    /// Read–decide–write on one delegation ledger, excluding every other writer of it (and of
    /// nothing else: it may be called while the issue's clarification ledger is held, never
    /// the other way round). Like `Store::update_ledger`, `decide` may run again on a retry.
    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// The delegation ledgers `scope` names (a store without an index gives all of them),
    /// ascending by issue number.
    fn scan_delegations(&self, scope: Scope<'_>) -> Result<Vec<DelegationRead>, ClarifyError>;

    /// Every capability manifest, by agent. A manifest that cannot be read or parsed is kept
    /// as its error (it fails only what needs that agent's manifest); only a directory that
    /// cannot be listed fails.
    fn load_manifests(&self) -> Result<Manifests, ClarifyError>;

    /// Read–decide–write on both ledgers of `issue`: the clarification ledger is held, then
    /// the delegation ledger (always in this order, so two writers never wait on each other),
    /// `decide` sees both as they are, and what it returns is written — the delegation ledger
    /// first, then the clarification ledger, each atomically. A store with transactions writes
    /// both in one.
    ///
    /// If the clarification write fails after the delegation write succeeded, the blocks that
    /// changed the delegation ledger are applied and those that changed the clarification
    /// ledger are not; the error is returned. Every caller is idempotent (a block's key is on
    /// what it wrote), so running the command again applies exactly the rest.
    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_ledger(issue, config, agent, |ledger| {
            self.update_delegations(issue, config, agent, |delegations| {
                let (write_ledger, write_delegations, result) =
                    decide(ledger.as_ref(), delegations.as_ref())?;
                Ok((write_delegations, (write_ledger, result)))
            })
        })
    }
}

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
