//! How the file store keeps each kind of ledger (`agentx_clarify_command::store::ledgers`):
//! the one read–decide–write path (`state.rs`) is written once over [`DiskKind`], which names
//! what differs between the kinds here — which index marks them, what a marker and the
//! follow-up's keys are, and the pass over them.

use std::path::PathBuf;

use agentx_clarify_command::store::ledgers::{Clarifications, Delegations, LedgerKind, Read};
use agentx_clarify_command::Scope;
use agentx_clarify_core::delegation::{next_wakeup, DelegationLedger};
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::index::Index;
use crate::DiskStore;

/// A kind of ledger as the file store keeps it.
pub(crate) trait DiskKind: LedgerKind {
    /// Whether a write of this kind is followed by a status update (so it leaves a mark for
    /// the repair rule, `pending.rs`).
    const STATUSES: bool;

    /// The index of this kind's ledgers (`.agentx/index/…`).
    fn index(store: &DiskStore) -> &Index;

    /// Whether a ledger keeps a marker in the index: the monitor may need to act on it.
    fn marked(ledger: &Self::Ledger) -> bool;

    /// The follow-up's keys of a ledger as read; one that could not be read is due at once,
    /// so every follow-up keeps reporting it.
    fn keys<E>(issue: u64, ledger: Result<&Self::Ledger, E>) -> Vec<PathBuf>;

    /// The pass over the ledgers of this kind that `scope` names (the index repaired on the
    /// way, as each kind's pass does).
    fn scan<R: Send>(
        store: &DiskStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<Self::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError>;
}

impl DiskKind for Clarifications {
    const STATUSES: bool = true;

    fn index(store: &DiskStore) -> &Index {
        &store.index
    }

    fn marked(ledger: &Ledger) -> bool {
        may_act(ledger)
    }

    fn keys<E>(issue: u64, ledger: Result<&Ledger, E>) -> Vec<PathBuf> {
        crate::pass::read_keys(issue, ledger)
    }

    fn scan<R: Send>(
        store: &DiskStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        store.scan_clarifications(scope, &visit)
    }
}

impl DiskKind for Delegations {
    const STATUSES: bool = false;

    fn index(store: &DiskStore) -> &Index {
        &store.delegation_index
    }

    fn marked(ledger: &DelegationLedger) -> bool {
        next_wakeup(ledger).is_some()
    }

    fn keys<E>(issue: u64, ledger: Result<&DelegationLedger, E>) -> Vec<PathBuf> {
        crate::delegations::delegation_keys(issue, ledger)
    }

    fn scan<R: Send>(
        store: &DiskStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<DelegationLedger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        Ok(store
            .scan_delegation_files(scope)?
            .into_iter()
            .map(visit)
            .collect())
    }
}
