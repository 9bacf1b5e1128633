//! Routing leases (docs/protocol.md §14.2 step 2): while a router runs a record's agent it holds the
//! record's lease, so two routers never both run (and answer) one record. A lease is not a
//! lock: no ledger lock is held while the agent runs, and a lease whose holder died or whose
//! time ran out is broken by the next router.

use agentx_clarify_core::ClarifyError;

use crate::store::Store;

/// Taking a lease: ours, or someone else's that is live.
#[derive(Debug)]
pub enum LeaseTake<L> {
    Taken(L),
    /// Held by a live router; `holder` names it for messages (`pid 123 on host`).
    Held {
        holder: String,
    },
}

/// A store that keeps routing leases.
pub trait LeaseStore: Store {
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
}

/// A taken lease, released when dropped (also when the flow fails or unwinds).
pub struct LeaseGuard<'s, S: LeaseStore> {
    store: &'s S,
    lease: Option<S::Lease>,
}

impl<'s, S: LeaseStore> LeaseGuard<'s, S> {
    pub fn new(store: &'s S, lease: S::Lease) -> Self {
        LeaseGuard {
            store,
            lease: Some(lease),
        }
    }

    /// Releases now (docs/protocol.md §14.2 step 7: before the follow-up monitor).
    pub fn release(mut self) {
        if let Some(lease) = self.lease.take() {
            self.store.release_lease(lease);
        }
    }
}

impl<S: LeaseStore> Drop for LeaseGuard<'_, S> {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            self.store.release_lease(lease);
        }
    }
}
