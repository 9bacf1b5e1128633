//! Delegations in a [`MemStore`]: the same files a `DiskStore` holds
//! (`.agentx/state/delegations/issue-<n>.json`, `.agentx/agents/<name>.toml`), kept as bytes,
//! so parse errors and pretty-printing are the disk's.

use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::{ClarifyError, Config};

use crate::mem::MemStore;
use crate::paths;
use crate::store::Scope;
use crate::store_delegations::{
    add_manifest, delegation_read, manifest_agent, parse_delegations, DelegationRead,
    DelegationStore,
};

impl DelegationStore for MemStore {
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        self.file(&paths::delegation_path(issue))
            .map(|bytes| parse_delegations(issue, &bytes))
            .transpose()
    }

    fn update_delegations<T>(
        &self,
        issue: u32,
        _config: &Config,
        _agent: &str,
        mut decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let (write, result) = decide(self.read_delegations(issue)?)?;
        if let Some(ledger) = write {
            self.put(
                &paths::delegation_path(issue),
                Some(ledger.to_pretty_json().into_bytes()),
            );
        }
        Ok(result)
    }

    fn scan_delegations(&self, _scope: Scope) -> Result<Vec<DelegationRead>, ClarifyError> {
        Ok(self
            .issue_files(paths::DELEGATIONS_DIR)
            .into_iter()
            .map(|(n, _, bytes)| delegation_read(n, Ok(&bytes)))
            .collect())
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        let mut manifests = Manifests::new();
        for (name, bytes) in self.files_in(paths::AGENTS_DIR) {
            if let Some(agent) = manifest_agent(&name) {
                add_manifest(&mut manifests, agent, Ok(&bytes));
            }
        }
        Ok(manifests)
    }
}
