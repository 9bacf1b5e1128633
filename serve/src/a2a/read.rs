//! A clarification as the A2A task an agent may see, read through the command layer, and the
//! command layer's envelope as a JSON-RPC result or error: what `rpc.rs` answers with and
//! what `stream.rs` follows.

use agentx_clarify_a2a::protocol::{A2AError, Task};
use serde_json::{json, Value};

use super::task::task_of;
use crate::hub::App;

/// A JSON-RPC error of A2A (codes of `a2a-lf`'s error table).
pub struct RpcError(pub A2AError);

impl RpcError {
    pub fn params(message: impl Into<String>) -> RpcError {
        RpcError(A2AError::invalid_params(message))
    }

    pub fn not_found(id: &str) -> RpcError {
        RpcError(A2AError::task_not_found(id))
    }
}

/// The command layer's envelope as a result, its error as a JSON-RPC error.
pub fn envelope(v: Value, id: Option<&str>) -> Result<Value, RpcError> {
    if v["ok"] == true {
        return Ok(v);
    }
    let code = v["error"]["code"].as_str().unwrap_or("INTERNAL").to_owned();
    let message = v["error"]["message"].as_str().unwrap_or("").to_owned();
    let mut e = match code.as_str() {
        "NOT_FOUND" => A2AError::task_not_found(id.unwrap_or("")),
        "INVALID_TRANSITION" => A2AError::task_not_cancelable(id.unwrap_or("")),
        "IO_ERROR" | "INTERNAL" | "LOCK_TIMEOUT" | "STORE_UNAVAILABLE" => {
            A2AError::internal(format!("{code}: {message}"))
        }
        _ => A2AError::invalid_params(format!("{code}: {message}")),
    };
    e.message = format!("{code}: {message}");
    Err(RpcError(e))
}

/// The task `id` as `agent` may see it: the asker's or the target's question only. A task
/// that does not exist and one `agent` may not see get the same `TaskNotFound`, word for
/// word (issue 48): the answer tells nothing of other agents' tasks.
pub async fn read(app: &App, agent: &str, id: &str) -> Result<Task, RpcError> {
    let shown = app
        .call(String::from("show"), json!({"id": id}), None)
        .await;
    if shown["error"]["code"] == "NOT_FOUND" {
        return Err(RpcError::not_found(id));
    }
    let shown = envelope(shown, Some(id))?;
    let record = &shown["clarification"];
    let issue = record["issueNumber"].as_u64().unwrap_or(0);
    let ledger = app
        .call(String::from("show"), json!({"issue": issue}), None)
        .await;
    let ledger = envelope(ledger, Some(id))?;
    let records = ledger["ledger"]["clarifications"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // The one rule of every door (docs/protocol.md §23): the records of the issues the agent
    // takes part in.
    if !agentx_clarify_command::seen::takes_part(agent, &records) {
        return Err(RpcError::not_found(id));
    }
    Ok(task_of(record, &records))
}
