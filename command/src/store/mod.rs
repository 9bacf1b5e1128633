//! The store seam (docs/protocol.md §21) the command flow is written over, split by what
//! varies between deployments:
//!
//! - [`Files`] (`files.rs`): the workspace's files — settings, workflows, manifests, keys,
//!   personas, run logs. Always the workspace directory.
//! - [`State`] (`state.rs`): the shared state — ledgers of both kinds, statuses, leases and
//!   the change feed. The workspace directory, PostgreSQL or memory.
//!
//! A [`Store`] is both: `DiskStore` and `MemStore` are, and [`Sides`] joins a files side to
//! any state side (the workspace directory with PostgreSQL). A store decides nothing: every
//! decision is the core's, every step of a command is the command layer's; it makes each
//! change atomic with respect to every other writer (lock files and atomic renames, plain
//! ownership, transactions).
//!
//! A new store operation goes in the trait of its side, then in that side's file of each
//! store (`command/src/mem/`, `store/src/`, `store-pg/src/` for state) and as one line in
//! [`Sides`] and the picker's `AnyState`.

pub mod delegations;
pub mod feed;
pub mod files;
pub mod keys;
pub mod leases;
pub mod paths;
pub mod runs;
mod sides;
pub mod state;

pub use files::Files;
pub use sides::Sides;
pub use state::State;

use agentx_clarify_core::monitor::follow::AbandonCandidate;
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::{ClarifyError, Ledger};

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

/// Everything a command needs: a workspace's files and its state. Implemented for every type
/// that has both sides; nothing implements it by hand.
pub trait Store: Files + State {
    /// Creates what a new workspace needs (the default workflows and settings, the state
    /// area) without touching anything that exists; returns what it created.
    fn init(&self) -> Result<Vec<String>, ClarifyError> {
        let mut created = self.init_files()?;
        created.extend(self.init_state()?);
        Ok(created)
    }
}

impl<T: Files + State> Store for T {}

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
