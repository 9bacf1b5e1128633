//! What a PostgreSQL failure means for the caller. Every one is `IO_ERROR` (or
//! `LOCK_TIMEOUT` when a row lock was not granted in time), and its message says whether the
//! command may simply be run again: a failure before `COMMIT` rolled everything back, a
//! connection lost *during* `COMMIT` leaves the outcome unknown.

use agentx_clarify_core::ClarifyError;
use postgres::error::SqlState;

/// Where in a transaction a failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Connecting, or reading outside a transaction.
    Connect,
    /// Inside a transaction, before `COMMIT` was sent: rolled back.
    Before,
    /// `COMMIT` was sent and no answer came back.
    Commit,
}

/// Serialization failures and deadlocks: the transaction was rolled back and may simply run
/// again (the decision closures are pure).
pub(crate) fn is_retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// The connection is gone (server restart, backend terminated, network).
pub(crate) fn is_connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(c) => {
            *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || c.code().starts_with("08")
        }
        // No SQLSTATE: the error came from the socket, not from the server.
        None => e.as_db_error().is_none(),
    }
}

/// The server's own words when it sent any, else the client's.
fn detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text = format!("{text}: {s}");
                source = s.source();
            }
            text
        }
    }
}

/// Converts a failure of `what` (e.g. "update clarifications/issue-42.json") on `target`.
pub(crate) fn failure(target: &str, what: &str, phase: Phase, e: &postgres::Error) -> ClarifyError {
    if let Some(c) = e.code() {
        if *c == SqlState::UNDEFINED_TABLE || *c == SqlState::INVALID_SCHEMA_NAME {
            return io(format!(
                "{target} has no AgentX schema ({}): run `agentx store init`",
                detail(e)
            ));
        }
    }
    let lost = is_connection_lost(e);
    let advice = match (phase, lost) {
        (Phase::Connect, _) => "nothing was written; retry when the server accepts connections",
        (Phase::Before, true) => {
            "the connection was lost before the change was committed, so nothing was written; retry"
        }
        (Phase::Before, false) => "the transaction was rolled back, nothing was written",
        (Phase::Commit, _) => {
            "the connection was lost while committing: the change may or may not have been written; look (e.g. `agentx clarify show`) before retrying"
        }
    };
    io(format!(
        "cannot {what} in {target}: {}; {advice}",
        detail(e)
    ))
}

/// Serialization failures kept coming: nothing was written.
pub(crate) fn gave_up(target: &str, what: &str, attempts: u32) -> ClarifyError {
    io(format!(
        "cannot {what} in {target}: {attempts} attempts ended in serialization failures or deadlocks; nothing was written; retry"
    ))
}

pub(crate) fn io(message: String) -> ClarifyError {
    ClarifyError::Io { message }
}

/// A row lock not granted within `lock_timeout_ms` (SQLSTATE 55P03), as the file store's
/// `LOCK_TIMEOUT`.
pub(crate) fn lock_timeout(
    e: &postgres::Error,
    target: &str,
    what: &str,
    ms: u64,
) -> Option<ClarifyError> {
    (e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)).then(|| ClarifyError::LockTimeout {
        lock: format!("{target} ({what})"),
        ms,
        // PostgreSQL does not name the session that holds a row lock without a query of its
        // own; it has held it at least as long as this one waited.
        holder: String::from("another transaction"),
        age_ms: ms,
    })
}
