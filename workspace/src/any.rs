//! `AnyStore`: the file store or PostgreSQL behind one type, so a shell holds "the workspace's
//! store" without knowing which. Every method delegates.

use std::path::Path;

use agentx_clarify_command::store_delegations::{DelegationRead, DelegationStore, IssueWrite};
use agentx_clarify_command::store_keys::{KeyFile, KeyHalf, KeyStore};
use agentx_clarify_command::{
    Changed, FeedStore, LeaseStore, LeaseTake, LedgerRead, RawLedger, RunStore, Scope, Store,
};
use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses, Workflows};
use agentx_clarify_pg::{PgLease, PgStore};
use agentx_clarify_store::{DiskLease, DiskStore};
use serde_json::Value;

/// A workspace's store.
#[derive(Debug)]
pub enum AnyStore {
    Disk(DiskStore),
    Pg(PgStore),
}

/// A routing lease of either store.
#[derive(Debug)]
pub enum AnyLease {
    Disk(DiskLease),
    Pg(PgLease),
}

/// `$call` on whichever store `$self` is, as `$s`.
macro_rules! each {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            AnyStore::Disk($s) => $call,
            AnyStore::Pg($s) => $call,
        }
    };
}

impl AnyStore {
    /// The workspace root (its settings and workflows, whichever store holds its state).
    pub fn root(&self) -> &Path {
        each!(self, s => s.root())
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
        each!(self, s => s.load_config())
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        each!(self, s => s.load_workflows())
    }

    fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        each!(self, s => s.read_ledger(issue))
    }

    fn has_ledger(&self, issue: u32) -> Result<bool, ClarifyError> {
        each!(self, s => s.has_ledger(issue))
    }

    fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_ledger(issue, config, agent, decide))
    }

    fn update_ledger_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_ledger_bytes(issue, config, agent, decide))
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        each!(self, s => s.read_statuses())
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_statuses(config, agent, change))
    }

    fn scan<R: Send>(
        &self,
        scope: Scope,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        each!(self, s => s.scan(scope, visit))
    }

    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        each!(self, s => s.raw_ledgers())
    }

    fn init(&self) -> Result<Vec<String>, ClarifyError> {
        each!(self, s => s.init())
    }

    fn after_monitor(&self, config: &Config) {
        each!(self, s => s.after_monitor(config))
    }
}

impl DelegationStore for AnyStore {
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        each!(self, s => s.read_delegations(issue))
    }

    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_delegations(issue, config, agent, decide))
    }

    fn scan_delegations(&self, scope: Scope) -> Result<Vec<DelegationRead>, ClarifyError> {
        each!(self, s => s.scan_delegations(scope))
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        each!(self, s => s.load_manifests())
    }

    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_issue(issue, config, agent, decide))
    }
}

impl KeyStore for AnyStore {
    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        each!(self, s => s.key_files(half))
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        each!(self, s => s.create_key_pair(agent, public, secret))
    }
}

impl RunStore for AnyStore {
    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        each!(self, s => s.load_runner_config())
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        each!(self, s => s.read_persona(path))
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        each!(self, s => s.write_run_log(id, round, log))
    }
}

impl LeaseStore for AnyStore {
    type Lease = AnyLease;

    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<AnyLease>, ClarifyError> {
        let take = match self {
            AnyStore::Disk(s) => map_take(s.take_lease(id, ttl_ms)?, AnyLease::Disk),
            AnyStore::Pg(s) => map_take(s.take_lease(id, ttl_ms)?, AnyLease::Pg),
        };
        Ok(take)
    }

    fn release_lease(&self, lease: AnyLease) {
        match (self, lease) {
            (AnyStore::Disk(s), AnyLease::Disk(l)) => s.release_lease(l),
            (AnyStore::Pg(s), AnyLease::Pg(l)) => s.release_lease(l),
            // A lease is released by the store that took it; no other pairing is built.
            _ => {}
        }
    }

    fn lease_held(&self, id: &str) -> bool {
        each!(self, s => s.lease_held(id))
    }
}

fn map_take<L>(take: LeaseTake<L>, wrap: impl FnOnce(L) -> AnyLease) -> LeaseTake<AnyLease> {
    match take {
        LeaseTake::Taken(l) => LeaseTake::Taken(wrap(l)),
        LeaseTake::Held { holder } => LeaseTake::Held { holder },
    }
}

/// Where a reader of either store's change feed stands.
#[derive(Debug)]
pub enum AnyCursor {
    Disk(agentx_clarify_store::DiskCursor),
    Pg(Box<agentx_clarify_pg::PgCursor>),
}

impl FeedStore for AnyStore {
    type Cursor = AnyCursor;

    fn feed(&self) -> Result<AnyCursor, ClarifyError> {
        Ok(match self {
            AnyStore::Disk(s) => AnyCursor::Disk(s.feed()?),
            AnyStore::Pg(s) => AnyCursor::Pg(Box::new(s.feed()?)),
        })
    }

    fn revision(&self, cursor: &AnyCursor) -> u64 {
        match (self, cursor) {
            (AnyStore::Disk(s), AnyCursor::Disk(c)) => s.revision(c),
            (AnyStore::Pg(s), AnyCursor::Pg(c)) => s.revision(c),
            _ => 0,
        }
    }

    fn changes(&self, cursor: &mut AnyCursor) -> Result<Option<Changed>, ClarifyError> {
        match (self, cursor) {
            (AnyStore::Disk(s), AnyCursor::Disk(c)) => s.changes(c),
            (AnyStore::Pg(s), AnyCursor::Pg(c)) => s.changes(c),
            _ => Err(ClarifyError::Internal {
                message: String::from("a change feed cursor of another store"),
            }),
        }
    }

    fn wait_changes(&self, cursor: &mut AnyCursor, timeout: std::time::Duration) -> bool {
        match (self, cursor) {
            (AnyStore::Disk(s), AnyCursor::Disk(c)) => s.wait_changes(c, timeout),
            (AnyStore::Pg(s), AnyCursor::Pg(c)) => s.wait_changes(c, timeout),
            _ => false,
        }
    }
}
