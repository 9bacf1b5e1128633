//! `AnyState`: the file store's state or PostgreSQL behind one type, and `AnyStore`, the
//! workspace directory's files joined to it — so a shell holds "the workspace's store" without
//! knowing where its state is. Only the state side varies (docs/protocol.md §21): the files
//! are always the workspace directory's, so only [`State`]'s methods are dispatched here.

use std::sync::Arc;

use agentx_clarify_command::store::delegations::IssueWrite;
use agentx_clarify_command::store::ledgers::{DueTimes, LedgerKind, Ledgers, Read};
use agentx_clarify_command::{Changed, LeaseTake, RawLedger, Scope, Sides, State};
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses};
use agentx_clarify_pg::{PgLease, PgStore};
use agentx_clarify_store::{DiskLease, DiskStore};

/// A workspace's store: its directory's files, and its state wherever it is.
pub type AnyStore = Sides<DiskStore, AnyState>;

/// Where a workspace's state is. Shared, not copied, by its clones: a long-lived process that
/// reads its settings again keeps the state it opened (its connections, its caches) while the
/// settings still put the state there.
#[derive(Clone, Debug)]
pub enum AnyState {
    /// `.agentx/state/` of the workspace directory.
    Disk(Arc<DiskStore>),
    /// A PostgreSQL database.
    Pg(Arc<PgStore>),
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
            AnyState::Disk($s) => $call,
            AnyState::Pg($s) => $call,
        }
    };
}

impl AnyState {
    /// Where the state is, for messages: the state directory, or the database (no password).
    pub fn describe(&self) -> String {
        match self {
            AnyState::Disk(s) => s
                .path(agentx_clarify_command::paths::STATE_DIR)
                .display()
                .to_string(),
            AnyState::Pg(s) => s.target().to_owned(),
        }
    }
}

/// Ledgers of either kind, from whichever store holds them.
impl<K: LedgerKind> Ledgers<K> for AnyState
where
    DiskStore: Ledgers<K>,
    PgStore: Ledgers<K>,
{
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError> {
        each!(self, s => s.read(issue))
    }

    fn has(&self, issue: u32) -> Result<bool, ClarifyError> {
        each!(self, s => s.has(issue))
    }

    fn update<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update(issue, config, agent, decide))
    }

    fn update_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_bytes(issue, config, agent, decide))
    }

    fn scan_ledgers<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        each!(self, s => s.scan_ledgers(scope, visit))
    }

    fn due_times(&self) -> Result<DueTimes, ClarifyError> {
        each!(self, s => Ledgers::<K>::due_times(&**s))
    }
}

impl State for AnyState {
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        each!(self, s => s.raw_ledgers())
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

    type Lease = AnyLease;

    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<AnyLease>, ClarifyError> {
        let take = match self {
            AnyState::Disk(s) => map_take(s.take_lease(id, ttl_ms)?, AnyLease::Disk),
            AnyState::Pg(s) => map_take(s.take_lease(id, ttl_ms)?, AnyLease::Pg),
        };
        Ok(take)
    }

    fn release_lease(&self, lease: AnyLease) {
        match (self, lease) {
            (AnyState::Disk(s), AnyLease::Disk(l)) => s.release_lease(l),
            (AnyState::Pg(s), AnyLease::Pg(l)) => s.release_lease(l),
            // A lease is released by the store that took it; no other pairing is built.
            _ => {}
        }
    }

    fn lease_held(&self, id: &str) -> bool {
        each!(self, s => s.lease_held(id))
    }

    type Cursor = AnyCursor;

    fn feed(&self) -> Result<AnyCursor, ClarifyError> {
        Ok(match self {
            AnyState::Disk(s) => AnyCursor::Disk(s.feed()?),
            AnyState::Pg(s) => AnyCursor::Pg(Box::new(s.feed()?)),
        })
    }

    fn revision(&self, cursor: &AnyCursor) -> u64 {
        match (self, cursor) {
            (AnyState::Disk(s), AnyCursor::Disk(c)) => s.revision(c),
            (AnyState::Pg(s), AnyCursor::Pg(c)) => s.revision(c),
            _ => 0,
        }
    }

    fn changes(&self, cursor: &mut AnyCursor) -> Result<Option<Changed>, ClarifyError> {
        match (self, cursor) {
            (AnyState::Disk(s), AnyCursor::Disk(c)) => s.changes(c),
            (AnyState::Pg(s), AnyCursor::Pg(c)) => s.changes(c),
            _ => Err(ClarifyError::Internal {
                message: String::from("a change feed cursor of another store"),
            }),
        }
    }

    fn wake(&self, cursor: &mut AnyCursor) -> Option<agentx_clarify_command::Wake> {
        match (self, cursor) {
            (AnyState::Disk(s), AnyCursor::Disk(c)) => s.wake(c),
            (AnyState::Pg(s), AnyCursor::Pg(c)) => s.wake(c),
            _ => None,
        }
    }

    fn after_monitor(&self, config: &Config) {
        each!(self, s => s.after_monitor(config))
    }

    fn search_index(
        &self,
        probe: &agentx_clarify_core::search::probe::Probe,
    ) -> Option<agentx_clarify_core::search::probe::Candidates> {
        each!(self, s => s.search_index(probe))
    }

    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        each!(self, s => s.read_doc(name))
    }

    fn update_doc<T>(
        &self,
        name: &str,
        config: &Config,
        agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        each!(self, s => s.update_doc(name, config, agent, change))
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
