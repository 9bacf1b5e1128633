//! The `--json` envelope every surface answers with (docs/protocol.md §9): `{"ok": true, …}` or
//! `{"ok": false, "error": {"code", "message"}, …}`. One low module, below the domain and the
//! `api` facade, so every layer and shell writes it the same way and none reaches up for it.

use serde_json::{json, Map, Value};

use crate::error::ClarifyError;

/// `{"code", "message"}` of an error.
pub fn error_value(error: &ClarifyError) -> Value {
    json!({"code": error.code(), "message": error.to_string()})
}

/// `{"ok": true, …v}`: `ok` first, then the fields of `v` (an object; anything else adds none).
pub fn ok(v: Value) -> Value {
    let mut out = Map::new();
    out.insert("ok".into(), Value::Bool(true));
    if let Value::Object(mut m) = v {
        out.append(&mut m);
    }
    Value::Object(out)
}

/// `{"ok": false, "error": {"code", "message"}}` of an error.
pub fn failure(error: &ClarifyError) -> Value {
    refusal(error.code(), &error.to_string())
}

/// `{"ok": false, "error": {"code", "message"}}` with a code and message of the caller's (a
/// shell's own refusal: a task that did not finish, a panic caught at the boundary).
pub fn refusal(code: &str, message: &str) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message}})
}
