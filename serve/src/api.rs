//! `POST /api/v1/call {"op", "input"}`: an operation of the table (`agentx_clarify_core::call`),
//! its input decoded by the command layer as every surface's is, run acting as the session's
//! or bearer token's person. Which operations people may call is the table's `people` column;
//! the HTTP status follows the envelope's error (`status.rs`); the body is always the envelope.

use std::sync::Arc;

use agentx_clarify_core::call::store::Route;
use agentx_clarify_core::call::table::{people_of, People, OPERATIONS};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::auth::{caller, csrf_ok, Caller};
use crate::hub::App;
use crate::security::refusal;

/// Whether a person may call `op` through the server, and whether it writes as them (the
/// operation table's `people` column).
pub fn allowed(op: &str, input: &Map<String, Value>) -> Option<bool> {
    match people_of(op, &Value::Object(input.clone())) {
        People::Read | People::Route => Some(false),
        People::Act => Some(true),
        People::Closed => None,
    }
}

/// The operations open to people, for the refusal that lists them.
fn open_names() -> Vec<&'static str> {
    OPERATIONS
        .iter()
        .filter(|r| r.people != People::Closed)
        .map(|r| r.name)
        .collect()
}

pub async fn call(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let human = match caller(&app, &headers).await {
        Caller::Nobody => {
            return refusal(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "sign in, or send a human token as `Authorization: Bearer …`",
            )
        }
        Caller::Agent => {
            return refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "an agent token cannot use /api/v1 (agents use /mcp)",
            )
        }
        Caller::Unavailable(why) => {
            return refusal(StatusCode::SERVICE_UNAVAILABLE, "IO_ERROR", &why)
        }
        Caller::Session(s) => {
            if !csrf_ok(&s, &headers, None) {
                return refusal(
                    StatusCode::FORBIDDEN,
                    "FORBIDDEN",
                    "the page's CSRF token is missing or wrong (X-CSRF-Token)",
                );
            }
            s.human
        }
        Caller::Human(name) => name,
    };
    let (op, input) = match parse(&body) {
        Ok(v) => v,
        Err(why) => return refusal(StatusCode::BAD_REQUEST, "INVALID_INPUT", &why),
    };
    let Some(writes) = allowed(&op, &input) else {
        return refusal(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            &format!(
                "'{}' is not open to people through the server; allowed: {}",
                agentx_clarify_core::error::shown(&op),
                open_names().join(", ")
            ),
        );
    };
    let input = Value::Object(input);
    // A network door: only the server's clock dates a write.
    if let Err(e) = agentx_clarify_command::check_network(&input) {
        return respond(agentx_clarify_core::envelope::failure(&e));
    }
    let envelope = if op == "route" {
        // Route again: one record, never `all` (the worker and the CLI route in bulk).
        let route = match agentx_clarify_core::call::decode::<Route>(&input) {
            Ok(route) => route,
            Err(e) => return respond(agentx_clarify_core::envelope::failure(&e)),
        };
        let Some(id) = route.id.filter(|_| route.all.is_none()) else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "INVALID_INPUT",
                "`route` through the server takes one record: {\"id\"}",
            );
        };
        let id = agentx_clarify_core::error::shown(&id);
        crate::log::line(&format!("'{human}' routes {id} again"));
        app.call_routed(op, input).await
    } else {
        app.call(op, input, writes.then_some(human)).await
    };
    respond(envelope)
}

/// The envelope with the status of its error (`status.rs`'s table).
fn respond(envelope: Value) -> Response {
    (crate::status::of_envelope(&envelope), axum::Json(envelope)).into_response()
}

/// `{"op": "<name>", "input": {…}}` (`input` may be left out).
fn parse(body: &[u8]) -> Result<(String, Map<String, Value>), String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the body must be JSON {{\"op\", \"input\"}}: {e}"))?;
    let Value::Object(mut m) = value else {
        return Err("the body must be a JSON object {\"op\", \"input\"}".into());
    };
    let op = match m.remove("op") {
        Some(Value::String(op)) => op,
        _ => return Err("`op` is required: the operation's name".into()),
    };
    let input = match m.remove("input") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(i)) => i,
        Some(_) => return Err("`input` must be an object".into()),
    };
    if let Some(k) = m.keys().next() {
        return Err(format!(
            "unknown field `{}`; expected op, input",
            agentx_clarify_core::error::shown(k)
        ));
    }
    Ok((op, input))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_checked_before_any_store_call() {
        assert!(parse(b"").is_err());
        assert!(parse(b"[]").is_err());
        assert!(parse(b"{\"op\": 3}").is_err());
        assert!(parse(b"{\"op\": \"list\", \"input\": []}").is_err());
        assert!(parse(b"{\"op\": \"list\", \"x\": 1}").is_err());
        let (op, input) = parse(b"{\"op\": \"list\"}").unwrap();
        assert_eq!((op.as_str(), input.len()), ("list", 0));
        let none = Map::new();
        assert_eq!(allowed("list", &none), Some(false));
        assert_eq!(allowed("decide", &none), Some(true));
        assert_eq!(allowed("init", &none), None);
        assert_eq!(allowed("hook", &none), None);
        let mut set = Map::new();
        set.insert("agent".into(), Value::from("a"));
        assert_eq!(allowed("state", &set), None);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_answered_without_a_panic(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let _ = parse(&body);
        }

        #[test]
        fn any_json_shape_is_answered_without_a_panic(op in "\\PC{0,40}", key in "[a-z]{0,8}", n in proptest::prelude::any::<i64>(), text in "\\PC{0,60}") {
            let bodies = [
                serde_json::json!({"op": op, "input": {key.clone(): n}}),
                serde_json::json!({"op": op, "input": {key.clone(): text}}),
                serde_json::json!({"op": n, "input": text}),
                serde_json::json!([op, n]),
                serde_json::json!({"op": op, key: null}),
            ];
            for b in bodies {
                if let Ok((op, input)) = parse(b.to_string().as_bytes()) {
                    let _ = allowed(&op, &input);
                }
            }
        }
    }
}
