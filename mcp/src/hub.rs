//! The one seam between the server and the workspace. Every tool and resource reaches the hub
//! through [`Hub::call`]: an operation name and a JSON input in, the CLI's `--json` envelope
//! out (`{"ok":true,…}` or `{"ok":false,"error":{code,message}}`), run by the workspace handle
//! the server was built on ([`Workspace::call_routed`]: its store, its settings, its runner).
//! `agentx mcp` (stdio) and `agentx serve`'s `/mcp` (HTTP) both build their hub here from
//! their workspace, so routing — a `preset = "a2a"` agent included — cannot differ between
//! them. What changed it learns from the store's change feed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentx_clarify_command::State;
use agentx_clarify_store_any::AnyCursor;
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde_json::{json, Value};

/// How a ledger looked when checked: the feed's revision at which it last changed (0: not
/// since the server started looking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(u64);

/// The store's change feed as the server reads it: opened at the first look, then each
/// issue's latest change.
#[derive(Default)]
struct StoreFeed {
    open: Option<(Arc<WorkspaceStore>, AnyCursor)>,
    changed: BTreeMap<u32, u64>,
    /// The failure to open it was logged.
    logged: bool,
}

/// The issues whose ledgers changed, as a change feed announces them (`agentx serve`'s feed,
/// docs/protocol.md §23). With a feed, waits and resource subscriptions wake on its news instead of
/// looking at the ledgers on a timer. An empty list: anything may have changed (the feed
/// lost track), look again.
pub type Feed = tokio::sync::broadcast::Sender<Vec<u32>>;

/// A workspace, as the MCP server's tools reach it.
#[derive(Clone)]
pub struct Hub {
    ws: Arc<Workspace>,
    /// News pushed by the server around it (`agentx serve`'s feed), when there is one.
    feed: Option<Feed>,
    /// The store's own change feed, read when a wait or a subscription looks.
    cursor: Arc<Mutex<StoreFeed>>,
}

impl Hub {
    /// The hub of the workspace `ws`: every call runs on it, with its runner.
    pub fn new(ws: Arc<Workspace>) -> Self {
        Hub {
            ws,
            feed: None,
            cursor: Arc::default(),
        }
    }

    /// The hub woken by `feed` (every change of the store is announced on it).
    pub fn with_feed(mut self, feed: Feed) -> Self {
        self.feed = Some(feed);
        self
    }

    /// A receiver of the change feed, when there is one.
    pub fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<Vec<u32>>> {
        self.feed.as_ref().map(Feed::subscribe)
    }

    /// `[mcp] elicit` of the workspace's settings as last read (default on; unreadable
    /// settings: on, as every other command would refuse them anyway). No look at the files:
    /// it is asked on the async threads, and every call brings the reading up to date.
    pub fn elicit_setting(&self) -> bool {
        let store = self.ws.current();
        let elicit = store.files.settings().config().map(|c| c.mcp_elicit);
        elicit.unwrap_or(true)
    }

    /// A person's decision through this server (docs/protocol.md §24: an elicitation's answer):
    /// the command layer's `decide` with `by`/`via` on the workspace's store.
    pub async fn decide_as(&self, input: Value, by: String, via: &'static str) -> Value {
        let ws = Arc::clone(&self.ws);
        let done = tokio::task::spawn_blocking(move || {
            let now = agentx_clarify_store::clock::system_now_ms();
            let by = agentx_clarify_core::ops::Attribution {
                by,
                via: via.into(),
                reference: None,
            };
            ws.call_as("decide", &input, now, &by)
        })
        .await;
        done.unwrap_or_else(|e| {
            json!({"ok": false, "error": {
                "code": "INTERNAL",
                "message": format!("the store call 'decide' did not finish: {e}"),
            }})
        })
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
        let mut feed = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        if feed.open.is_none() {
            let opened = self
                .ws
                .store()
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
        let ws = Arc::clone(&self.ws);
        tokio::task::spawn_blocking(move || ws.call_routed(op, &input))
            .await
            .unwrap_or_else(|e| {
                agentx_clarify_core::envelope::refusal(
                    "INTERNAL",
                    &format!("the store call '{op}' did not finish: {e}"),
                )
            })
    }
}
