//! The change feed every state store has (docs/protocol.md §21): an opaque, monotone revision
//! and "what changed since revision R" — the issues whose ledgers (of either kind) changed,
//! and whether the agent statuses did. The MCP server's resource notifications, `agentx
//! serve`'s live pages and the VS Code views use it; nothing above the stores looks at the
//! state's files or tables to learn what changed.
//!
//! A reader holds a cursor ([`State::Cursor`](crate::store::State::Cursor)) at the revision it has seen; each
//! [`State::changes`](crate::store::State::changes) reports what was written after it, once, and moves it on. The memory
//! store counts its writes; the file store compares file stamps (any process's write shows);
//! PostgreSQL numbers every write from one sequence and signals it with `LISTEN/NOTIFY`.
//!
//! A reader does not look on a timer: a store that can tell when something may have changed
//! hands out a [`Wake`] ([`State::wake`](crate::store::State::wake)) — the file store's fires
//! on the kernel's file events (inotify), PostgreSQL's on `NOTIFY` — and the reader looks once
//! it fires. The look stays the check (a wake says "look", never what changed), and a store
//! without one is looked at on the reader's own timer.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use agentx_clarify_core::verify::issue_of_file_name;
use serde::Serialize;

use crate::store::paths;

/// What changed after a cursor's revision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changed {
    /// The revision the cursor moved to: above every revision reported before.
    pub revision: u64,
    /// The issues whose clarification or delegation ledger changed, ascending, each once.
    pub issues: Vec<u32>,
    /// The agent statuses changed.
    pub statuses: bool,
}

impl Changed {
    /// Adds what a write of the state file at `path` (relative to the workspace root)
    /// changed; files that are not state (settings, run logs) change nothing.
    pub fn add_path(&mut self, path: &str) {
        if path == paths::STATUS {
            self.statuses = true;
            return;
        }
        let name = [paths::CLARIFICATIONS_DIR, paths::DELEGATIONS_DIR]
            .iter()
            .find_map(|dir| path.strip_prefix(dir));
        if let Some(issue) = name
            .and_then(issue_of_file_name)
            .and_then(|n| u32::try_from(n).ok())
        {
            self.issues.push(issue);
        }
    }

    /// Sorts and dedups the issues; `None` when nothing changed.
    pub fn finish(mut self) -> Option<Changed> {
        self.issues.sort_unstable();
        self.issues.dedup();
        (self.statuses || !self.issues.is_empty()).then_some(self)
    }
}

/// "Something may have changed": a count that the store's signals move (a file event, a
/// `NOTIFY`) and that readers wait on — a thread with [`Wake::wait_past`], an async task
/// through a hook ([`Wake::on_fire`]) that wakes it on its runtime. Clones share one count.
///
/// A reader takes [`Wake::count`] *before* it looks at the feed and waits past that count
/// after: a signal that comes while it looks is never lost.
#[derive(Clone, Default)]
pub struct Wake(Arc<Shared>);

type Hook = Box<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct Shared {
    /// Signals so far, and whether the signalling side has stopped (its cursor is gone).
    state: Mutex<(u64, bool)>,
    moved: Condvar,
    hooks: Mutex<Vec<Hook>>,
}

impl Wake {
    /// The signals so far.
    pub fn count(&self) -> u64 {
        self.0
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }

    /// A signal: every waiter wakes, every hook runs (on the signalling thread: hooks only
    /// pass the news on).
    pub fn fire(&self) {
        {
            let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.0 += 1;
        }
        self.0.moved.notify_all();
        for hook in self
            .0
            .hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            hook();
        }
    }

    /// Waits until the count is past `seen` or `timeout` passes; the count then.
    pub fn wait_past(&self, seen: u64, timeout: Duration) -> u64 {
        let state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (state, _) = self
            .0
            .moved
            .wait_timeout_while(state, timeout, |s| s.0 <= seen && !s.1)
            .unwrap_or_else(PoisonError::into_inner);
        state.0
    }

    /// Runs `hook` at every later signal (an async reader's way to be woken: the hook wakes
    /// its task).
    pub fn on_fire(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.0
            .hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(hook));
    }

    /// The signalling side stopped (its cursor was dropped): waiters return, and whatever
    /// watched for it may end.
    pub fn close(&self) {
        self.0
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1 = true;
        self.0.moved.notify_all();
    }

    /// Whether [`Wake::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.0
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
    }
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wake")
            .field("count", &self.count())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemStore;
    use crate::store::State;
    use crate::store::Store;

    #[test]
    fn the_memory_store_reports_each_write_once_after_its_revision() {
        let store = MemStore::new();
        store.init().unwrap();
        store.put(&paths::ledger_path(1), Some(b"{}".to_vec()));
        let mut cursor = store.feed().unwrap();
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
        let r0 = store.revision(&cursor);
        // Another writer of the same store (`put` is how one writes).
        store.put(&paths::ledger_path(3), Some(b"{}".to_vec()));
        store.put(
            ".agentx/state/delegations/issue-5.json",
            Some(b"{}".to_vec()),
        );
        store.put(".agentx/config.toml", Some(Vec::new()));
        let c = store.changes(&mut cursor).unwrap().unwrap();
        assert_eq!((c.issues, c.statuses), (vec![3, 5], false));
        assert!(c.revision > r0);
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
        store.put(paths::STATUS, Some(b"{}".to_vec()));
        store.put(&paths::ledger_path(1), None);
        let d = store.changes(&mut cursor).unwrap().unwrap();
        assert_eq!((d.issues, d.statuses), (vec![1], true));
        assert!(d.revision > c.revision);
        assert_eq!(store.revision(&cursor), d.revision);
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
    }

    #[test]
    fn a_wake_is_never_lost_between_the_count_and_the_wait() {
        let wake = Wake::default();
        let seen = wake.count();
        // Fired after the reader took its count, before it waits: the wait returns at once.
        wake.fire();
        assert_eq!(wake.wait_past(seen, Duration::from_secs(3600)), seen + 1);
        let hooked = Arc::new(Mutex::new(0));
        let h = Arc::clone(&hooked);
        wake.on_fire(move || *h.lock().unwrap() += 1);
        let other = wake.clone();
        let t = std::thread::spawn(move || other.wait_past(seen + 1, Duration::from_secs(3600)));
        wake.fire();
        assert_eq!(t.join().unwrap(), seen + 2);
        assert_eq!(*hooked.lock().unwrap(), 1);
        // Nothing fired: the wait ends at its timeout; closed: at once.
        assert_eq!(wake.wait_past(seen + 2, Duration::from_millis(1)), seen + 2);
        wake.close();
        assert!(wake.is_closed());
        assert_eq!(
            wake.wait_past(seen + 2, Duration::from_secs(3600)),
            seen + 2
        );
    }

    #[test]
    fn state_paths_name_their_issue_or_the_statuses() {
        let mut c = Changed::default();
        c.add_path(".agentx/state/clarifications/issue-7.json");
        c.add_path(".agentx/state/delegations/issue-3.json");
        c.add_path(".agentx/state/clarifications/issue-7.json");
        c.add_path(".agentx/config.toml");
        c.add_path(".agentx/state/runs/CLR-7-001.r1.1.json");
        let c = c.finish().unwrap();
        assert_eq!(c.issues, vec![3, 7]);
        assert!(!c.statuses);
        let mut s = Changed::default();
        s.add_path(paths::STATUS);
        assert!(s.finish().unwrap().statuses);
        assert_eq!(Changed::default().finish(), None);
    }
}
