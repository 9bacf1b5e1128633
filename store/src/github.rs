//! GitHub Mode's `[github]` settings, read from the workspace's settings file. Its sync state
//! (the comments a sync handled and its cursors) is the `github` state document
//! (`agentx_clarify_command::store::docs::GITHUB`), kept by whichever store holds the state.

use agentx_clarify_core::github::GithubConfig;
use agentx_clarify_core::ClarifyError;

use crate::read;
use crate::DiskStore;

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
}
