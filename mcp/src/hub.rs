//! The one seam between the server and the store. Every tool and resource reaches the hub
//! through [`Hub::call`]: an operation name and a JSON input in, the CLI's `--json` envelope
//! out (`{"ok":true,…}` or `{"ok":false,"error":{code,message}}`). The caller supplies the
//! function (the CLI passes its JSON facade today, the command layer over the disk store
//! later), so swapping the store is a change to that one function, not to the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::wait::{stamp, Stamp};

/// The store's JSON entry point: `(workspace root, operation, input) → envelope`. It blocks
/// (locks, files), so the server runs it on the blocking pool.
pub type StoreFn = fn(root: &Path, op: &str, input: &Value) -> Value;

/// How the server learns that a ledger changed (for `clarify_wait` and resource
/// subscriptions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changes {
    /// The state is in this workspace's files: a ledger changed when its file's stamp did (a
    /// check is one `stat`; any process's write shows).
    Files,
    /// The state is elsewhere (PostgreSQL, shared by many machines): a ledger changed when what
    /// the store shows of it did (a check is one store call, so checks are sparser).
    Store,
}

/// What a ledger looked like when checked, per [`Changes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Version {
    File(Option<Stamp>),
    Shown(u64),
}

/// The shortest pause between two checks of a ledger in the store.
const STORE_POLL: Duration = Duration::from_millis(500);

/// The issues whose ledgers changed, as a change feed announces them (`agentx serve`'s feed,
/// docs/protocol.md §23). With a feed, waits and resource subscriptions wake on its news instead of
/// looking at the ledgers on a timer. An empty list: anything may have changed (the feed
/// lost track), look again.
pub type Feed = tokio::sync::broadcast::Sender<Vec<u32>>;

/// A workspace and the function that runs operations on it.
#[derive(Clone)]
pub struct Hub {
    root: Arc<Path>,
    store: StoreFn,
    changes: Changes,
    feed: Option<Feed>,
}

impl Hub {
    pub fn new(root: PathBuf, store: StoreFn, changes: Changes) -> Self {
        Hub {
            root: Arc::from(root),
            store,
            changes,
            feed: None,
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

    /// `[mcp] elicit` of the workspace's settings (default on; unreadable settings: on, as
    /// every other command would refuse them anyway).
    pub fn elicit_setting(&self) -> bool {
        let path = self.root.join(agentx_clarify_command::paths::CONFIG);
        match std::fs::read_to_string(&path) {
            Ok(text) => agentx_clarify_core::config::Config::parse("config.toml", &text)
                .map(|c| c.mcp_elicit)
                .unwrap_or(true),
            Err(_) => true,
        }
    }

    /// A person's decision through this server (docs/protocol.md §24: an elicitation's answer):
    /// the command layer's `decide` with `by`/`via` on the workspace's store.
    pub async fn decide_as(&self, input: Value, by: String, via: &'static str) -> Value {
        let root = Arc::clone(&self.root);
        let done = tokio::task::spawn_blocking(move || {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or_default();
            match agentx_clarify_workspace::open(&root) {
                Ok(ws) => {
                    let by = agentx_clarify_core::ops::Attribution {
                        by,
                        via: via.into(),
                        reference: None,
                    };
                    agentx_clarify_command::call_as(&ws, "decide", &input, now, &by)
                }
                Err(e) => json!({"ok": false, "error": agentx_clarify_core::api::error_value(&e)}),
            }
        })
        .await;
        done.unwrap_or_else(|e| {
            json!({"ok": false, "error": {
                "code": "INTERNAL",
                "message": format!("the store call 'decide' did not finish: {e}"),
            }})
        })
    }

    /// How ledger `issue` looks now, to compare with a later look.
    pub async fn version(&self, issue: u32) -> Version {
        match self.changes {
            Changes::Files => Version::File(stamp(&self.ledger_path(issue))),
            Changes::Store => {
                let shown = self.call("show", json!({ "issue": issue })).await;
                let mut h = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(&shown.to_string(), &mut h);
                Version::Shown(std::hash::Hasher::finish(&h))
            }
        }
    }

    /// The pause between two checks: `files` for files, sparser for a store behind a network.
    pub fn poll(&self, files: Duration) -> Duration {
        match self.changes {
            Changes::Files => files,
            Changes::Store => files.max(STORE_POLL),
        }
    }

    /// Runs `op` off the async thread: a store call may wait for another process's lock.
    pub async fn call(&self, op: &'static str, input: Value) -> Value {
        let hub = self.clone();
        tokio::task::spawn_blocking(move || (hub.store)(&hub.root, op, &input))
            .await
            .unwrap_or_else(|e| {
                serde_json::json!({"ok": false, "error": {
                    "code": "INTERNAL",
                    "message": format!("the store call '{op}' did not finish: {e}"),
                }})
            })
    }

    /// The file that holds issue `issue`'s ledger (docs/protocol.md §3), watched for changes by `wait` and
    /// by resource subscriptions when the state is in files. Only its metadata is read here;
    /// contents go through `call`.
    pub fn ledger_path(&self, issue: u32) -> PathBuf {
        self.root
            .join(agentx_clarify_command::paths::ledger_path(issue))
    }
}
