//! GitHub Mode's state in the file workspace: `.agentx/state/github.json` (the comments a sync
//! handled and its cursors, `agentx_clarify_core::github::SyncState`), read and written under
//! its own lock like the outbox; and the `[github]` settings.

use agentx_clarify_command::Files;
use agentx_clarify_core::github::{GithubConfig, SyncState};
use agentx_clarify_core::ClarifyError;

use crate::atomic::write_atomic;
use crate::lock::FileLock;
use crate::read;
use crate::DiskStore;

/// The sync state's file.
pub const GITHUB_STATE: &str = ".agentx/state/github.json";

impl DiskStore {
    /// The `[github]` table of the settings; `None` without one (or without a settings file).
    pub fn github_config(&self) -> Result<Option<GithubConfig>, ClarifyError> {
        let path = self.path(agentx_clarify_command::paths::CONFIG);
        let file = self.relative(&path);
        self.check_layout()?;
        let found = read::read_small(&path, |bytes| {
            agentx_clarify_core::github::parse_github(&file, bytes)
        })?;
        Ok(found.flatten())
    }

    /// The sync state as it is now (empty before the first sync).
    pub fn read_github_state(&self) -> Result<SyncState, ClarifyError> {
        self.check_layout()?;
        let path = self.path(GITHUB_STATE);
        let state = read::read_existing(&path, |bytes| {
            serde_json::from_slice::<SyncState>(bytes).map_err(|e| ClarifyError::LedgerCorrupt {
                file: String::from("github.json"),
                message: e.to_string(),
            })
        })?;
        Ok(state.unwrap_or_default())
    }

    /// Read–change–write of the sync state under its lock; nothing is written when `change`
    /// leaves it equal.
    pub fn update_github_state<T>(
        &self,
        agent: &str,
        change: impl FnOnce(&mut SyncState) -> T,
    ) -> Result<T, ClarifyError> {
        let config = self.load_config()?;
        // Made one component at a time inside the workspace, never through a planted link.
        crate::inside::make_dir(&self.path(agentx_clarify_command::paths::STATE_DIR))?;
        let path = self.path(GITHUB_STATE);
        let _lock = FileLock::acquire(&path, agent, Self::policy(&config))?;
        let mut state = self.read_github_state()?;
        let before = state.clone();
        let result = change(&mut state);
        if state != before {
            let text =
                serde_json::to_string_pretty(&state).map_err(|e| ClarifyError::Internal {
                    message: format!("github.json: {e}"),
                })?;
            write_atomic(&path, format!("{text}\n").as_bytes())?;
        }
        Ok(result)
    }
}
