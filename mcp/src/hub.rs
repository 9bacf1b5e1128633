//! The one seam between the server and the store. Every tool and resource reaches the hub
//! through [`Hub::call`]: an operation name and a JSON input in, the CLI's `--json` envelope
//! out (`{"ok":true,…}` or `{"ok":false,"error":{code,message}}`). The caller supplies the
//! function (the CLI passes its JSON facade today, the command layer over the disk store
//! later), so swapping the store is a change to that one function, not to the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

/// The store's JSON entry point: `(workspace root, operation, input) → envelope`. It blocks
/// (locks, files), so the server runs it on the blocking pool.
pub type StoreFn = fn(root: &Path, op: &str, input: &Value) -> Value;

/// A workspace and the function that runs operations on it.
#[derive(Clone)]
pub struct Hub {
    root: Arc<Path>,
    store: StoreFn,
}

impl Hub {
    pub fn new(root: PathBuf, store: StoreFn) -> Self {
        Hub {
            root: Arc::from(root),
            store,
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

    /// The file that holds issue `issue`'s ledger (SPEC §3), watched for changes by `wait` and
    /// by resource subscriptions. Only its metadata is read here; contents go through `call`.
    pub fn ledger_path(&self, issue: u32) -> PathBuf {
        self.root
            .join(agentx_clarify_command::paths::ledger_path(issue))
    }
}
