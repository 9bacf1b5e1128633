//! The **state** side of a workspace (docs/protocol.md §21): what agents and people change
//! through the hub and every copy of the hub must see the same — clarification and delegation
//! ledgers (through one generic interface, `ledgers.rs`), agent statuses, routing leases, and
//! the change feed over them. The workspace's
//! `.agentx/state/` (`DiskStore`), PostgreSQL (`PgStore`) or memory (`MemStore`).
//!
//! Every `update_*` is one atomic read–decide–write: the closure gets the current value,
//! freshly read under whatever excludes other writers, and may be called again if the store
//! retries (a database after a serialization failure), so it must be a pure function of its
//! argument.

use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::search::probe::{Candidates, Probe};
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses};

use crate::store::delegations::{DelegationRead, IssueWrite};
use crate::store::feed::{Changed, Wake};
use crate::store::leases::LeaseTake;
use crate::store::ledgers::{Clarifications, Delegations, Ledgers};
use crate::store::{LedgerRead, RawLedger, Scope};

/// A workspace's shared state. Ledgers of both kinds are its [`Ledgers`] of each kind (one
/// generic interface, `ledgers.rs`); the named methods below are those, spelled for callers.
pub trait State: Ledgers<Clarifications> + Ledgers<Delegations> {
    // Clarification ledgers.

    /// The ledger of `issue`, if there is one ([`Ledgers::read`]).
    fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        Ledgers::<Clarifications>::read(self, issue)
    }

    /// Whether `issue` has a ledger, without reading it ([`Ledgers::has`]).
    fn has_ledger(&self, issue: u32) -> Result<bool, ClarifyError> {
        Ledgers::<Clarifications>::has(self, issue)
    }

    /// Read–decide–write on one ledger ([`Ledgers::update`]).
    fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        Ledgers::<Clarifications>::update(self, issue, config, agent, decide)
    }

    /// Read–decide–write on one ledger file's bytes as stored ([`Ledgers::update_bytes`]).
    fn update_ledger_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        Ledgers::<Clarifications>::update_bytes(self, issue, config, agent, decide)
    }

    /// Visits the ledgers `scope` names ([`Ledgers::scan_ledgers`]).
    fn scan<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        Ledgers::<Clarifications>::scan_ledgers(self, scope, visit)
    }

    /// Every ledger file's raw bytes, ascending by issue number.
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError>;

    // Delegation ledgers (docs/protocol.md §18).

    /// The delegation ledger of `issue`, if there is one ([`Ledgers::read`]).
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        Ledgers::<Delegations>::read(self, issue)
    }

    /// Read–decide–write on one delegation ledger ([`Ledgers::update`]). It may be called
    /// while the issue's clarification ledger is held, never the other way round.
    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        Ledgers::<Delegations>::update(self, issue, config, agent, decide)
    }

    /// The delegation ledgers `scope` names ([`Ledgers::scan_ledgers`]).
    fn scan_delegations(&self, scope: Scope<'_>) -> Result<Vec<DelegationRead>, ClarifyError> {
        Ledgers::<Delegations>::scan_ledgers(self, scope, |read| read)
    }

    /// Read–decide–write on both ledgers of `issue`: the clarification ledger is held, then
    /// the delegation ledger (always in this order, so two writers never wait on each other),
    /// `decide` sees both as they are, and what it returns is written — the delegation ledger
    /// first, then the clarification ledger, each atomically. A store with transactions writes
    /// both in one.
    ///
    /// If the clarification write fails after the delegation write succeeded, the blocks that
    /// changed the delegation ledger are applied and those that changed the clarification
    /// ledger are not; the error is returned. Every caller is idempotent (a block's key is on
    /// what it wrote), so running the command again applies exactly the rest.
    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_ledger(issue, config, agent, |ledger| {
            self.update_delegations(issue, config, agent, |delegations| {
                let (write_ledger, write_delegations, result) =
                    decide(ledger.as_ref(), delegations.as_ref())?;
                Ok((write_delegations, (write_ledger, result)))
            })
        })
    }

    // Agent statuses.

    /// The agent statuses (empty when there are none yet).
    fn read_statuses(&self) -> Result<Statuses, ClarifyError>;

    /// Read–change–write of the agent statuses, excluding every other writer of them; nothing
    /// is written when `change` leaves them equal.
    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError>;

    // Routing leases (docs/protocol.md §14.2 step 2; `leases.rs`).

    /// What releasing needs to know (a file store: the lease's path and exact content).
    type Lease;

    /// Takes the lease of record `id` for `ttl_ms` milliseconds (the runner's timeout plus a
    /// margin). A lease whose holder is gone or whose expiry passed is broken first.
    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<Self::Lease>, ClarifyError>;

    /// Releases a lease taken here (if it is still this one: a lease broken as expired and
    /// taken by another router is left alone). Best effort, never fails.
    fn release_lease(&self, lease: Self::Lease);

    /// Whether a live lease is held on `id` right now (by anyone), for `route --all` to skip
    /// without trying.
    fn lease_held(&self, id: &str) -> bool;

    // The change feed (docs/protocol.md §21; `feed.rs`).

    /// Where a reader stands: the revision it has seen, and what the store needs to tell what
    /// came after it.
    type Cursor: Send;

    /// A cursor at the current revision: what was written before it is never reported.
    fn feed(&self) -> Result<Self::Cursor, ClarifyError>;

    /// The revision `cursor` has reached.
    fn revision(&self, cursor: &Self::Cursor) -> u64;

    /// What was written after the cursor's revision (`None`: nothing), each write reported
    /// once; the cursor moves to the returned revision.
    fn changes(&self, cursor: &mut Self::Cursor) -> Result<Option<Changed>, ClarifyError>;

    /// The cursor's wake handle ([`Wake`]): it fires whenever a write may have been made by
    /// any process (the file store: the kernel's file events; PostgreSQL: `NOTIFY`), so its
    /// reader looks at [`State::changes`] then instead of on a timer. The same handle each
    /// time for one cursor; it stops when the cursor is dropped. `None`: the store cannot
    /// signal here (memory; files where watching is unavailable or turned off), and its
    /// reader looks after a pause of its own.
    fn wake(&self, _cursor: &mut Self::Cursor) -> Option<Wake> {
        None
    }

    // Named state documents: the notification outbox, GitHub Mode's sync cursors.
    /// The text of state document `name` (`None`: never written). Typed reads and writes are
    /// [`docs::read_json`](crate::store::docs::read_json) and
    /// [`docs::update_json`](crate::store::docs::update_json).
    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError>;

    /// Read–change–write of state document `name`, excluding every other writer of it;
    /// `change` returns the text to write (`None`: leave it as it is) and a result.
    fn update_doc<T>(
        &self,
        name: &str,
        config: &Config,
        agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    // Set-up and housekeeping.

    /// Creates what the state needs in a new workspace (a database's schema is made by
    /// `agentx store init`, so a database store creates nothing); returns what it created.
    fn init_state(&self) -> Result<Vec<String>, ClarifyError> {
        Ok(Vec::new())
    }

    /// Housekeeping after a monitor run that may write (a file store removes the temp files
    /// of writers that crashed). Best effort, never fails a command.
    fn after_monitor(&self, _config: &Config) {}

    /// The store's own search engine (docs/protocol.md §36): the best candidates of `probe`,
    /// ranked by the core's key, or `None` when the store has none or cannot use it now (a
    /// missing, outdated or locked index) — the caller then scans, which gives the same
    /// answer more slowly. An index is never needed for a correct answer.
    fn search_index(&self, _probe: &Probe) -> Option<Candidates> {
        None
    }
}
