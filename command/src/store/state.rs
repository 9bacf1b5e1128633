//! The **state** side of a workspace (docs/protocol.md §21): what agents and people change
//! through the hub and every copy of the hub must see the same — clarification and delegation
//! ledgers, agent statuses, routing leases, and the change feed over them. The workspace's
//! `.agentx/state/` (`DiskStore`), PostgreSQL (`PgStore`) or memory (`MemStore`).
//!
//! Every `update_*` is one atomic read–decide–write: the closure gets the current value,
//! freshly read under whatever excludes other writers, and may be called again if the store
//! retries (a database after a serialization failure), so it must be a pure function of its
//! argument.

use core::time::Duration;

use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses};

use crate::store::delegations::{DelegationRead, IssueWrite};
use crate::store::feed::Changed;
use crate::store::leases::LeaseTake;
use crate::store::{LedgerRead, RawLedger, Scope};

/// A workspace's shared state.
pub trait State {
    // Clarification ledgers.

    /// The ledger of `issue`, if there is one. A ledger that does not parse is
    /// `LEDGER_CORRUPT` and is never overwritten.
    fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError>;

    /// Whether `issue` has a ledger, without reading it: a command that needs only this
    /// (an ask deciding whether to validate before its first write) must not pay for
    /// parsing a ledger of hundreds of records. Errors as `read_ledger`'s for what is at the
    /// path (a FIFO, a directory); a ledger that does not parse is found by the update.
    fn has_ledger(&self, issue: u32) -> Result<bool, ClarifyError> {
        Ok(self.read_ledger(issue)?.is_some())
    }

    /// Read–decide–write on one ledger, excluding every other writer of it. `decide` returns
    /// what to write (if anything) and a result. `agent` names the holder in lock files.
    fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// Read–decide–write on one ledger file's bytes as stored (for `migrate`, which must see
    /// what another tool wrote: a BOM, its layout, its spellings), excluding every other
    /// writer of it. `decide` gets the bytes (`None`: no file) and returns what to write.
    fn update_ledger_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// Visits the ledgers `scope` names, ascending by issue number, and returns what `visit`
    /// made of each, in that order. A store may visit in parallel.
    fn scan<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError>;

    /// Every ledger file's raw bytes, ascending by issue number.
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError>;

    // Delegation ledgers (docs/protocol.md §18).

    /// The delegation ledger of `issue`, if there is one. One that does not parse is
    /// `LEDGER_CORRUPT` and is never overwritten.
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError>;

    /// Read–decide–write on one delegation ledger, excluding every other writer of it (and of
    /// nothing else: it may be called while the issue's clarification ledger is held, never
    /// the other way round). Like `Store::update_ledger`, `decide` may run again on a retry.
    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// The delegation ledgers `scope` names (a store without an index gives all of them),
    /// ascending by issue number.
    fn scan_delegations(&self, scope: Scope<'_>) -> Result<Vec<DelegationRead>, ClarifyError>;

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

    /// Waits at most `timeout` for the store to signal a write, and says whether one came. A
    /// store without signals (files, memory) returns `false` at once: its reader looks again
    /// after a pause of its own.
    fn wait_changes(&self, _cursor: &mut Self::Cursor, _timeout: Duration) -> bool {
        false
    }

    // Set-up and housekeeping.

    /// Creates what the state needs in a new workspace (a database's schema is made by
    /// `agentx store init`, so a database store creates nothing); returns what it created.
    fn init_state(&self) -> Result<Vec<String>, ClarifyError> {
        Ok(Vec::new())
    }

    /// Housekeeping after a monitor run that may write (a file store removes the temp files
    /// of writers that crashed). Best effort, never fails a command.
    fn after_monitor(&self, _config: &Config) {}
}
