//! Delegations on disk (SPEC §18): `.agentx/state/delegations/issue-<n>.json`, written exactly
//! as clarification ledgers are — under the file's cross-process lock, atomically, read with
//! `O_NOFOLLOW`, never overwritten when it does not parse — and the capability manifests
//! `.agentx/agents/<name>.toml`.

use std::path::PathBuf;

use agentx_clarify_command::paths;
use agentx_clarify_command::store_delegations::{
    add_manifest, delegation_read, manifest_agent, parse_delegations, DelegationRead,
    DelegationStore,
};
use agentx_clarify_command::Scope;
use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Config};

use crate::read::Links;
use crate::{io_error, parallel_map, read, read_into, write_atomic, DiskStore, FileLock};

impl DiskStore {
    /// `.agentx/state/delegations/issue-<n>.json`; `issue` is a validated number.
    pub fn delegation_path(&self, issue: u32) -> PathBuf {
        self.path(&paths::delegation_path(issue))
    }

    /// The delegation ledgers on disk, ascending by issue number (none when the directory
    /// does not exist yet).
    fn delegation_files(&self) -> Result<Vec<(u64, PathBuf)>, ClarifyError> {
        let dir = self.path(paths::DELEGATIONS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(u64, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let n = issue_of_file_name(entry.file_name().to_str()?)?;
                Some((n, entry.path()))
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// Removes temp files that crashed writers left among the delegation ledgers (best effort;
    /// after a monitor run that may write, like the clarifications' sweep).
    pub(crate) fn sweep_delegation_temps(&self, config: &Config) {
        crate::sweep::sweep_temp_files(
            &self.path(paths::DELEGATIONS_DIR),
            config.stale_lock_ms,
            &[],
        );
    }
}

impl DelegationStore for DiskStore {
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        read::read_existing(&self.delegation_path(issue), Links::Refuse, |bytes| {
            parse_delegations(issue, bytes)
        })
    }

    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let dir = self.path(paths::DELEGATIONS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))?;
        let path = self.delegation_path(issue);
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let current = self.read_delegations(issue)?;
        let (write, result) = decide(current)?;
        if let Some(ledger) = write {
            write_atomic(&path, ledger.to_pretty_json().as_bytes())?;
        }
        Ok(result)
    }

    fn scan_delegations(&self, _scope: Scope) -> Result<Vec<DelegationRead>, ClarifyError> {
        let files = self.delegation_files()?;
        Ok(parallel_map(&files, |(n, path)| {
            let mut bytes = Vec::new();
            let read = read_into(path, &mut bytes).map(|()| bytes.as_slice());
            delegation_read(*n, read)
        }))
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        let mut manifests = Manifests::new();
        let dir = self.path(paths::AGENTS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(manifests),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_owned();
                let agent = manifest_agent(&name)?.to_owned();
                Some((agent, entry.path()))
            })
            .collect();
        files.sort();
        for (agent, path) in files {
            let read = read::read_existing(&path, Links::Follow, |bytes| {
                add_manifest(&mut manifests, &agent, Ok(bytes));
                Ok(())
            });
            if let Err(e) = read {
                add_manifest(&mut manifests, &agent, Err(e));
            }
        }
        Ok(manifests)
    }
}
