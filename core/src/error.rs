//! Errors with stable codes (docs/protocol.md §9). Messages are lowercase, one line, name the offending
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
        "step '{step}' of workflow '{workflow}' does not allow blocking clarifications; ask a non-blocking question"
    )]
    BlockingNotAllowed { workflow: String, step: String },
    #[error("{id} used all {max} rounds and was escalated to a human; resolve it with `agentx clarify resolve {id}`")]
    MaxRoundsExceeded { id: String, max: u32 },
    #[error("{} {} not found", record_kind(id), shown(id))]
    NotFound { id: String },
    #[error("issue #{issue} has no clarifications (there is no ledger for it)")]
    NoLedger { issue: u32 },
    #[error("issue #{issue} has no delegations (there is no delegation ledger for it)")]
    NoDelegations { issue: u32 },
    #[error("agent '{actor}' cannot {op} {id}: only {allowed} may")]
    NotParticipant {
        actor: String,
        op: String,
        id: String,
        allowed: String,
    },
    /// A person who is not among an escalated record's deciders (docs/protocol.md §37).
    #[error("{} cannot {op} {id}: it is assigned to {}, and only they may decide it", who(actor), allowed.join(", "))]
    NotAllowed {
        /// The person, or `None` for a person nobody named (the CLI without `--as`).
        actor: Option<String>,
        op: String,
        id: String,
        allowed: Vec<String>,
    },
    /// Another person holds an escalated record (docs/protocol.md §37): they hand it over.
    #[error("{id} is claimed by {holder} (since {since}); ask them to hand it over: agentx clarify handoff {id} --as {holder} --to <person>")]
    Claimed {
        id: String,
        holder: String,
        since: String,
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
    #[error(
        "could not lock {lock} within {ms} ms: it is held by {holder}, for {age_ms} ms so far"
    )]
    LockTimeout {
        /// The lock file.
        lock: String,
        /// How long acquisition waited.
        ms: u64,
        /// Who holds it, as its lock file says (`agent 'engineer' (pid 4242 on host box)`).
        holder: String,
        /// The lock file's age by its mtime.
        age_ms: u64,
    },
    #[error("i/o error: {message}")]
    Io { message: String },
    #[error("invalid input: {message}")]
    InvalidInput { message: String },
    /// `gate` (docs/protocol.md §16): open `BLOCK` records block the operation; `open` lists their ids.
    #[error("{}", gate_message(*issue, operation, open))]
    GateClosed {
        issue: u32,
        operation: Option<String>,
        open: Vec<String>,
    },
    #[error("{message}")]
    SignatureInvalid { message: String },
    #[error("agent '{agent}' has no runner: add [agents.{agent}] or [agents.default] to .agentx/config.toml (docs/runners.md)")]
    NoRunner { agent: String },
    /// The runner's program cannot be started (a configuration problem): nothing is written.
    #[error("the runner of '{agent}' cannot start: {why}; install it or fix [agents.{agent}] in .agentx/config.toml (docs/runners.md)")]
    RunnerUnavailable { agent: String, why: String },
    #[error("{id} is being routed by {holder}; try again when that run ends")]
    RoutingInProgress { id: String, holder: String },
    #[error("the agent routed {id} failed ({cause}); the record was escalated to a human")]
    AgentError { id: String, cause: String },
    #[error("internal error: {message}")]
    Internal { message: String },
    /// An answer or resolution value that does not fit the question's answer kind (docs/protocol.md
    /// §22); the message names the allowed values.
    #[error("{message}")]
    InvalidAnswer { message: String },
}

/// Who a refused decision was by: a named person, or someone nobody named.
fn who(actor: &Option<String>) -> String {
    match actor {
        Some(name) => format!("'{}'", shown(name)),
        None => String::from("a person who did not say who they are"),
    }
}

/// What an id that was not found names: a delegation (`DLG-…`) or a clarification.
fn record_kind(id: &str) -> &'static str {
    if id.starts_with("DLG-") {
        "delegation"
    } else {
        "clarification"
    }
}

/// A user-supplied value inside a one-line message: at most 80 characters of `value`, control
/// characters escaped, so a message never spans lines nor drowns the reader (the shells that
/// quote input themselves use it too).
pub fn shown(value: &str) -> String {
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
        self.error_code().as_str()
    }

    /// The code as the enum every surface's list is checked against.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ClarifyError::InvalidId { .. } => ErrorCode::InvalidId,
            ClarifyError::InvalidAgent { .. } => ErrorCode::InvalidAgent,
            ClarifyError::InvalidIssue { .. } => ErrorCode::InvalidIssue,
            ClarifyError::TextEmpty { .. } => ErrorCode::TextEmpty,
            ClarifyError::TextTooLong { .. } => ErrorCode::TextTooLong,
            ClarifyError::SelfClarification { .. } => ErrorCode::SelfClarification,
            ClarifyError::ScopeViolation { .. } => ErrorCode::ScopeViolation,
            ClarifyError::BlockingNotAllowed { .. } => ErrorCode::BlockingNotAllowed,
            ClarifyError::MaxRoundsExceeded { .. } => ErrorCode::MaxRoundsExceeded,
            ClarifyError::NotFound { .. }
            | ClarifyError::NoLedger { .. }
            | ClarifyError::NoDelegations { .. } => ErrorCode::NotFound,
            ClarifyError::NotParticipant { .. } => ErrorCode::NotParticipant,
            ClarifyError::NotAllowed { .. } | ClarifyError::Claimed { .. } => ErrorCode::NotAllowed,
            ClarifyError::InvalidTransition { .. } => ErrorCode::InvalidTransition,
            ClarifyError::IdempotencyConflict { .. } => ErrorCode::IdempotencyConflict,
            ClarifyError::InvalidWorkflow { .. } => ErrorCode::InvalidWorkflow,
            ClarifyError::ConfigInvalid { .. } => ErrorCode::ConfigInvalid,
            ClarifyError::LedgerCorrupt { .. } => ErrorCode::LedgerCorrupt,
            ClarifyError::LedgerInconsistent { .. } => ErrorCode::LedgerInconsistent,
            ClarifyError::LockTimeout { .. } => ErrorCode::LockTimeout,
            ClarifyError::Io { .. } => ErrorCode::IoError,
            ClarifyError::InvalidInput { .. } => ErrorCode::InvalidInput,
            ClarifyError::GateClosed { .. } => ErrorCode::GateClosed,
            ClarifyError::SignatureInvalid { .. } => ErrorCode::SignatureInvalid,
            ClarifyError::NoRunner { .. } => ErrorCode::NoRunner,
            ClarifyError::RunnerUnavailable { .. } => ErrorCode::RunnerUnavailable,
            ClarifyError::RoutingInProgress { .. } => ErrorCode::RoutingInProgress,
            ClarifyError::AgentError { .. } => ErrorCode::AgentError,
            ClarifyError::Internal { .. } => ErrorCode::Internal,
            ClarifyError::InvalidAnswer { .. } => ErrorCode::InvalidAnswer,
        }
    }

    /// What kind of failure this is; the shells map classes to exit codes.
    pub fn class(&self) -> ErrorClass {
        self.error_code().class()
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

/// The kinds of failure (docs/protocol.md §13). A caller decides by class — retry, fix the input, ask a
/// human — and the CLI turns a class into its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The request itself is malformed: fix it and try again.
    Input,
    /// Well-formed but refused by policy (scope, rounds, who may act).
    Policy,
    NotFound,
    /// The record's status does not admit the operation.
    Transition,
    /// Someone else holds the file (or the record) right now: retry later.
    Lock,
    /// Stored data does not parse or does not add up; it was left untouched.
    Corrupt,
    Io,
    /// A bug: never the caller's fault.
    Internal,
    /// A routed agent failed (exit status, timeout, error output, no usable answer); the
    /// record was escalated to a human.
    Agent,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 9] = [
        ErrorClass::Input,
        ErrorClass::Policy,
        ErrorClass::NotFound,
        ErrorClass::Transition,
        ErrorClass::Lock,
        ErrorClass::Corrupt,
        ErrorClass::Io,
        ErrorClass::Internal,
        ErrorClass::Agent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Input => "input",
            ErrorClass::Policy => "policy",
            ErrorClass::NotFound => "not-found",
            ErrorClass::Transition => "transition",
            ErrorClass::Lock => "lock",
            ErrorClass::Corrupt => "corrupt",
            ErrorClass::Io => "io",
            ErrorClass::Internal => "internal",
            ErrorClass::Agent => "agent",
        }
    }
}

macro_rules! error_codes {
    ($($variant:ident => $code:literal, $class:ident;)*) => {
        /// Every stable code (docs/protocol.md §9 and the additions in docs/decisions.md), each with its
        /// class. `ClarifyError::error_code` maps every variant here; `ALL` lists them for the
        /// surfaces' own lists (the TypeScript `ErrorCode` union is checked against it).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($variant,)*
        }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            pub fn class(self) -> ErrorClass {
                match self {
                    $(ErrorCode::$variant => ErrorClass::$class,)*
                }
            }

            pub fn parse(code: &str) -> Option<ErrorCode> {
                match code {
                    $($code => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    InvalidId => "INVALID_ID", Input;
    InvalidAgent => "INVALID_AGENT", Input;
    InvalidIssue => "INVALID_ISSUE", Input;
    TextEmpty => "TEXT_EMPTY", Input;
    TextTooLong => "TEXT_TOO_LONG", Input;
    SelfClarification => "SELF_CLARIFICATION", Input;
    ScopeViolation => "SCOPE_VIOLATION", Policy;
    BlockingNotAllowed => "BLOCKING_NOT_ALLOWED", Policy;
    MaxRoundsExceeded => "MAX_ROUNDS_EXCEEDED", Policy;
    NotFound => "NOT_FOUND", NotFound;
    NotParticipant => "NOT_PARTICIPANT", Policy;
    NotAllowed => "NOT_ALLOWED", Policy;
    InvalidTransition => "INVALID_TRANSITION", Transition;
    IdempotencyConflict => "IDEMPOTENCY_CONFLICT", Policy;
    InvalidWorkflow => "INVALID_WORKFLOW", Input;
    ConfigInvalid => "CONFIG_INVALID", Input;
    LedgerCorrupt => "LEDGER_CORRUPT", Corrupt;
    LedgerInconsistent => "LEDGER_INCONSISTENT", Corrupt;
    LockTimeout => "LOCK_TIMEOUT", Lock;
    IoError => "IO_ERROR", Io;
    InvalidInput => "INVALID_INPUT", Input;
    GateClosed => "GATE_CLOSED", Policy;
    SignatureInvalid => "SIGNATURE_INVALID", Corrupt;
    Internal => "INTERNAL", Internal;
    NoRunner => "NO_RUNNER", Input;
    RunnerUnavailable => "RUNNER_UNAVAILABLE", Input;
    RoutingInProgress => "ROUTING_IN_PROGRESS", Lock;
    AgentError => "AGENT_ERROR", Agent;
    InvalidAnswer => "INVALID_ANSWER", Input;
}

/// A code is its text in JSON (`"SIGNATURE_INVALID"`).
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ErrorCode::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown error code '{}'", shown(&text)))
        })
    }
}

/// The class of a code as text; unknown codes are internal.
pub fn class_of(code: &str) -> ErrorClass {
    ErrorCode::parse(code).map_or(ErrorClass::Internal, ErrorCode::class)
}

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
        assert_eq!((e.code(), e.class()), ("GATE_CLOSED", ErrorClass::Policy));
        let text = e.to_string();
        assert!(text.starts_with("gate closed on issue #4: 12 open BLOCK clarification(s) block operation 'build' (CLR-4-001, "), "{text}");
        assert!(text.contains("CLR-4-010 and 2 more)"), "{text}");
        let e = ClarifyError::SignatureInvalid {
            message: "x".into(),
        };
        assert_eq!(
            (e.code(), e.class()),
            ("SIGNATURE_INVALID", ErrorClass::Corrupt)
        );
    }

    #[test]
    fn every_code_parses_back_and_is_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
        }
        assert_eq!(class_of("NOPE"), ErrorClass::Internal);
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
        assert_eq!(e.class(), ErrorClass::Input);
    }
}
