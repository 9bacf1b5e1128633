//! Playing a conformance vector's case (tests/vectors/README.md) on a store: every op is a
//! command of [`crate::json::call`], except `file`, which reads a file of the workspace as
//! the case expects it. Every runner that holds a store (Rust, wasm, Node) plays cases through here, so
//! runners differ only in their store.

use serde_json::{json, Value};

use crate::store::paths::{CLARIFICATIONS_DIR, STATE_DIR, STATUS_FILE};
use crate::store::Store;

/// The workspace path of a file a `file` case names (`issue-42.json`, `agent-status.json`,
/// `delegations/issue-42.json`: a name with a directory is under `.agentx/state/`).
pub fn file_path(name: &str) -> String {
    if name == STATUS_FILE || name.contains('/') {
        format!("{STATE_DIR}{name}")
    } else {
        format!("{CLARIFICATIONS_DIR}{name}")
    }
}

/// A `file` case's result: the file parsed as JSON, or its raw text when it does not parse,
/// or null when it is absent.
pub fn file_result(bytes: Option<&[u8]>) -> Value {
    let content = match bytes {
        None => Value::Null,
        Some(b) => serde_json::from_slice(b)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(b).into_owned())),
    };
    json!({"ok": true, "content": content})
}

/// Plays one case at `now`; `read` reads a workspace file by path (for `file`).
pub fn play<S: Store>(
    store: &S,
    op: &str,
    args: &Value,
    now: i64,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Value {
    if op == "file" {
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
        return file_result(read(&file_path(name)).as_deref());
    }
    crate::json::call(store, op, args, now)
}
