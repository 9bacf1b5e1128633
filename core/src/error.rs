//! Errors with stable codes (SPEC §9). Messages are lowercase, one line, name the offending
//! value and say what is allowed; the code is what programs match on.

use thiserror::Error;

/// Every failure the core (and the shells around it) can report.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClarifyError {
    #[error("invalid clarification id '{}': {why}", shown(id))]
    InvalidId { id: String, why: String },
    #[error("invalid agent name '{}': {why}", shown(name))]
    InvalidAgent { name: String, why: String },
    #[error(
        "invalid issue number '{}': expected a decimal integer from 0 to 2147483647",
        shown(value)
    )]
    InvalidIssue { value: String },
    #[error("{field} is empty: at least 1 character is required")]
    TextEmpty { field: String },
    #[error("{field} is too long: {len} {unit}, at most {max} allowed")]
    TextTooLong {
        field: String,
        len: usize,
        max: usize,
        /// What is counted: "characters" (Unicode scalar values) or "suggestions".
        unit: &'static str,
    },
    #[error("agent '{agent}' cannot ask itself for clarification; ask another agent")]
    SelfClarification { agent: String },
    #[error("{message}")]
    ScopeViolation { message: String },
    #[error(
        "step '{step}' of workflow '{workflow}' does not allow blocking clarifications; ask with --non-blocking"
    )]
    BlockingNotAllowed { workflow: String, step: String },
    #[error("{id} used all {max} rounds and was escalated to a human; resolve it with `agentx clarify resolve {id}`")]
    MaxRoundsExceeded { id: String, max: u32 },
    #[error("clarification {} not found", shown(id))]
    NotFound { id: String },
    #[error("issue #{issue} has no clarifications (there is no ledger for it)")]
    NoLedger { issue: u32 },
    #[error("agent '{actor}' cannot {op} {id}: only {allowed} may")]
    NotParticipant {
        actor: String,
        op: String,
        id: String,
        allowed: String,
    },
    #[error("cannot {op} {id}: it is {status}; allowed: {allowed}")]
    InvalidTransition {
        op: String,
        id: String,
        status: String,
        allowed: String,
    },
    #[error("idempotency key '{}' already belongs to {id}, which was asked with a different from, to, topic, question, severity or blocked operations", shown(key))]
    IdempotencyConflict { key: String, id: String },
    #[error("workflow '{}' {why}", shown(name))]
    InvalidWorkflow { name: String, why: String },
    #[error("{}", config_message(file, location, message))]
    ConfigInvalid {
        file: String,
        /// 1-based (line, column), when the value could be located.
        location: Option<(usize, usize)>,
        message: String,
    },
    #[error("{file} is corrupt ({message}); it was left untouched")]
    LedgerCorrupt { file: String, message: String },
    #[error("{message}")]
    LedgerInconsistent { message: String },
    #[error("could not lock {path} within {ms} ms; another process holds it")]
    LockTimeout { path: String, ms: u64 },
    #[error("i/o error: {message}")]
    Io { message: String },
    #[error("invalid input: {message}")]
    InvalidInput { message: String },
    /// `gate` (SPEC §16): open `BLOCK` records block the operation; `open` lists their ids.
    #[error("{}", gate_message(*issue, operation, open))]
    GateClosed {
        issue: u32,
        operation: Option<String>,
        open: Vec<String>,
    },
    #[error("{message}")]
    SignatureInvalid { message: String },
    #[error("internal error: {message}")]
    Internal { message: String },
}

/// A user-supplied value inside a one-line message: control characters escaped, long values
/// cut, so a message never spans lines nor drowns the reader.
pub(crate) fn shown(value: &str) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Ids shown in a `GATE_CLOSED` message before it says how many more there are.
const GATE_IDS_SHOWN: usize = 10;

fn gate_message(issue: u32, operation: &Option<String>, open: &[String]) -> String {
    let what = match operation {
        Some(op) => format!("operation '{}'", shown(op)),
        None => String::from("every operation"),
    };
    let mut ids = open
        .iter()
        .take(GATE_IDS_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if open.len() > GATE_IDS_SHOWN {
        ids.push_str(&format!(" and {} more", open.len() - GATE_IDS_SHOWN));
    }
    format!(
        "gate closed on issue #{issue}: {} open BLOCK clarification(s) block {what} ({ids}); answer and resolve them first",
        open.len()
    )
}

fn config_message(file: &str, location: &Option<(usize, usize)>, message: &str) -> String {
    match location {
        Some((line, column)) => format!("{file}:{line}:{column}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl ClarifyError {
    /// The stable machine code, identical on every surface.
    pub fn code(&self) -> &'static str {
        match self {
            ClarifyError::InvalidId { .. } => "INVALID_ID",
            ClarifyError::InvalidAgent { .. } => "INVALID_AGENT",
            ClarifyError::InvalidIssue { .. } => "INVALID_ISSUE",
            ClarifyError::TextEmpty { .. } => "TEXT_EMPTY",
            ClarifyError::TextTooLong { .. } => "TEXT_TOO_LONG",
            ClarifyError::SelfClarification { .. } => "SELF_CLARIFICATION",
            ClarifyError::ScopeViolation { .. } => "SCOPE_VIOLATION",
            ClarifyError::BlockingNotAllowed { .. } => "BLOCKING_NOT_ALLOWED",
            ClarifyError::MaxRoundsExceeded { .. } => "MAX_ROUNDS_EXCEEDED",
            ClarifyError::NotFound { .. } | ClarifyError::NoLedger { .. } => "NOT_FOUND",
            ClarifyError::NotParticipant { .. } => "NOT_PARTICIPANT",
            ClarifyError::InvalidTransition { .. } => "INVALID_TRANSITION",
            ClarifyError::IdempotencyConflict { .. } => "IDEMPOTENCY_CONFLICT",
            ClarifyError::InvalidWorkflow { .. } => "INVALID_WORKFLOW",
            ClarifyError::ConfigInvalid { .. } => "CONFIG_INVALID",
            ClarifyError::LedgerCorrupt { .. } => "LEDGER_CORRUPT",
            ClarifyError::LedgerInconsistent { .. } => "LEDGER_INCONSISTENT",
            ClarifyError::LockTimeout { .. } => "LOCK_TIMEOUT",
            ClarifyError::Io { .. } => "IO_ERROR",
            ClarifyError::InvalidInput { .. } => "INVALID_INPUT",
            ClarifyError::GateClosed { .. } => "GATE_CLOSED",
            ClarifyError::SignatureInvalid { .. } => "SIGNATURE_INVALID",
            ClarifyError::Internal { .. } => "INTERNAL",
        }
    }

    /// The CLI exit code for this error (SPEC §11.1).
    pub fn exit_code(&self) -> i32 {
        exit_code_of(self.code())
    }

    pub(crate) fn corrupt(file: impl Into<String>, message: impl Into<String>) -> Self {
        ClarifyError::LedgerCorrupt {
            file: file.into(),
            message: message.into(),
        }
    }

    /// `INVALID_INPUT` with `message`.
    pub fn input(message: impl Into<String>) -> Self {
        ClarifyError::InvalidInput {
            message: message.into(),
        }
    }
}

/// The CLI exit code for an error code (SPEC §11.1); unknown codes are internal errors (1).
pub fn exit_code_of(code: &str) -> i32 {
    match code {
        "INVALID_ID" | "INVALID_AGENT" | "INVALID_ISSUE" | "INVALID_WORKFLOW" | "TEXT_EMPTY"
        | "TEXT_TOO_LONG" | "SELF_CLARIFICATION" | "CONFIG_INVALID" | "INVALID_INPUT" => 3,
        "SCOPE_VIOLATION"
        | "BLOCKING_NOT_ALLOWED"
        | "MAX_ROUNDS_EXCEEDED"
        | "NOT_PARTICIPANT"
        | "IDEMPOTENCY_CONFLICT"
        | "GATE_CLOSED" => 4,
        "NOT_FOUND" => 5,
        "INVALID_TRANSITION" => 6,
        "LOCK_TIMEOUT" => 7,
        "LEDGER_CORRUPT" | "LEDGER_INCONSISTENT" | "SIGNATURE_INVALID" => 8,
        _ => 1,
    }
}

/// Every code, for tests and documentation.
pub const ALL_CODES: &[&str] = &[
    "INVALID_ID",
    "INVALID_AGENT",
    "INVALID_ISSUE",
    "TEXT_EMPTY",
    "TEXT_TOO_LONG",
    "SELF_CLARIFICATION",
    "SCOPE_VIOLATION",
    "BLOCKING_NOT_ALLOWED",
    "MAX_ROUNDS_EXCEEDED",
    "NOT_FOUND",
    "NOT_PARTICIPANT",
    "INVALID_TRANSITION",
    "IDEMPOTENCY_CONFLICT",
    "INVALID_WORKFLOW",
    "CONFIG_INVALID",
    "LEDGER_CORRUPT",
    "LEDGER_INCONSISTENT",
    "LOCK_TIMEOUT",
    "IO_ERROR",
    "GATE_CLOSED",
    "SIGNATURE_INVALID",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        let e = ClarifyError::InvalidAgent {
            name: "eng\nineer".into(),
            why: "x".into(),
        };
        assert_eq!(e.to_string(), "invalid agent name 'eng\\nineer': x");
        let long = "a".repeat(500);
        assert!(ClarifyError::InvalidIssue { value: long }.to_string().len() < 200);
    }

    #[test]
    fn layer4_codes_and_exits() {
        let open: Vec<String> = (1..=12).map(|n| format!("CLR-4-{n:03}")).collect();
        let e = ClarifyError::GateClosed {
            issue: 4,
            operation: Some("build".into()),
            open,
        };
        assert_eq!((e.code(), e.exit_code()), ("GATE_CLOSED", 4));
        let text = e.to_string();
        assert!(text.starts_with("gate closed on issue #4: 12 open BLOCK clarification(s) block operation 'build' (CLR-4-001, "), "{text}");
        assert!(text.contains("CLR-4-010 and 2 more)"), "{text}");
        let e = ClarifyError::SignatureInvalid {
            message: "x".into(),
        };
        assert_eq!((e.code(), e.exit_code()), ("SIGNATURE_INVALID", 8));
        assert!(ALL_CODES.contains(&"GATE_CLOSED") && ALL_CODES.contains(&"SIGNATURE_INVALID"));
    }

    #[test]
    fn config_errors_carry_their_location() {
        let e = ClarifyError::ConfigInvalid {
            file: "feature.toml".into(),
            location: Some((4, 22)),
            message: "clarify_max_rounds must be an integer from 1 to 20, found 50".into(),
        };
        assert_eq!(
            e.to_string(),
            "feature.toml:4:22: clarify_max_rounds must be an integer from 1 to 20, found 50"
        );
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert_eq!(e.exit_code(), 3);
    }
}
