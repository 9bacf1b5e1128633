//! The one table from a failure to its MCP answer (docs/protocol.md §9, "One table per
//! protocol"), by the error's class (`core/src/error.rs`), as `cli/src/exit.rs` maps a class
//! to an exit code. A tool's refusal is never a protocol error: every code is a tool result with
//! `isError: true` and the code in its text and `structuredContent` (`reply.rs`), so the model
//! reads it. A resource read has no such result, so its failure is a JSON-RPC error, chosen
//! here; the message is always `<CODE>: <message>`.

use agentx_clarify_core::error::{ErrorClass, ErrorCode};
use rmcp::model::ErrorData;

/// The JSON-RPC error of a resource read that failed with `code`.
pub fn resource_error(code: ErrorCode, message: &str) -> ErrorData {
    let text = format!("{}: {message}", code.as_str());
    // The workspace's own settings do not parse: the client sent none (HTTP's one exception
    // too, serve/src/status.rs).
    if code == ErrorCode::ConfigInvalid {
        return ErrorData::internal_error(text, None);
    }
    match code.class() {
        ErrorClass::NotFound => ErrorData::resource_not_found(text, None),
        // The URI names a record or an issue badly: the client can change it.
        ErrorClass::Input => ErrorData::invalid_params(text, None),
        // A read is refused by nothing else the client sent: the hub failed.
        ErrorClass::Policy
        | ErrorClass::Transition
        | ErrorClass::Lock
        | ErrorClass::Io
        | ErrorClass::Corrupt
        | ErrorClass::Internal
        | ErrorClass::Agent => ErrorData::internal_error(text, None),
    }
}

/// [`resource_error`] of a command-layer envelope's error (a code it does not know is the
/// hub's fault).
pub fn resource_error_of(envelope: &serde_json::Value) -> ErrorData {
    let field = |key: &str| {
        envelope
            .pointer(&format!("/error/{key}"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let (code, message) = (field("code"), field("message"));
    match ErrorCode::parse(code) {
        Some(code) => resource_error(code, message),
        None => ErrorData::internal_error(format!("{code}: {message}"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode as Rpc;

    /// Every code, with the JSON-RPC error docs/protocol.md §9 documents for a resource read.
    #[test]
    fn every_code_has_its_documented_resource_error() {
        for code in ErrorCode::ALL {
            let expected = match code.as_str() {
                "NOT_FOUND" => Rpc::RESOURCE_NOT_FOUND,
                "INVALID_ID" | "INVALID_AGENT" | "INVALID_ISSUE" | "TEXT_EMPTY"
                | "TEXT_TOO_LONG" | "SELF_CLARIFICATION" | "INVALID_WORKFLOW" | "INVALID_INPUT"
                | "NO_RUNNER" | "RUNNER_UNAVAILABLE" | "INVALID_ANSWER" => Rpc::INVALID_PARAMS,
                "SCOPE_VIOLATION"
                | "BLOCKING_NOT_ALLOWED"
                | "MAX_ROUNDS_EXCEEDED"
                | "NOT_PARTICIPANT"
                | "NOT_ALLOWED"
                | "INVALID_TRANSITION"
                | "IDEMPOTENCY_CONFLICT"
                | "GATE_CLOSED"
                | "LOCK_TIMEOUT"
                | "ROUTING_IN_PROGRESS"
                | "IO_ERROR"
                | "LEDGER_CORRUPT"
                | "LEDGER_INCONSISTENT"
                | "SIGNATURE_INVALID"
                | "INTERNAL"
                | "AGENT_ERROR"
                | "CONFIG_INVALID" => Rpc::INTERNAL_ERROR,
                other => unreachable!(
                    "{other} has no documented error: add it here and to docs/protocol.md §9"
                ),
            };
            let e = resource_error(*code, "why");
            assert_eq!(e.code, expected, "{}", code.as_str());
            assert_eq!(e.message, format!("{}: why", code.as_str()));
            let envelope = serde_json::json!({"ok": false, "error": {"code": code.as_str(), "message": "why"}});
            assert_eq!(resource_error_of(&envelope).code, expected);
        }
        let stranger = serde_json::json!({"ok": false, "error": {"code": "NO_LEDGER"}});
        assert_eq!(resource_error_of(&stranger).code, Rpc::INTERNAL_ERROR);
    }
}
