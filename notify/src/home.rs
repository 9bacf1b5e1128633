//! Where a workspace's outbox lives — beside the ledgers it follows, as the `outbox` state
//! document of whichever store holds the state (docs/protocol.md §21): the file store's
//! `.agentx/state/outbox.json` under its own lock, or PostgreSQL's `agentx.state_docs` row
//! under its row lock. Every part that reads or changes the outbox (the delivery pass,
//! `notify status` and `retry`, the inbox, `clarify wakeup`) goes through here, so a
//! PostgreSQL team's deliverers share one outbox wherever they run.

use agentx_clarify_command::store::docs::{self, OUTBOX};
use agentx_clarify_command::{Scope, Store};
use agentx_clarify_core::notify::Outbox;
use agentx_clarify_core::{ClarifyError, Ledger};

/// The outbox of a workspace's store (the workspace handle's, `Workspace::store`), in
/// whichever store holds its state.
pub struct Home<'s, S>(pub &'s S);

impl<S: Store> Home<'_, S> {
    /// The store itself (GitHub Mode keeps its comment ids in its `github` state document).
    pub fn store(&self) -> &S {
        self.0
    }

    /// The outbox as it is now (empty when nothing was ever owed).
    pub fn read_outbox(&self) -> Result<Outbox, ClarifyError> {
        docs::read_json(self.0, OUTBOX)
    }

    /// Read–change–write of the outbox under its lock; nothing is written when `change`
    /// leaves it equal.
    pub fn update_outbox<T>(
        &self,
        agent: &str,
        change: impl FnOnce(&mut Outbox) -> T,
    ) -> Result<T, ClarifyError> {
        let config = self.0.load_config()?;
        docs::update_json(self.0, OUTBOX, &config, agent, change)
    }

    /// Every readable ledger (what the outbox owes is found in them).
    pub fn ledgers(&self) -> Result<Vec<Ledger>, ClarifyError> {
        let read = self.0.scan(Scope::Read, |read| read.ledger.ok())?;
        Ok(read.into_iter().flatten().collect())
    }

    /// One ledger as it is now.
    pub fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        self.0.read_ledger(issue)
    }
}
