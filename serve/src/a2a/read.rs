//! A clarification as the A2A task an agent may see, read through the command layer as typed
//! records: what `rpc.rs` answers with and what `stream.rs` follows.

use agentx_clarify_a2a::protocol::{A2AError, Task};
use agentx_clarify_core::error::ErrorCode;
use agentx_clarify_core::ClarifyError;

use super::task::task_of;
use crate::hub::App;

/// A JSON-RPC error of A2A (codes of `a2a-lf`'s error table; `errors.rs` maps ours).
pub struct RpcError(pub A2AError);

impl RpcError {
    pub fn params(message: impl Into<String>) -> RpcError {
        RpcError(A2AError::invalid_params(message))
    }

    pub fn not_found(id: &str) -> RpcError {
        RpcError(A2AError::task_not_found(id))
    }
}

/// The task `id` as `agent` may see it: the tasks of the issues it takes part in. A task
/// that does not exist and one `agent` may not see get the same `TaskNotFound`, word for
/// word (issue 48): the answer tells nothing of other agents' tasks.
pub async fn read(app: &App, agent: &str, id: &str) -> Result<Task, RpcError> {
    let wanted = id.to_owned();
    let read = app
        .with_store(move |ws| {
            let (issue, record) = agentx_clarify_command::show_id(ws, &wanted)?;
            let ledger = agentx_clarify_command::show_issue(ws, issue)?;
            Ok::<_, ClarifyError>((issue, record, ledger.clarifications))
        })
        .await;
    let (issue, record, records) = match read {
        Ok(read) => read,
        Err(e) if e.error_code() == ErrorCode::NotFound => return Err(RpcError::not_found(id)),
        Err(e) => return Err(RpcError(super::errors::of_error(&e, Some(id)))),
    };
    // The one rule of every door (docs/protocol.md §23, `command::seen`): the records of the
    // issues the agent takes part in (it asked, or was asked, one of their questions).
    if !records.iter().any(|r| r.from == agent || r.to == agent) {
        return Err(RpcError::not_found(id));
    }
    Ok(task_of(issue, &record, &records))
}
