//! `AnyStore`: the file store or PostgreSQL behind one type, so a shell holds "the workspace's
//! store" without knowing which. Every method delegates.

use std::path::Path;

use agentx_clarify_command::{LedgerRead, RawLedger, Scope, Store};
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses, Workflows};
use agentx_clarify_pg::PgStore;
use agentx_clarify_store::DiskStore;

/// A workspace's store.
#[derive(Debug)]
pub enum AnyStore {
    Disk(DiskStore),
    Pg(PgStore),
}

impl AnyStore {
    /// The workspace root (its settings and workflows, whichever store holds its state).
    pub fn root(&self) -> &Path {
        match self {
            AnyStore::Disk(s) => s.root(),
            AnyStore::Pg(s) => s.root(),
        }
    }

    /// Where the state is, for messages: the state directory, or the database (no password).
    pub fn describe(&self) -> String {
        match self {
            AnyStore::Disk(s) => s
                .path(agentx_clarify_command::paths::STATE_DIR)
                .display()
                .to_string(),
            AnyStore::Pg(s) => s.target().to_owned(),
        }
    }
}

impl Store for AnyStore {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.load_config(),
            AnyStore::Pg(s) => s.load_config(),
        }
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.load_workflows(),
            AnyStore::Pg(s) => s.load_workflows(),
        }
    }

    fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.read_ledger(issue),
            AnyStore::Pg(s) => s.read_ledger(issue),
        }
    }

    fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.update_ledger(issue, config, agent, decide),
            AnyStore::Pg(s) => s.update_ledger(issue, config, agent, decide),
        }
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.read_statuses(),
            AnyStore::Pg(s) => s.read_statuses(),
        }
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.update_statuses(config, agent, change),
            AnyStore::Pg(s) => s.update_statuses(config, agent, change),
        }
    }

    fn scan<R: Send>(
        &self,
        scope: Scope,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.scan(scope, visit),
            AnyStore::Pg(s) => s.scan(scope, visit),
        }
    }

    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.raw_ledgers(),
            AnyStore::Pg(s) => s.raw_ledgers(),
        }
    }

    fn init(&self) -> Result<Vec<String>, ClarifyError> {
        match self {
            AnyStore::Disk(s) => s.init(),
            AnyStore::Pg(s) => s.init(),
        }
    }

    fn after_monitor(&self, config: &Config) {
        match self {
            AnyStore::Disk(s) => s.after_monitor(config),
            AnyStore::Pg(s) => s.after_monitor(config),
        }
    }
}
