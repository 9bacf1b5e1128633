//! The server's view of the store's change feed (docs/protocol.md §21): every state store has
//! one (`agentx_clarify_command::State`: files by their stamps, PostgreSQL by a revision
//! sequence and `LISTEN/NOTIFY`); this adapts it to the live pages and the worker — a
//! [`Change`] with the server's own revision and the issues that changed, broadcast on
//! `App::changes`.

use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_command::State;
use agentx_clarify_store_any::AnyState;

use crate::hub::{App, Change};

/// How often a store without signals (files) is looked at, and the longest wait for a
/// signalling one (PostgreSQL) between two checks for shutdown: bounds the live-update latency
/// (docs/protocol.md §23: within 1 s).
pub const EVERY: Duration = Duration::from_millis(150);

/// A store's change feed: [`ChangeFeed::poll`] says what changed since the last poll.
pub trait ChangeFeed: Send + 'static {
    fn poll(&mut self) -> Option<Vec<u32>>;

    /// Waits at most `timeout` for the store to signal a change; `false` at once for a store
    /// that does not signal (the caller pauses instead).
    fn wait(&mut self, _timeout: Duration) -> bool {
        false
    }

    /// Whether [`ChangeFeed::wait`] waits for signals.
    fn signals(&self) -> bool {
        false
    }
}

/// A state store and a cursor on its change feed.
pub struct StoreFeed<S: State> {
    store: Arc<S>,
    cursor: S::Cursor,
    signals: bool,
}

impl<S: State> StoreFeed<S> {
    /// The feed of `store` from now on; `signals`: the store wakes [`ChangeFeed::wait`].
    pub fn open(store: Arc<S>, signals: bool) -> Result<Self, agentx_clarify_core::ClarifyError> {
        let cursor = store.feed()?;
        Ok(StoreFeed {
            store,
            cursor,
            signals,
        })
    }
}

impl<S: State + Send + Sync + 'static> ChangeFeed for StoreFeed<S>
where
    S::Cursor: Send,
{
    fn poll(&mut self) -> Option<Vec<u32>> {
        match self.store.changes(&mut self.cursor) {
            Ok(changed) => changed.map(|c| c.issues),
            Err(e) => {
                crate::log::line(&format!("the store's change feed: {e}"));
                None
            }
        }
    }

    fn wait(&mut self, timeout: Duration) -> bool {
        self.store.wait_changes(&mut self.cursor, timeout)
    }

    fn signals(&self) -> bool {
        self.signals
    }
}

/// For the tests only: the pause the variable `name` asks for, at most 2 s (`None`: unset).
/// `AGENTX_TEST_FEED_BASELINE_DELAY_MS` takes the feed's baseline that much later, so a test
/// can show that no worker reads the store before it (`cli/tests/github.rs`: a decision taken
/// by the sync at start still reaches its comment); `open_follow.rs` has another.
pub(crate) fn test_delay(name: &str) -> Option<Duration> {
    let ms: u64 = std::env::var(name).ok()?.parse().ok()?;
    Some(Duration::from_millis(ms.min(2_000)))
}

/// Starts the feed of the workspace's store on the blocking pool; it stops on shutdown.
pub fn start(app: Arc<App>) {
    let mut shutdown = app.shutdown.subscribe();
    tokio::spawn(async move {
        let ws = Arc::clone(&app.ws);
        let made = tokio::task::spawn_blocking(move || -> Option<Box<dyn ChangeFeed>> {
            if let Some(late) = test_delay("AGENTX_TEST_FEED_BASELINE_DELAY_MS") {
                std::thread::sleep(late);
            }
            let store = ws.store().ok()?;
            let signals = matches!(store.state, AnyState::Pg(_));
            Some(Box::new(StoreFeed::open(store, signals).ok()?))
        })
        .await;
        let Ok(Some(mut feed)) = made else {
            crate::log::line("live updates are off: the store's change feed could not start");
            return;
        };
        // The baseline is taken: every write from now on is reported (the inbox's view of the
        // open records starts reading after this).
        let _ = app.feed_ready.send(true);
        let mut revision = 0u64;
        loop {
            if !feed.signals() {
                tokio::select! {
                    _ = tokio::time::sleep(EVERY) => {}
                    _ = shutdown.changed() => return,
                }
            } else if *shutdown.borrow() {
                return;
            }
            let polled = tokio::task::spawn_blocking(move || {
                feed.wait(EVERY);
                let changed = feed.poll();
                (feed, changed)
            })
            .await;
            let Ok((back, changed)) = polled else { return };
            feed = back;
            if let Some(issues) = changed {
                revision += 1;
                // Published before the news goes out: a page that reacts to the event can
                // ask whether the inbox's view has caught up with it (open.rs).
                app.revision
                    .store(revision, std::sync::atomic::Ordering::SeqCst);
                let _ = app.changes.send(Change { revision, issues });
            }
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agentx_clarify_command::paths::CLARIFICATIONS_DIR;

    #[test]
    fn a_replaced_ledger_names_its_issue() {
        let dir = tempfile::tempdir().unwrap();
        let ledgers = dir.path().join(CLARIFICATIONS_DIR);
        std::fs::create_dir_all(&ledgers).unwrap();
        let mut feed = StoreFeed::open(
            Arc::new(agentx_clarify_store::DiskStore::new(dir.path())),
            false,
        )
        .unwrap();
        assert_eq!(feed.poll(), None);
        std::fs::write(ledgers.join(".tmp"), "{}").unwrap();
        std::fs::rename(ledgers.join(".tmp"), ledgers.join("issue-7.json")).unwrap();
        assert_eq!(feed.poll(), Some(vec![7]));
        assert_eq!(feed.poll(), None);
    }
}
