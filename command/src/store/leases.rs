//! Routing leases (docs/protocol.md §14.2 step 2): while a router runs a record's agent it holds the
//! record's lease, so two routers never both run (and answer) one record. A lease is not a
//! lock: no ledger lock is held while the agent runs, and a lease whose holder died or whose
//! time ran out is broken by the next router.

use crate::store::State;

/// Taking a lease: ours, or someone else's that is live.
#[derive(Debug)]
pub enum LeaseTake<L> {
    Taken(L),
    /// Held by a live router; `holder` names it for messages (`pid 123 on host`).
    Held {
        holder: String,
    },
}

/// A taken lease, released when dropped (also when the flow fails or unwinds).
pub struct LeaseGuard<'s, S: State> {
    store: &'s S,
    lease: Option<S::Lease>,
}

impl<'s, S: State> LeaseGuard<'s, S> {
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

impl<S: State> Drop for LeaseGuard<'_, S> {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            self.store.release_lease(lease);
        }
    }
}
