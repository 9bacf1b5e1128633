//! The server's view of the store's change feed (docs/protocol.md §21): every state store has
//! one (`agentx_clarify_command::State`: files by their stamps, PostgreSQL by a revision
//! sequence and `LISTEN/NOTIFY`); this adapts it to the live pages and the worker — a
//! [`Change`] with the server's own revision and the issues that changed, broadcast on
//! `App::changes`.

use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_command::{State, Wake};
use tokio::sync::mpsc::UnboundedSender;

use crate::backoff::Backoff;
use crate::hub::{App, Change};

/// How often a store that cannot signal (files where watching is unavailable) is looked at:
/// bounds the live-update latency there (docs/protocol.md §23: within 1 s). A store that
/// signals is looked at when its wake fires, and after the feed's safety tick
/// (`agentx_clarify_store::safety_tick`).
pub const EVERY: Duration = Duration::from_millis(150);

/// A store's change feed: [`ChangeFeed::poll`] says what changed since the last poll.
pub trait ChangeFeed: Send + 'static {
    /// The issues changed since the last poll (`None`: nothing changed), or why the store
    /// could not be asked (the database is down: the caller backs off).
    fn poll(&mut self) -> Result<Option<Vec<u32>>, agentx_clarify_core::ClarifyError>;

    /// What fires when the store may have changed (file events, `NOTIFY`); `None`: the
    /// store cannot signal, look every [`EVERY`].
    fn wake(&mut self) -> Option<Wake> {
        None
    }
}

/// A state store and a cursor on its change feed.
pub struct StoreFeed<S: State> {
    store: Arc<S>,
    cursor: S::Cursor,
}

impl<S: State> StoreFeed<S> {
    /// The feed of `store` from now on.
    pub fn open(store: Arc<S>) -> Result<Self, agentx_clarify_core::ClarifyError> {
        let cursor = store.feed()?;
        Ok(StoreFeed { store, cursor })
    }
}

impl<S: State + Send + Sync + 'static> ChangeFeed for StoreFeed<S>
where
    S::Cursor: Send,
{
    fn poll(&mut self) -> Result<Option<Vec<u32>>, agentx_clarify_core::ClarifyError> {
        Ok(self.store.changes(&mut self.cursor)?.map(|c| c.issues))
    }

    fn wake(&mut self) -> Option<Wake> {
        self.store.wake(&mut self.cursor)
    }
}

/// The longest wait between two looks at a store that failed (docs/protocol.md §32): the
/// feed is back within this of the store's return.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Starts the feed of the workspace's store on the blocking pool; it stops on shutdown. Every
/// change goes to the broadcast (`App::changes`) and to `view`, the inbox view's own queue,
/// which never drops one (`open_follow.rs`).
pub fn start(app: Arc<App>, view: UnboundedSender<Change>) {
    tokio::spawn(async move {
        let Some((feed, wake)) = opened(&app).await else {
            return;
        };
        // The baseline is taken: every write from now on is reported (the inbox's view of the
        // open records starts reading after this).
        let _ = app.feed_ready.send(true);
        if let Some(feed) = follow(&app, feed, wake, &view).await {
            // Off the async threads: closing a PostgreSQL connection blocks (the synchronous
            // client runs a runtime of its own, which must not be dropped inside this one).
            let _ = tokio::task::spawn_blocking(move || drop(feed)).await;
        }
    });
}

type Opened = (Box<dyn ChangeFeed>, Option<Wake>);

/// The feed, opened on the blocking pool. A store that cannot give one (the database went
/// away before the feed's first look) is tried again after a [`Backoff`], the outage logged
/// when it begins and when it ends — before, live updates stayed off until a restart.
/// `None`: shutdown came first, or the opening panicked.
async fn opened(app: &Arc<App>) -> Option<Opened> {
    let mut shutdown = app.shutdown.subscribe();
    let mut backoff = Backoff::new(EVERY, MAX_BACKOFF);
    let mut first = true;
    loop {
        let ws = Arc::clone(&app.ws);
        let late = std::mem::take(&mut first);
        let made = tokio::task::spawn_blocking(move || -> Result<Opened, String> {
            if let Some(delay) = late
                .then(|| crate::test_hooks::pause(crate::test_hooks::FEED_BASELINE))
                .flatten()
            {
                std::thread::sleep(delay);
            }
            let store = ws.store().map_err(|e| e.to_string())?;
            let mut feed = StoreFeed::open(store).map_err(|e| e.to_string())?;
            let wake = feed.wake();
            Ok((Box::new(feed) as Box<dyn ChangeFeed>, wake))
        })
        .await;
        let why = match made {
            Ok(Ok(opened)) => {
                if let Some((down, failures)) = backoff.succeeded() {
                    crate::log::line(&format!(
                        "the store's change feed is back after {:.1} s ({failures} failed starts): live updates are on",
                        down.as_secs_f64()
                    ));
                }
                return Some(opened);
            }
            Ok(Err(why)) => why,
            Err(_) => {
                crate::log::line("live updates are off: the store's change feed could not start");
                return None;
            }
        };
        let (wait, began) = backoff.failed();
        if began {
            crate::log::line(&format!(
                "the store's change feed: {why}; live updates start once it answers (looking again every {} s at most)",
                MAX_BACKOFF.as_secs()
            ));
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            _ = shutdown.changed() => return None,
        }
    }
}

/// Follows `feed` until shutdown (then returns it, to be closed), broadcasting each change.
/// A look that fails (the database went away) is tried again after a [`Backoff`] — never
/// on every wake or tick while the store is down — and the outage is logged when it begins
/// and when it ends, not on every try.
async fn follow(
    app: &App,
    mut feed: Box<dyn ChangeFeed>,
    wake: Option<Wake>,
    view: &UnboundedSender<Change>,
) -> Option<Box<dyn ChangeFeed>> {
    let mut shutdown = app.shutdown.subscribe();
    // The store's signals wake this task; `notify_one` keeps one that comes while the feed
    // is being looked at, so none is lost.
    let woken = Arc::new(tokio::sync::Notify::new());
    if let Some(w) = &wake {
        let n = Arc::clone(&woken);
        w.on_fire(move || n.notify_one());
    }
    let tick = match &wake {
        Some(_) => agentx_clarify_store::safety_tick(),
        None => EVERY,
    };
    let mut backoff = Backoff::new(EVERY, MAX_BACKOFF);
    let mut revision = 0u64;
    loop {
        let polled = tokio::task::spawn_blocking(move || {
            let changed = feed.poll();
            (feed, changed)
        })
        .await;
        // A look that panicked took the feed with it.
        let Ok((back, changed)) = polled else {
            crate::log::line("live updates are off: the store's change feed stopped");
            return None;
        };
        feed = back;
        match changed {
            Ok(changed) => {
                app.metrics
                    .feed_heard(agentx_clarify_store::clock::system_now_ms());
                if let Some((down, failures)) = backoff.succeeded() {
                    crate::log::line(&format!(
                        "the store's change feed is back after {:.1} s ({failures} failed looks)",
                        down.as_secs_f64()
                    ));
                }
                if let Some(issues) = changed {
                    revision += 1;
                    // Published before the news goes out: a page that reacts to the event
                    // can ask whether the inbox's view has caught up with it (open.rs).
                    app.revision
                        .store(revision, std::sync::atomic::Ordering::SeqCst);
                    let change = Change { revision, issues };
                    let _ = view.send(change.clone());
                    let _ = app.changes.send(change);
                }
            }
            Err(e) => {
                let (wait, began) = backoff.failed();
                if began {
                    crate::log::line(&format!(
                        "the store's change feed: {e}; looking again every {} s at most until it answers",
                        MAX_BACKOFF.as_secs()
                    ));
                }
                // Wakes are not waited for meanwhile: a broken connection fires them.
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    _ = shutdown.changed() => return Some(feed),
                }
                continue;
            }
        }
        tokio::select! {
            () = woken.notified(), if wake.is_some() => {}
            () = tokio::time::sleep(tick) => {}
            _ = shutdown.changed() => return Some(feed),
        }
    }
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
        let mut feed =
            StoreFeed::open(Arc::new(agentx_clarify_store::DiskStore::new(dir.path()))).unwrap();
        assert_eq!(feed.poll().unwrap(), None);
        std::fs::write(ledgers.join(".tmp"), "{}").unwrap();
        std::fs::rename(ledgers.join(".tmp"), ledgers.join("issue-7.json")).unwrap();
        assert_eq!(feed.poll().unwrap(), Some(vec![7]));
        assert_eq!(feed.poll().unwrap(), None);
    }
}
