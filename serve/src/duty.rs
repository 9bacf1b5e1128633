//! Worker duties leased (docs/protocol.md §23.5): the monitor and the GitHub sync run on
//! whichever replica holds the duty's lease, taken through the state store's lease API (a lease
//! row with an expiry on PostgreSQL, the lease file on the file store) before a pass and
//! released after it. A replica that finds the duty held skips the pass; a replica killed
//! mid-pass loses the lease at once on the file store (its process is gone on this host) and
//! after [`TTL`] on PostgreSQL. The ledger's lock still keeps two passes from acting twice;
//! the lease keeps them from both running, so one replica's log says it ran a pass.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use agentx_clarify_command::{LeaseTake, State as _};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store_any::AnyState;

/// A duty: its name (the `agentx_duty{duty=...}` label) and the id of its lease.
pub struct Duty {
    pub name: &'static str,
    lease: &'static str,
}

/// Lease ids parse as clarification ids; issue 0 has no records (their sequences start at 1
/// on real issues), and `CLR-0-000` is `/readyz`'s probe, so the duties take the next two.
pub const MONITOR: Duty = Duty {
    name: "monitor",
    lease: "CLR-0-001",
};
/// The GitHub sync's lease (see [`MONITOR`] for why issue 0).
pub const GITHUB: Duty = Duty {
    name: "github",
    lease: "CLR-0-002",
};

/// How long a duty's lease lives when its holder dies without releasing it. A pass that
/// outlives it is not renewed: another replica may then start a pass of its own, and the
/// ledger's lock (every write is read–decide–write under it) keeps the two from acting twice
/// — the lease is there so one replica does the work, the lock so the work is done once.
/// 10 s, so that with [`HELD_LOOK`] a killed holder's duty moves within 15 s (issue 51); a
/// monitor pass over 100,000 ledgers takes about 2 s.
pub const TTL: Duration = Duration::from_secs(10);

/// How soon a worker that found a duty held looks again: a fifth of [`TTL`], so a killed
/// holder's duty moves within `TTL` and this.
pub const HELD_LOOK: Duration = Duration::from_secs(2);

/// Which duties this replica holds right now (`/metrics`' `agentx_duty`).
#[derive(Default)]
pub struct Held {
    monitor: AtomicBool,
    github: AtomicBool,
    /// How late this replica's last monitor pass began after the wake-up it was for (ms).
    monitor_lag_ms: AtomicI64,
}

impl Held {
    fn flag(&self, duty: &Duty) -> &AtomicBool {
        if duty.name == GITHUB.name {
            &self.github
        } else {
            &self.monitor
        }
    }

    /// Whether this replica holds `duty` at this instant.
    pub fn holds(&self, duty: &Duty) -> bool {
        self.flag(duty).load(Ordering::SeqCst)
    }

    /// A monitor pass for the wake-up due at `due` (epoch ms) began here at `began`.
    pub fn monitor_began(&self, due: i64, began: i64) {
        self.monitor_lag_ms
            .store((began - due).max(0), Ordering::SeqCst);
    }

    /// How late this replica's last monitor pass began after its wake-up, in seconds.
    pub fn monitor_lag_seconds(&self) -> f64 {
        self.monitor_lag_ms.load(Ordering::SeqCst) as f64 / 1000.0
    }
}

/// What came of a try at a duty's pass.
pub enum Ran<T> {
    /// This replica held the lease and ran the pass.
    Ran(T),
    /// Another holds the duty (its holder as the lease names it); the pass was skipped.
    Held(String),
}

/// Takes `duty`'s lease on `state`, runs `pass` while holding it, and releases it.
pub fn run<T>(
    state: &AnyState,
    duty: &Duty,
    held: &Held,
    pass: impl FnOnce() -> Result<T, ClarifyError>,
) -> Result<Ran<T>, ClarifyError> {
    let ttl_ms = u64::try_from(TTL.as_millis()).unwrap_or(u64::MAX);
    let lease = match state.take_lease(duty.lease, ttl_ms)? {
        LeaseTake::Taken(lease) => lease,
        LeaseTake::Held { holder } => return Ok(Ran::Held(holder)),
    };
    held.flag(duty).store(true, Ordering::SeqCst);
    if let Some(hold) = crate::test_hooks::pause(crate::test_hooks::DUTY_HOLD) {
        std::thread::sleep(hold);
    }
    let done = pass();
    held.flag(duty).store(false, Ordering::SeqCst);
    state.release_lease(lease);
    done.map(Ran::Ran)
}
