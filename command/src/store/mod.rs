//! The store abstraction the command flow is written over. A store holds a workspace's state
//! (settings, workflows, ledgers, agent statuses) and makes each change atomic with respect to
//! every other writer: `DiskStore` with lock files and atomic renames, `MemStore` with plain
//! ownership, a database store with transactions. It decides nothing: every decision is the
//! core's, every step of a command is the command layer's.

pub mod delegations;
pub mod feed;
pub mod keys;
pub mod leases;
pub mod runs;

use agentx_clarify_core::monitor::follow::AbandonCandidate;
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses, Workflows};

/// Which ledgers a workspace pass needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Every ledger (`list`, `stats`, `ready`).
    All,
    /// `clarify monitor`: every ledger that can need action (docs/protocol.md §19). A store whose index of
    /// active records cannot be outdated (a database: every writer goes through its
    /// transactions) answers from it; a store whose files others may change (the file store)
    /// reads every ledger, and repairs its index on the way.
    Monitor,
    /// The monitor that follows a command: only ledgers that can need action now or because
    /// of this command (docs/protocol.md §29) — the one just written, those due at `now` (a pending or
    /// stale record's `staleAfter`, an accepted delegation's deadline; a ledger that could
    /// not be read), those whose wait-for edges hold a cycle, and those whose keys name a
    /// requester among `candidates` with an ask before its status changed
    /// (`agentx_clarify_core::monitor::follow`). A store without such an index gives every
    /// ledger, which is always correct, only slower.
    FollowUp {
        /// The ledger the command wrote, if any.
        written: Option<u32>,
        /// The command holds the written ledger as it wrote it, so the store need not read
        /// it (for a ledger of hundreds of records that is most of the pass). A store may
        /// visit it all the same; the monitor ignores that visit.
        held: bool,
        /// The pass's instant: what is due by then is read.
        now: i64,
        /// The agents whose status may abandon their records (`abandon_candidates`).
        candidates: &'a [AbandonCandidate],
    },
}

/// One ledger as a workspace pass reads it.
#[derive(Debug)]
pub struct LedgerRead {
    /// The issue number of its name (may exceed 2^31−1: such files are reported, not read).
    pub issue: u64,
    /// Its name as reports show it (`issue-<n>.json`).
    pub file: String,
    /// The parsed ledger, or why it could not be read.
    pub ledger: Result<Ledger, ReportError>,
}

/// A ledger file's name and its raw bytes, or why they could not be read (`verify` reports
/// unparseable files as problems, so it wants bytes, not ledgers).
pub type RawLedger = (String, Result<Vec<u8>, ClarifyError>);

/// What a command needs from the place a workspace lives. Every `update_*` is one atomic
/// read–decide–write: the closure gets the current value, freshly read under whatever
/// excludes other writers, and may be called again if the store retries (a database after a
/// serialization failure), so it must be a pure function of its argument.
pub trait Store {
    /// `.agentx/config.toml`; defaults when absent.
    fn load_config(&self) -> Result<Config, ClarifyError>;

    /// Every workflow (parsed lazily, when a request uses it).
    fn load_workflows(&self) -> Result<Workflows, ClarifyError>;

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

    /// Visits the ledgers `scope` names, ascending by issue number, and returns what `visit`
    /// made of each, in that order. A store may visit in parallel.
    fn scan<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError>;

    /// Every ledger file's raw bytes, ascending by issue number.
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError>;

    /// Creates what a new workspace needs (the default workflows and settings, the state
    /// area) without touching anything that exists; returns what it created.
    fn init(&self) -> Result<Vec<String>, ClarifyError>;

    /// Housekeeping after a monitor run that may write (a file store removes the temp files
    /// of writers that crashed). Best effort, never fails a command.
    fn after_monitor(&self, _config: &Config) {}
}

/// A ledger file read by a workspace pass: its name's number is checked, then its bytes are
/// parsed; either failure becomes a report error naming the file.
pub fn ledger_read(issue: u64, file: String, bytes: Result<&[u8], ClarifyError>) -> LedgerRead {
    ledger_read_by(issue, file, |file, issue| {
        bytes.and_then(|b| Ledger::parse(file, b, Some(issue)))
    })
}

/// [`ledger_read`] for a store that does not keep a ledger as one file's bytes: `parse` gets
/// the name and the (checked) issue number and reads the ledger its own way.
pub fn ledger_read_by(
    issue: u64,
    file: String,
    parse: impl FnOnce(&str, u32) -> Result<Ledger, ClarifyError>,
) -> LedgerRead {
    let fail = |e: ClarifyError| ReportError::new(file.as_str(), &e);
    let ledger = match u32::try_from(issue)
        .ok()
        .filter(|n| u64::from(*n) <= MAX_ISSUE)
    {
        None => Err(fail(ClarifyError::InvalidIssue {
            value: issue.to_string(),
        })),
        Some(n) => parse(&file, n).map_err(fail),
    };
    LedgerRead {
        issue,
        file,
        ledger,
    }
}
