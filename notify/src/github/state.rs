//! The sync state (`github` state document: `.agentx/state/github.json`, or the `github` row
//! of PostgreSQL's `agentx.state_docs`) as the shell reads and changes it: each change is a
//! read–change–write under the store's exclusion, so two syncs and two deliverers (two
//! servers, a server and a cron) never lose each other's change.

use agentx_clarify_command::store::docs;
use agentx_clarify_command::Files;
use agentx_clarify_core::github::SyncState;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore;

use super::client::GhError;
use super::rest::CommentIds;

/// The sync state of one workspace, changed as `me` (a deliverer's name, for lock files).
pub struct SyncDoc<'a> {
    pub store: &'a WorkspaceStore,
    pub me: &'a str,
}

impl SyncDoc<'_> {
    /// The state as it is now: empty before the first sync.
    pub fn read(&self) -> Result<SyncState, ClarifyError> {
        docs::read_json(self.store, docs::GITHUB)
    }

    /// Read–change–write under the store's exclusion (nothing written when unchanged).
    pub fn update<T>(&self, change: impl FnOnce(&mut SyncState) -> T) -> Result<T, ClarifyError> {
        let config = self.store.load_config()?;
        docs::update_json(self.store, docs::GITHUB, &config, self.me, change)
    }
}

fn failed(e: ClarifyError) -> GhError {
    GhError::Failed(e.to_string())
}

impl CommentIds for SyncDoc<'_> {
    fn known(&self, record: &str) -> Result<Option<u64>, GhError> {
        Ok(self.read().map_err(failed)?.comments.get(record).copied())
    }

    fn adopt(&self, record: &str, comment: u64) -> Result<u64, GhError> {
        self.update(|s| s.adopt(record, comment)).map_err(failed)
    }

    fn forget(&self, record: &str, comment: u64) -> Result<(), GhError> {
        self.update(|s| s.forget(record, comment)).map_err(failed)
    }
}
