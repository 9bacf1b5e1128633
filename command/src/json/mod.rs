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

use agentx_clarify_core::call::table::Operation;
use agentx_clarify_core::call::{take_now, NOW};
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::ClarifyError;
use serde_json::Value;

use crate::route::{Clock, Runner};
use crate::store::Store;

pub use agentx_clarify_core::call::table::{OPERATIONS, OPERATION_NAMES};
pub use agentx_clarify_core::envelope::{failure, ok};
pub use dispatch::run;

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

/// `op`'s typed call and the input's own `now`, if any.
pub fn decode(op: &str, input: &Value) -> Result<(Operation, Option<i64>), ClarifyError> {
    let (now, rest) = take_now(input)?;
    Ok((Operation::parse(op, &rest)?, now))
}

/// [`decode`] at a network door (`/api/v1/call`, A2A, MCP over HTTP): only the server's clock
/// counts there, so an input `now` is refused (docs/security-serve.md).
pub fn decode_network(op: &str, input: &Value) -> Result<Operation, ClarifyError> {
    if input.get(NOW).is_some() {
        return Err(now_refused());
    }
    Operation::parse(op, input)
}

/// The refusal of an input `now` at a network door.
pub fn now_refused() -> ClarifyError {
    ClarifyError::input(format!(
        "`{NOW}` is not accepted here: the server's clock dates every write"
    ))
}

/// Runs `op` on `store` and returns its `--json` document, `{"ok": true, …}` or
/// `{"ok": false, "error": {"code", "message"}, …}`. `now` is the shell's clock reading,
/// used unless the input gives its own. The routing operations that start agents need
/// [`call_routed`].
pub fn call<S: Store>(store: &S, op: &str, input: &Value, now: i64) -> Value {
    envelope(decode(op, input).and_then(|(call, fixed)| {
        let at = fixed.unwrap_or(now);
        run(store, call, &move || at, None)
    }))
}

/// [`call`] for a person acting through a server (docs/protocol.md §23): the record operations
/// write `human`'s entries with `by`/`via`, and `decide {id, message?, value?}` resolves
/// (taking the record first when it is not escalated). The server decides which operations a
/// person may call.
pub fn call_as<S: Store>(store: &S, op: &str, input: &Value, now: i64, by: &Attribution) -> Value {
    envelope(decode(op, input).and_then(|(call, fixed)| {
        let at = fixed.unwrap_or(now);
        run(store, call, &move || at, Some(by))
    }))
}

/// [`call`] for a shell that can start agents: also `route {id}` / `route {all: true,
/// jobs?}`, and `monitor {route?}` (routes what the monitor retried; the default is
/// `[clarify] route_on_retry`). `clock` is read when each step happens (a run takes time);
/// an input `now` fixes it.
pub fn call_routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    op: &str,
    input: &Value,
    clock: Clock<'_>,
) -> Value {
    envelope(decode(op, input).and_then(|(call, fixed)| match fixed {
        Some(at) => dispatch::routed(store, runner, call, &move || at),
        None => dispatch::routed(store, runner, call, clock),
    }))
}

/// [`call_routed`] with a typed call (the server decodes at its door first).
pub fn run_routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    call: Operation,
    clock: Clock<'_>,
) -> Value {
    envelope(dispatch::routed(store, runner, call, clock))
}

/// [`run`]'s result as the envelope.
pub fn envelope(result: Result<Value, ClarifyError>) -> Value {
    result.unwrap_or_else(|e| failure(&e))
}
