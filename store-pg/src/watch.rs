//! How long a caller waits for the database (docs/protocol.md §32), and what it may say when
//! it stops waiting.
//!
//! The synchronous client has no timeout for a statement, and a database that is frozen
//! (SIGSTOP, a hung disk or network) enforces none of its own, so a caller that must answer in
//! time — `agentx serve`'s requests — runs each store call on a thread of its own under a
//! [`Watch`] and gives the call up when the database has shown no progress for `[store]
//! timeout_ms` ([`timeout`]). Progress is a connection obtained, a statement sequence done, a
//! batch of rows read: a long read that keeps streaming is not given up.
//!
//! Giving up must not turn "nothing was written" into a lie when the database wakes up: the
//! given-up call still runs to its end on its thread, so before every `COMMIT` it asks the
//! watch ([`begin_commit`]) and rolls back when the call was given up. What the caller may say
//! is therefore exact ([`Abandoned`]): nothing was written (no commit had begun), the outcome
//! of one commit is unknown (it was under way), or part of the call's changes was written
//! (a command writes its ledger, then its statuses, then what its monitor changed).
//!
//! Outside a watch (the CLI, the Node binding, the server's background tasks) nothing here
//! changes anything.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `[store] timeout_ms` when nobody set it.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;

static TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT_MS);

/// Sets `[store] timeout_ms` for this process: how long connecting may take, the longest a
/// write's statement may run on the server, and how long a watched call waits for progress.
pub fn set_timeout_ms(ms: u64) {
    TIMEOUT_MS.store(ms.max(1), Ordering::Relaxed);
}

/// `[store] timeout_ms` of this process (5 s until a shell sets it).
pub fn timeout() -> Duration {
    Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed))
}

const RUNNING: u8 = 0;
const COMMITTING: u8 = 1;
const GIVEN_UP: u8 = 2;

struct Inner {
    started: Instant,
    /// Milliseconds after `started` of the last progress.
    last: AtomicU64,
    state: AtomicU8,
    /// A commit of this call succeeded.
    wrote: AtomicBool,
}

/// One store call's progress, shared by the thread that runs it and the caller that waits.
#[derive(Clone)]
pub struct Watch(Arc<Inner>);

/// What a caller that gave a call up may say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandoned {
    /// No commit had begun, and none will: nothing was written.
    NothingWritten,
    /// A commit was under way: its change may or may not have been written.
    Committing,
    /// A commit had succeeded (the rest was not written): part of the change was written.
    PartlyWritten,
}

thread_local! {
    static CURRENT: RefCell<Option<Watch>> = const { RefCell::new(None) };
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new()
    }
}

impl Watch {
    /// A watch whose clock of progress starts now.
    pub fn new() -> Watch {
        Watch(Arc::new(Inner {
            started: Instant::now(),
            last: AtomicU64::new(0),
            state: AtomicU8::new(RUNNING),
            wrote: AtomicBool::new(false),
        }))
    }

    /// Runs `f` on this thread under the watch: the store calls it makes report to it.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let outer = CURRENT.with(|c| c.replace(Some(self.clone())));
        let out = f();
        CURRENT.with(|c| *c.borrow_mut() = outer);
        out
    }

    /// How long since the call last showed progress (or began).
    pub fn idle(&self) -> Duration {
        let last = Duration::from_millis(self.0.last.load(Ordering::SeqCst));
        self.0.started.elapsed().saturating_sub(last)
    }

    /// Gives the call up: from now on it commits nothing; what the caller may say of it.
    pub fn abandon(&self) -> Abandoned {
        match self
            .0
            .state
            .compare_exchange(RUNNING, GIVEN_UP, Ordering::SeqCst, Ordering::SeqCst)
        {
            Err(COMMITTING) => Abandoned::Committing,
            _ if self.0.wrote.load(Ordering::SeqCst) => Abandoned::PartlyWritten,
            _ => Abandoned::NothingWritten,
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.0.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.last.fetch_max(now, Ordering::SeqCst);
    }
}

fn with_current<T>(f: impl FnOnce(&Watch) -> T) -> Option<T> {
    CURRENT.with(|c| c.borrow().as_ref().map(f))
}

/// The database answered: the watched call (if any) is making progress.
pub(crate) fn progress() {
    with_current(Watch::touch);
}

/// About to send `COMMIT`: `false` when the watched call was given up (the caller must roll
/// back instead, so that "nothing was written" stays true).
pub(crate) fn begin_commit() -> bool {
    with_current(|w| {
        w.touch();
        w.0.state
            .compare_exchange(RUNNING, COMMITTING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
    .unwrap_or(true)
}

/// The `COMMIT` came back (`committed`: it succeeded).
pub(crate) fn end_commit(committed: bool) {
    with_current(|w| {
        if committed {
            w.0.wrote.store(true, Ordering::SeqCst);
        }
        w.touch();
        let _ =
            w.0.state
                .compare_exchange(COMMITTING, RUNNING, Ordering::SeqCst, Ordering::SeqCst);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_up_call_commits_nothing_and_the_caller_knows_what_was_written() {
        assert!(begin_commit(), "outside a watch every commit goes ahead");
        let w = Watch::new();
        w.run(|| {
            progress();
            assert!(begin_commit());
            end_commit(true);
        });
        assert_eq!(w.abandon(), Abandoned::PartlyWritten);
        assert!(!w.run(begin_commit), "given up: no more commits");

        let w = Watch::new();
        assert_eq!(w.abandon(), Abandoned::NothingWritten);
        assert!(!w.run(begin_commit));

        let w = Watch::new();
        assert!(w.run(begin_commit));
        assert_eq!(w.abandon(), Abandoned::Committing);
        assert!(begin_commit(), "the watch is this thread's only inside run");
    }

    #[test]
    fn progress_resets_the_idle_clock() {
        let w = Watch::new();
        std::thread::sleep(Duration::from_millis(30));
        assert!(w.idle() >= Duration::from_millis(30));
        w.run(progress);
        assert!(w.idle() < Duration::from_millis(30));
    }
}
