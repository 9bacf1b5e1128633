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

/// A workspace and the function that runs operations on it.
#[derive(Clone)]
pub struct Hub {
    root: Arc<Path>,
    store: StoreFn,
    changes: Changes,
}

impl Hub {
    pub fn new(root: PathBuf, store: StoreFn, changes: Changes) -> Self {
        Hub {
            root: Arc::from(root),
            store,
            changes,
        }
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
