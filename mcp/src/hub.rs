//! The one seam between the server and the store. Every tool and resource reaches the hub
//! through [`Hub::call`]: an operation name and a JSON input in, the CLI's `--json` envelope
//! out (`{"ok":true,…}` or `{"ok":false,"error":{code,message}}`). The caller supplies the
//! function (the CLI passes the command layer's JSON route over the workspace's store), so the
//! server never names a store; what changed it learns from the store's change feed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentx_clarify_command::FeedStore;
use agentx_clarify_workspace::{AnyCursor, AnyStore, Location};
use serde_json::Value;

/// The store's JSON entry point: `(workspace root, operation, input) → envelope`. It blocks
/// (locks, files), so the server runs it on the blocking pool.
pub type StoreFn = fn(root: &Path, op: &str, input: &Value) -> Value;

/// Where the server's store keeps its state (for `clarify_wait` and resource subscriptions,
/// which learn of changes from that store's change feed, docs/protocol.md §21).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changes {
    /// In this workspace's files.
    Files,
    /// Where the workspace's settings say (PostgreSQL, shared by many machines).
    Store,
}

/// How a ledger looked when checked: the feed's revision at which it last changed (0: not
/// since the server started looking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(u64);

/// The store's change feed as the server reads it: opened at the first look, then each
/// issue's latest change.
#[derive(Default)]
struct Feed {
    open: Option<(AnyStore, AnyCursor)>,
    changed: BTreeMap<u32, u64>,
    /// The failure to open it was logged.
    logged: bool,
}

/// A workspace and the function that runs operations on it.
#[derive(Clone)]
pub struct Hub {
    root: Arc<Path>,
    store: StoreFn,
    changes: Changes,
    feed: Arc<Mutex<Feed>>,
}

impl Hub {
    pub fn new(root: PathBuf, store: StoreFn, changes: Changes) -> Self {
        Hub {
            root: Arc::from(root),
            store,
            changes,
            feed: Arc::default(),
        }
    }

    /// How ledger `issue` looks now, to compare with a later look: what the store's change
    /// feed has said of it (a look is a few `stat`s for files; for PostgreSQL a query only
    /// after a write was signalled).
    pub async fn version(&self, issue: u32) -> Version {
        let hub = self.clone();
        tokio::task::spawn_blocking(move || hub.look(issue))
            .await
            .unwrap_or(Version(0))
    }

    fn look(&self, issue: u32) -> Version {
        let mut feed = self.feed.lock().unwrap_or_else(PoisonError::into_inner);
        if feed.open.is_none() {
            let location = match self.changes {
                Changes::Files => Ok(Location::Files),
                Changes::Store => agentx_clarify_workspace::location(&self.root),
            };
            let opened = location
                .and_then(|l| agentx_clarify_workspace::open_at(&self.root, l))
                .and_then(|store| store.feed().map(|cursor| (store, cursor)));
            match opened {
                Ok(open) => feed.open = Some(open),
                Err(e) if !feed.logged => {
                    feed.logged = true;
                    tracing::warn!("the store's change feed did not start: {e}");
                }
                Err(_) => {}
            }
        }
        let mut changed = None;
        if let Some((store, cursor)) = &mut feed.open {
            match store.changes(cursor) {
                Ok(c) => changed = c,
                Err(e) => tracing::warn!("the store's change feed: {e}"),
            }
        }
        if let Some(c) = changed {
            for n in c.issues {
                feed.changed.insert(n, c.revision);
            }
        }
        Version(feed.changed.get(&issue).copied().unwrap_or(0))
    }

    /// The pause between two checks (the same for every store: a look costs little).
    pub fn poll(&self, files: Duration) -> Duration {
        files
    }

    /// Runs `op` off the async thread: a store call may wait for another process's lock.
    pub async fn call(&self, op: &'static str, input: Value) -> Value {
        let hub = self.clone();
        tokio::task::spawn_blocking(move || (hub.store)(&hub.root, op, &input))
            .await
            .unwrap_or_else(|e| {
                agentx_clarify_core::envelope::refusal(
                    "INTERNAL",
                    &format!("the store call '{op}' did not finish: {e}"),
                )
            })
    }
}
