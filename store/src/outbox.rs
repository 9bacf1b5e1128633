//! The notification outbox's state in the file workspace: `.agentx/state/outbox.json`, read and
//! written under its own lock like the agent statuses. What is owed is found in the ledgers
//! (`agentx_clarify_core::notify::outbox`); this file keeps only what was tried.

use agentx_clarify_command::Files;
use agentx_clarify_core::notify::Outbox;
use agentx_clarify_core::ClarifyError;

use crate::atomic::write_atomic;
use crate::lock::FileLock;
use crate::read;
use crate::DiskStore;

/// The outbox state's file.
pub const OUTBOX: &str = ".agentx/state/outbox.json";

impl DiskStore {
    /// The outbox as it is now (empty when nothing was ever owed).
    pub fn read_outbox(&self) -> Result<Outbox, ClarifyError> {
        self.check_layout()?;
        let path = self.path(OUTBOX);
        let outbox = read::read_existing(&path, |bytes| {
            serde_json::from_slice::<Outbox>(bytes).map_err(|e| ClarifyError::LedgerCorrupt {
                file: String::from("outbox.json"),
                message: e.to_string(),
            })
        })?;
        Ok(outbox.unwrap_or_default())
    }

    /// Read–change–write of the outbox under its lock; nothing is written when `change`
    /// leaves it equal.
    pub fn update_outbox<T>(
        &self,
        agent: &str,
        change: impl FnOnce(&mut Outbox) -> T,
    ) -> Result<T, ClarifyError> {
        let config = self.load_config()?;
        // As the statuses' writer does: the state directory made (or checked) one component at
        // a time inside the workspace, never through a planted link (docs/protocol.md §31).
        crate::inside::make_dir(&self.path(agentx_clarify_command::paths::STATE_DIR))?;
        let path = self.path(OUTBOX);
        let _lock = FileLock::acquire(&path, agent, Self::policy(&config))?;
        let mut outbox = self.read_outbox()?;
        let before = outbox.clone();
        let result = change(&mut outbox);
        if outbox != before {
            let text =
                serde_json::to_string_pretty(&outbox).map_err(|e| ClarifyError::Internal {
                    message: format!("outbox.json: {e}"),
                })?;
            write_atomic(&path, format!("{text}\n").as_bytes())?;
        }
        Ok(result)
    }
}
