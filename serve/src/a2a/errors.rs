//! The one table from a failure to its A2A JSON-RPC error (docs/protocol.md §9): by the
//! error's class (`core/src/error.rs`), as `cli/src/exit.rs` maps a class to an exit code. The
//! message is always `<CODE>: <message>`, so a client reads the stable code whatever the
//! JSON-RPC number.

use agentx_clarify_a2a::protocol::A2AError;
use agentx_clarify_core::error::{ErrorClass, ErrorCode};
use agentx_clarify_core::ClarifyError;

/// The JSON-RPC error of a failure of `code` about task `task` (when one is named).
pub fn of_code(code: ErrorCode, message: &str, task: Option<&str>) -> A2AError {
    let task = task.unwrap_or("");
    let mut e = match code.class() {
        // The workspace's own settings do not parse: the caller sent none (the HTTP table's
        // one exception too, `status.rs`).
        _ if code == ErrorCode::ConfigInvalid => A2AError::internal(""),
        ErrorClass::NotFound => A2AError::task_not_found(task),
        // The only transition A2A names on a task is cancelling it.
        ErrorClass::Transition => A2AError::task_not_cancelable(task),
        // The request (its text, its metadata) or the rules refuse it: the caller can change
        // what it sends.
        ErrorClass::Input | ErrorClass::Policy => A2AError::invalid_params(""),
        // The hub could not do it now or at all; nothing the caller sent is wrong.
        ErrorClass::Lock
        | ErrorClass::Io
        | ErrorClass::Corrupt
        | ErrorClass::Internal
        | ErrorClass::Agent => A2AError::internal(""),
    };
    e.message = format!("{}: {message}", code.as_str());
    e
}

/// [`of_code`] of a typed failure.
pub fn of_error(e: &ClarifyError, task: Option<&str>) -> A2AError {
    of_code(e.error_code(), &e.to_string(), task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_clarify_a2a::protocol::error_code as rpc;

    /// Every code, with the JSON-RPC error docs/protocol.md §9 documents for it.
    #[test]
    fn every_code_has_its_documented_error() {
        for code in ErrorCode::ALL {
            let expected = match code.as_str() {
                "NOT_FOUND" => rpc::TASK_NOT_FOUND,
                "INVALID_TRANSITION" => rpc::TASK_NOT_CANCELABLE,
                "LOCK_TIMEOUT"
                | "ROUTING_IN_PROGRESS"
                | "IO_ERROR"
                | "LEDGER_CORRUPT"
                | "LEDGER_INCONSISTENT"
                | "SIGNATURE_INVALID"
                | "INTERNAL"
                | "AGENT_ERROR"
                | "CONFIG_INVALID" => rpc::INTERNAL_ERROR,
                "INVALID_ID"
                | "INVALID_AGENT"
                | "INVALID_ISSUE"
                | "TEXT_EMPTY"
                | "TEXT_TOO_LONG"
                | "SELF_CLARIFICATION"
                | "SCOPE_VIOLATION"
                | "BLOCKING_NOT_ALLOWED"
                | "MAX_ROUNDS_EXCEEDED"
                | "NOT_PARTICIPANT"
                | "NOT_ALLOWED"
                | "IDEMPOTENCY_CONFLICT"
                | "INVALID_WORKFLOW"
                | "INVALID_INPUT"
                | "GATE_CLOSED"
                | "NO_RUNNER"
                | "RUNNER_UNAVAILABLE"
                | "INVALID_ANSWER" => rpc::INVALID_PARAMS,
                other => unreachable!(
                    "{other} has no documented error: add it here and to docs/protocol.md §9"
                ),
            };
            let e = of_code(*code, "why", Some("CLR-1-001"));
            assert_eq!(e.code, expected, "{}", code.as_str());
            assert_eq!(e.message, format!("{}: why", code.as_str()));
        }
    }
}
