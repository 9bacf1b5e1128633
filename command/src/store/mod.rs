//! The store seam (docs/protocol.md §21) the command flow is written over, split by what
//! varies between deployments:
//!
//! - [`Files`] (`files.rs`): the workspace's files — settings, workflows, manifests, keys,
//!   personas, run logs. Always the workspace directory.
//! - [`State`] (`state.rs`): the shared state — ledgers of both kinds (through one generic
//!   interface, [`Ledgers`] in `ledgers.rs`), statuses, leases, state documents and the
//!   change feed. The workspace directory, PostgreSQL or memory.
//!
//! A [`Store`] is both: `DiskStore` and `MemStore` are, and [`Sides`] joins a files side to
//! any state side (the workspace directory with PostgreSQL). A store decides nothing: every
//! decision is the core's, every step of a command is the command layer's; it makes each
//! change atomic with respect to every other writer (lock files and atomic renames, plain
//! ownership, transactions).
//!
//! A new store operation goes in the trait of its side (an operation on a ledger of either
//! kind in [`Ledgers`]), then in that side's file of each
//! store (`command/src/mem/`, `store/src/`, `store-pg/src/` for state) and as one line in
//! [`Sides`] and the picker's `AnyState`.

pub mod delegations;
pub mod docs;
pub mod feed;
pub mod files;
pub mod keys;
pub mod leases;
pub mod ledgers;
pub mod paths;
pub mod runs;
mod sides;
pub mod state;

pub use files::{with_people, Files};
pub use ledgers::{Clarifications, Delegations, LedgerKind, Ledgers};
pub use sides::Sides;
pub use state::State;

use agentx_clarify_core::monitor::follow::AbandonCandidate;
use agentx_clarify_core::{ClarifyError, Ledger};

/// Which ledgers a workspace pass needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Every ledger (`list`, `stats`, `ready`); the file store repairs its index on the way.
    All,
    /// Every ledger, as [`Scope::All`], changing nothing: for a reader that runs beside the
    /// writers after each of their changes (the notification deliverer, GitHub sync). The
    /// file store's repair rewrites its index's stamp and markers, which the next write
    /// invalidates again: a deliverer that repaired on every pass fought every writer for
    /// the index (issue 50 item 5: 4 decisions/s at 20,000 ledgers with the worker on).
    Read,
    /// `clarify monitor`: every ledger that can need action (docs/protocol.md §19). A store whose index of
    /// active records cannot be outdated (a database: every writer goes through its
    /// transactions) answers from it; a store whose files others may change (the file store)
    /// reads every ledger, and repairs its index on the way.
    Monitor,
    /// `clarify monitor --dry-run`: what [`Scope::Monitor`] reads, changing nothing — not even
    /// the file store's index, which a full pass repairs on the way (a dry run writes
    /// nothing; the next full pass repairs what needs it).
    MonitorDryRun,
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

/// One clarification ledger as a workspace pass reads it.
pub type LedgerRead = ledgers::Read<Ledger>;

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
