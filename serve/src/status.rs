//! The one table from a failure to its HTTP status, for `/api/v1` and the pages (docs/api.md
//! "Over HTTP"): by the error's class (`core/src/error.rs`), as `cli/src/exit.rs` maps a class
//! to an exit code, with the exceptions written beside it.

use agentx_clarify_core::error::{ErrorClass, ErrorCode};
use axum::http::StatusCode;
use serde_json::Value;

/// The status of a failure of `class`.
pub fn of_class(class: ErrorClass) -> StatusCode {
    match class {
        ErrorClass::Input => StatusCode::BAD_REQUEST,
        // Refused by the rules as the records stand (scope, rounds, who may act, the gate).
        ErrorClass::Policy | ErrorClass::Transition => StatusCode::CONFLICT,
        ErrorClass::NotFound => StatusCode::NOT_FOUND,
        // Someone else holds the file or the record: try again shortly.
        ErrorClass::Lock | ErrorClass::Io => StatusCode::SERVICE_UNAVAILABLE,
        ErrorClass::Corrupt | ErrorClass::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        // The routed agent (the server's upstream) failed; its record went to a human.
        ErrorClass::Agent => StatusCode::BAD_GATEWAY,
    }
}

/// The status of `code`: its class's, but for the one code whose class speaks for the CLI
/// rather than for an HTTP caller.
pub fn of_code(code: ErrorCode) -> StatusCode {
    match code {
        // The workspace's own settings do not parse: the caller sent none, so it is the
        // server's fault (the CLI's user edits the file: exit 3 there).
        ErrorCode::ConfigInvalid => StatusCode::INTERNAL_SERVER_ERROR,
        // The caller is known and may not decide this record (docs/protocol.md §37): the
        // request is understood and refused for who sent it.
        ErrorCode::NotAllowed => StatusCode::FORBIDDEN,
        other => of_class(other.class()),
    }
}

/// The status of an envelope: 200 when `ok`, else by its error's code (a code the table does
/// not know is the server's fault).
pub fn of_envelope(envelope: &Value) -> StatusCode {
    if envelope.get("ok") == Some(&Value::Bool(true)) {
        return StatusCode::OK;
    }
    envelope
        .pointer("/error/code")
        .and_then(Value::as_str)
        .and_then(ErrorCode::parse)
        .map_or(StatusCode::INTERNAL_SERVER_ERROR, of_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code, with the status docs/api.md documents for it.
    #[test]
    fn every_code_has_its_documented_status() {
        for code in ErrorCode::ALL {
            let expected = match code.as_str() {
                "CONFIG_INVALID" => 500,
                "NOT_FOUND" => 404,
                "NOT_ALLOWED" => 403,
                "SCOPE_VIOLATION"
                | "BLOCKING_NOT_ALLOWED"
                | "MAX_ROUNDS_EXCEEDED"
                | "NOT_PARTICIPANT"
                | "INVALID_TRANSITION"
                | "IDEMPOTENCY_CONFLICT"
                | "GATE_CLOSED" => 409,
                "LOCK_TIMEOUT" | "ROUTING_IN_PROGRESS" | "IO_ERROR" => 503,
                "LEDGER_CORRUPT" | "LEDGER_INCONSISTENT" | "SIGNATURE_INVALID" | "INTERNAL" => 500,
                "AGENT_ERROR" => 502,
                "INVALID_ID" | "INVALID_AGENT" | "INVALID_ISSUE" | "TEXT_EMPTY"
                | "TEXT_TOO_LONG" | "SELF_CLARIFICATION" | "INVALID_WORKFLOW" | "INVALID_INPUT"
                | "NO_RUNNER" | "RUNNER_UNAVAILABLE" | "INVALID_ANSWER" => 400,
                other => {
                    unreachable!("{other} has no documented status: add it here and to docs/api.md")
                }
            };
            assert_eq!(of_code(*code).as_u16(), expected, "{}", code.as_str());
            let envelope = serde_json::json!({"ok": false, "error": {"code": code.as_str()}});
            assert_eq!(of_envelope(&envelope).as_u16(), expected);
        }
        assert_eq!(
            of_envelope(&serde_json::json!({"ok": true})),
            StatusCode::OK
        );
        let stranger = serde_json::json!({"ok": false, "error": {"code": "NO_LEDGER"}});
        assert_eq!(of_envelope(&stranger), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
