//! Giving freed memory back to the system (issue 50 item 11).
//!
//! The `agentx` binary's allocator (mimalloc) keeps what a thread frees in that thread's own
//! segments, and returns it to the system lazily: when that same thread allocates or frees
//! again after a delay; the segments of a thread that ended wait until another thread takes
//! them over. A server's large reads (every ledger, for `list`, `stats`, a page of finished
//! records) run on many threads — the blocking pool's, and the helpers of each pass — that
//! then sit idle or end, so nothing ever looked again: RSS grew over a soak and stayed there
//! when the server went quiet (docs/benchmarks.md, "Memory after a soak").
//!
//! The server knows when a thread is done with its work, so it asks then: after a store call
//! on the blocking pool, when an async worker is about to park, and before any of its threads
//! stops — at most once a second per thread, or at once after a long store call (the call
//! purges, and what it purges a busy thread faults in again). A blocking thread idle for a
//! second ends, so what other threads freed into it (the response it built) comes back too.
//! What the call does is the binary's ([`crate::Options::give_back`]): this crate names no
//! allocator, and a build without one gives nothing back.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The binary's call, installed once at start.
static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// A thread gives back at most this often (its last second of freed memory may wait for the
/// next time, or for the thread's end)...
const EVERY: Duration = Duration::from_secs(1);

/// ...unless its work took this long: a store call of 20 ms or more read enough to free a
/// lot (a read of every ledger), and giving it back costs little beside the call.
const LONG: Duration = Duration::from_millis(20);

/// A blocking thread idle this long ends (and gives back at its end).
pub const IDLE_THREAD_ENDS: Duration = Duration::from_secs(1);

thread_local! {
    /// When this thread last gave back.
    static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Installs the binary's call (the first one installed stays).
pub fn install(give_back: fn()) {
    let _ = GIVE_BACK.set(give_back);
}

/// This thread is done with a piece of work (an async worker about to park): gives back,
/// unless it did less than [`EVERY`] ago.
pub fn now_and_then() {
    let now = Instant::now();
    let due = LAST.with(|last| last.get().is_none_or(|at| now.duration_since(at) >= EVERY));
    if due {
        give_back(now);
    }
}

/// This thread is done with a store call that began at `started`: gives back at once after a
/// long one, else [`now_and_then`].
pub fn after_call(started: Instant) {
    let now = Instant::now();
    if now.duration_since(started) >= LONG {
        give_back(now);
    } else {
        now_and_then();
    }
}

/// This thread is about to end: gives back everything it holds freed (once it has ended, its
/// segments would wait for another thread).
pub fn at_thread_end() {
    give_back(Instant::now());
}

fn give_back(now: Instant) {
    if let Some(give_back) = GIVE_BACK.get() {
        LAST.with(|last| last.set(Some(now)));
        give_back();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    thread_local! {
        /// The calls made on this thread (other tests' threads count their own).
        static CALLS: Cell<usize> = const { Cell::new(0) };
    }

    fn count() {
        CALLS.with(|c| c.set(c.get() + 1));
    }

    fn calls() -> usize {
        CALLS.with(Cell::get)
    }

    #[test]
    fn a_thread_gives_back_at_most_once_a_second_after_a_long_call_and_at_its_end() {
        install(count);
        std::thread::spawn(|| {
            for _ in 0..100 {
                now_and_then();
                after_call(Instant::now());
            }
            assert_eq!(calls(), 1, "once within the second");
            after_call(Instant::now().checked_sub(LONG).unwrap());
            assert_eq!(calls(), 2, "after a long call at once");
            at_thread_end();
            assert_eq!(calls(), 3);
        })
        .join()
        .unwrap();
        // Another thread keeps its own time.
        let other = std::thread::spawn(|| {
            now_and_then();
            calls()
        });
        assert_eq!(other.join().unwrap(), 1);
    }
}
