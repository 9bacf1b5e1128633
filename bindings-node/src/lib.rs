//! Node binding of AgentX Clarify. Conversion only: the pure functions go to the core's JSON
//! facade, the file store's operations and the in-memory workspace to the command layer, and
//! each returns the envelope it gets back as JSON text. `clarify.js` turns a failed envelope
//! into a thrown `Error` with `.code`. A panic never crosses into Node: it becomes an
//! `INTERNAL` envelope.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agentx_clarify_command::{guarded, vector, MemStore, State};
use agentx_clarify_core::envelope::failure;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_runner::ProcessRunner;
use agentx_clarify_store::DiskStore;
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;
use serde_json::{json, Value};

fn parse_input(input: &str) -> Result<Value, Value> {
    serde_json::from_str::<Value>(input).map_err(|e| failure(&ClarifyError::input(e.to_string())))
}

/// Any core function over JSON text: `clarify.js` sends `JSON.stringify(input)` and parses the
/// envelope it gets back. This is the only path for the pure functions: V8's JSON is faster
/// than napi's conversion of nested objects field by field (docs/benchmarks.md).
#[napi(
    ts_args_type = "name: string, input: string",
    ts_return_type = "string"
)]
pub fn call_json(name: String, input: String) -> String {
    guarded(|| match parse_input(&input) {
        Ok(v) => agentx_clarify_core::api::call(&name, &v),
        Err(failure) => failure,
    })
    .to_string()
}

/// The names of the core's functions (`callJson` understands exactly these; the operation
/// table's).
#[napi]
pub fn functions() -> Vec<String> {
    agentx_clarify_core::call::table::FUNCTION_NAMES
        .iter()
        .map(|f| (*f).to_owned())
        .collect()
}

/// The names of the command layer's operations (`storeCall` and `MemoryWorkspace.run`
/// understand exactly these; the operation table's): `clarify.js` makes each a `Workspace`
/// method.
#[napi]
pub fn operations() -> Vec<String> {
    agentx_clarify_core::call::table::OPERATION_NAMES
        .iter()
        .map(|f| (*f).to_owned())
        .collect()
}

/// The workspaces this process opened, by root: each once (its settings read again when they
/// change, its PostgreSQL connections kept), shared by every call and feed on it. Routing
/// runs agents as processes (`ProcessRunner`): the addon holds no HTTP client, so a `preset =
/// "a2a"` runner is `RUNNER_UNAVAILABLE` here, naming the CLI and the server.
static WORKSPACES: Mutex<BTreeMap<PathBuf, Arc<Workspace>>> = Mutex::new(BTreeMap::new());

/// The workspace at `root`, opened on its first use in this process.
fn workspace(root: &Path) -> Result<Arc<Workspace>, ClarifyError> {
    let mut open = WORKSPACES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(ws) = open.get(root) {
        return Ok(Arc::clone(ws));
    }
    let ws = Arc::new(Workspace::open_watching(root, ProcessRunner::new(root))?);
    open.insert(root.to_path_buf(), Arc::clone(&ws));
    Ok(ws)
}

/// One store operation on a workspace, run on the libuv thread pool (off the JS thread).
pub struct StoreCall {
    root: String,
    op: String,
    /// The input as JSON text (`clarify.js` checked what JSON cannot carry).
    input: String,
}

impl Task for StoreCall {
    type Output = String;
    /// The envelope as JSON text (`clarify.js` parses it): one string crosses the boundary.
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let root = Path::new(&self.root);
        let envelope = guarded(|| {
            // A root that does not exist is an error, not an empty workspace; `init` makes it.
            if self.op != "init" {
                if let Err(e) = DiskStore::new(root).require_root() {
                    return failure(&e);
                }
            }
            // The workspace's store, files or PostgreSQL, chosen as the CLI chooses it.
            let ws = match workspace(root) {
                Ok(ws) => ws,
                Err(e) => return failure(&e),
            };
            // Routing runs agents from this pool thread (the thread that waits for them).
            match parse_input(&self.input) {
                Ok(input) => ws.call_routed(&self.op, &input),
                Err(failure) => failure,
            }
        });
        Ok(envelope.to_string())
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// The workspace's store (its files, or PostgreSQL when `AGENTX_STORE` or `[store] url` names
/// one): `op` on the workspace at `root`, with the CLI's locks and `--json` shapes. Same-file
/// operations inside this process queue on an in-process mutex before the file lock.
#[napi(
    ts_args_type = "root: string, op: StoreOperation, input: string",
    ts_return_type = "Promise<string>"
)]
pub fn store_call(root: String, op: String, input: String) -> AsyncTask<StoreCall> {
    AsyncTask::new(StoreCall { root, op, input })
}

/// The workspace root that `agentx` would use from `start` (nearest ancestor with `.agentx/`).
#[napi]
pub fn discover_root(start: String) -> String {
    DiskStore::discover(Path::new(&start)).display().to_string()
}

/// A workspace in memory (the command layer over `MemStore`): the same commands and shapes as
/// the file store, for tests, simulations and the conformance vectors.
#[napi]
pub struct MemoryWorkspace {
    store: MemStore,
}

#[napi]
impl MemoryWorkspace {
    /// From a vector-style setup (`{workflows?, config?, ledgers?, statuses?}`) as JSON text;
    /// a bad setup throws an error whose message is the failure envelope.
    #[napi(factory)]
    pub fn open(setup: String) -> napi::Result<MemoryWorkspace> {
        let opened =
            parse_input(&setup).and_then(|v| MemStore::from_setup(&v).map_err(|e| failure(&e)));
        opened
            .map(|store| MemoryWorkspace { store })
            .map_err(|failure| napi::Error::from_reason(failure.to_string()))
    }

    /// Runs a command (or a vector's `file` case) at `now` (epoch ms, unless `input.now`);
    /// returns the envelope as JSON text.
    #[napi]
    pub fn run(&self, op: String, input: String, now: i64) -> String {
        guarded(|| match parse_input(&input) {
            Ok(v) => vector::play(&self.store, &op, &v, now, |p| self.store.file(p)),
            Err(failure) => failure,
        })
        .to_string()
    }

    /// Every file of the workspace (relative path → text), as JSON text.
    #[napi]
    pub fn files(&self) -> String {
        let files: serde_json::Map<String, Value> = self
            .store
            .files()
            .into_iter()
            .map(|(p, b)| (p, Value::from(String::from_utf8_lossy(&b).into_owned())))
            .collect();
        Value::Object(files).to_string()
    }
}

/// The change feed of a workspace's store (docs/protocol.md §21: file stamps, or PostgreSQL's
/// signalled revisions), for views that re-read only when something changed: each
/// [`StoreFeed::changes`] says what changed since the last, once.
#[napi]
pub struct StoreFeed {
    store: Arc<WorkspaceStore>,
    cursor: agentx_clarify_store_any::AnyCursor,
}

#[napi]
impl StoreFeed {
    /// The feed of the workspace at `root` (its files, or PostgreSQL as the CLI chooses),
    /// from now on; a failure throws an error whose message is the failure envelope.
    #[napi(factory)]
    pub fn open(root: String) -> napi::Result<StoreFeed> {
        let fail = |e: ClarifyError| napi::Error::from_reason(failure(&e).to_string());
        let store = workspace(Path::new(&root))
            .and_then(|ws| ws.store())
            .map_err(fail)?;
        let cursor = store.feed().map_err(fail)?;
        Ok(StoreFeed { store, cursor })
    }

    /// What changed since the last call as JSON text (`{"ok":true,"changed":{revision, issues,
    /// statuses}}`, `changed` null when nothing did), or the failure envelope.
    #[napi]
    pub fn changes(&mut self) -> String {
        let store = &self.store;
        let cursor = &mut self.cursor;
        guarded(|| match store.changes(cursor) {
            Ok(changed) => json!({"ok": true, "changed": changed}),
            Err(e) => failure(&e),
        })
        .to_string()
    }
}
