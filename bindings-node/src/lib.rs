//! Node binding of AgentX Clarify. Conversion only: every function hands its plain JS object
//! to the core's JSON facade (or the CLI's store facade) and returns the envelope it gets back.
//! `clarify.js` turns a failed envelope into a thrown `Error` with `.code`. A panic never
//! crosses into Node: it becomes an `INTERNAL` envelope.

use std::panic::{catch_unwind, AssertUnwindSafe};

use agentx_clarify_core::api::error_value;
use agentx_clarify_core::ClarifyError;
use agentx_cli::Workspace;
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;
use serde_json::{json, Value};

/// Runs `f`, turning a panic into an `INTERNAL` failure envelope.
fn guarded(f: impl FnOnce() -> Value) -> Value {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("unknown panic"));
        json!({"ok": false, "error": {"code": "INTERNAL", "message": format!("internal error: {what}")}})
    })
}

/// Any core function over JSON text: `clarify.js` sends `JSON.stringify(input)` and parses the
/// envelope it gets back. This is the only path for the pure functions: V8's JSON is faster
/// than napi's conversion of nested objects field by field (docs/benchmarks.md).
#[napi(
    ts_args_type = "name: string, input: string",
    ts_return_type = "string"
)]
pub fn call_json(name: String, input: String) -> String {
    guarded(|| match serde_json::from_str::<Value>(&input) {
        Ok(v) => agentx_clarify_core::api::call(&name, &v),
        Err(e) => json!({"ok": false, "error": error_value(&ClarifyError::input(e.to_string()))}),
    })
    .to_string()
}

/// The names of the core's functions (`callJson` understands exactly these).
#[napi]
pub fn functions() -> Vec<String> {
    agentx_clarify_core::api::FUNCTIONS
        .iter()
        .map(|f| (*f).to_owned())
        .collect()
}

/// One store operation on a workspace, run on the libuv thread pool (off the JS thread).
pub struct StoreCall {
    root: String,
    op: String,
    input: Value,
}

impl Task for StoreCall {
    type Output = String;
    /// The envelope as JSON text (`clarify.js` parses it): one string crosses the boundary.
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let ws = Workspace::new(&self.root);
        let envelope = guarded(|| agentx_cli::json_api::call(&ws, &self.op, &self.input));
        Ok(envelope.to_string())
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// The file store: `op` on the workspace at `root`, with the CLI's locks and `--json` shapes.
/// Same-file operations inside this process queue on an in-process mutex before the file lock.
#[napi(
    ts_args_type = "root: string, op: StoreOperation, input?: object",
    ts_return_type = "Promise<string>"
)]
pub fn store_call(root: String, op: String, input: Option<Value>) -> AsyncTask<StoreCall> {
    AsyncTask::new(StoreCall {
        root,
        op,
        input: input.unwrap_or(Value::Null),
    })
}

/// The workspace root that `agentx` would use from `start` (nearest ancestor with `.agentx/`).
#[napi]
pub fn discover_root(start: String) -> String {
    Workspace::discover(std::path::Path::new(&start))
        .display()
        .to_string()
}

/// Test-only: proves a panic becomes an `INTERNAL` error instead of crashing Node.
#[napi(ts_return_type = "Envelope<never>")]
pub fn panic_for_test() -> Value {
    guarded(|| panic!("deliberate test panic"))
}
