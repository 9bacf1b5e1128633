//! The command layer's JSON skin: `call(store, op, input, now)` decodes `op`'s input into its
//! typed struct (the core's operation table, `agentx_clarify_core::call`), runs the command
//! and returns exactly its `--json` document. The Node store, the wasm workspace, the server
//! and every vector runner call this; the CLI fills the same structs from its flags and calls
//! the commands themselves.
//!
//! `now` is the call's, not an operation's: an input may carry its own (epoch ms or RFC 3339
//! text) for the shells that replay or test; the network doors refuse it
//! ([`decode_network`]).

mod dispatch;
pub mod vector;

use agentx_clarify_core::call::table::{canonical, dispatch_operation};
use agentx_clarify_core::call::{take_now, NOW};
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::ClarifyError;
use serde_json::Value;

use crate::route::{Clock, Runner};
use crate::store::Store;

pub use agentx_clarify_core::call::table::{OPERATIONS, OPERATION_NAMES};
pub use agentx_clarify_core::envelope::{failure, ok};
pub use dispatch::{Call, Routing};

/// The routing operations, which run only where agents can be started or answer for the
/// runners (the table's rows whose names start with `route`).
pub const ROUTE_OPERATIONS: &[&str] = &[
    "route",
    "routePrompt",
    "routeOutcome",
    "routeRunner",
    "routeChatPrompt",
    "routeChatReply",
];

/// A network door (`/api/v1/call`, A2A, MCP over HTTP) refuses an input `now`: only the
/// server's clock counts there (docs/security-serve.md).
pub fn check_network(input: &Value) -> Result<(), ClarifyError> {
    match input.get(NOW) {
        Some(_) => Err(now_refused()),
        None => Ok(()),
    }
}

/// The refusal of an input `now` at a network door.
pub fn now_refused() -> ClarifyError {
    ClarifyError::input(format!(
        "`{NOW}` is not accepted here: the server's clock dates every write"
    ))
}

/// Runs `op` (its table name) on `store` with `input` at `clock`, as `by` when a person acts
/// through a server; the input's own `now`, if any, fixes the clock. The result is the
/// command's `--json` document.
pub fn run<S: Store>(
    store: &S,
    op: &str,
    input: &Value,
    clock: Clock<'_>,
    by: Option<&Attribution>,
) -> Result<Value, ClarifyError> {
    let (fixed, input) = take_now(input)?;
    let at = move || fixed.unwrap_or_else(clock);
    let call = Call {
        store,
        clock: &at,
        by,
    };
    dispatch_operation(&call, canonical(op), &input)
}

/// Runs `op` on `store` and returns its `--json` document, `{"ok": true, …}` or
/// `{"ok": false, "error": {"code", "message"}, …}`. `now` is the shell's clock reading,
/// used unless the input gives its own. The routing operations that start agents need
/// [`call_routed`].
pub fn call<S: Store>(store: &S, op: &str, input: &Value, now: i64) -> Value {
    envelope(run(store, op, input, &move || now, None))
}

/// [`call`] for a person acting through a server (docs/protocol.md §23): the record operations
/// write `human`'s entries with `by`/`via`, and `decide {id, message?, value?}` resolves
/// (taking the record first when it is not escalated). The server decides which operations a
/// person may call.
pub fn call_as<S: Store>(store: &S, op: &str, input: &Value, now: i64, by: &Attribution) -> Value {
    if canonical(op) != "decide" {
        return envelope(run(store, op, input, &move || now, Some(by)));
    }
    envelope(take_now(input).and_then(|(fixed, input)| {
        let d: agentx_clarify_core::call::store::Decide =
            agentx_clarify_core::call::decode(&input)?;
        let at = fixed.unwrap_or(now);
        Ok(crate::mutation::decide(store, at, &d.id, d.message, d.value, by)?.to_json())
    }))
}

/// [`call`] for a shell that can start agents: also `route {id}` / `route {all: true,
/// jobs?}`, `monitor {route?}` (routes what the monitor retried; the default is
/// `[clarify] route_on_retry`) and routing through the shell's chat model. `clock` is read
/// when each step happens (a run takes time); an input `now` fixes it.
pub fn call_routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    op: &str,
    input: &Value,
    clock: Clock<'_>,
) -> Value {
    envelope(take_now(input).and_then(|(fixed, input)| {
        let at = move || fixed.unwrap_or_else(clock);
        let routing = Routing {
            call: Call {
                store,
                clock: &at,
                by: None,
            },
            runner,
        };
        routing.run(canonical(op), &input)
    }))
}

/// A result as the envelope.
pub fn envelope(result: Result<Value, ClarifyError>) -> Value {
    result.unwrap_or_else(|e| failure(&e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::MemStore;

    const NOW: i64 = 1_795_341_600_000;

    /// Every operation of the table is callable through the JSON skin: with no fields it is
    /// refused for its input (or runs), never as an unknown operation; the routing ones name
    /// where they run.
    #[test]
    fn every_operation_of_the_table_is_callable() {
        let store = MemStore::new();
        call(&store, "init", &json!({}), NOW);
        for name in OPERATION_NAMES.iter().chain(["request"].iter()) {
            let out = call(&store, name, &json!({}), NOW);
            let message = out["error"]["message"].as_str().unwrap_or_default();
            assert!(!message.contains("unknown operation"), "{name}: {out}");
        }
        let out = call(&store, "routeChatReply", &json!({"id": "CLR-1-001"}), NOW);
        assert!(
            out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("routes to an agent"),
            "{out}"
        );
        let out = call(&store, "nope", &json!({}), NOW);
        assert_eq!(out["error"]["code"], "INVALID_INPUT");
    }

    /// The routing list is the table's: its rows whose names start with `route`.
    #[test]
    fn the_routing_operations_are_the_tables() {
        let mut from_table: Vec<&str> = OPERATION_NAMES
            .iter()
            .copied()
            .filter(|n| n.starts_with("route"))
            .collect();
        let mut listed = ROUTE_OPERATIONS.to_vec();
        from_table.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, from_table);
    }

    #[test]
    fn an_unknown_field_is_refused_with_the_nearest_and_now_is_the_calls() {
        let store = MemStore::new();
        call(&store, "init", &json!({}), NOW);
        let ask = json!({"issueNumber": 1, "from": "engineer", "to": "architect",
                         "topic": "Cache", "question": "Redis?", "blockng": false});
        let out = call(&store, "ask", &ask, NOW);
        assert_eq!(
            out["error"],
            json!({"code": "INVALID_INPUT",
                   "message": "invalid input: unknown field `blockng`; did you mean `blocking`?"})
        );
        assert_eq!(
            store
                .files()
                .keys()
                .filter(|k| k.contains("issue-1"))
                .count(),
            0
        );
        // `now` is the call's: an input's own dates the write; a network door refuses it.
        let mut ask = ask;
        ask.as_object_mut().unwrap().remove("blockng");
        ask["now"] = json!("2026-11-22T10:00:00Z");
        assert!(check_network(&ask).is_err());
        let out = call(&store, "ask", &ask, 0);
        assert_eq!(
            out["clarification"]["thread"][0]["timestamp"],
            "2026-11-22T10:00:00.000Z"
        );
    }
}
