//! `gate` (docs/protocol.md §16): "refuse, don't guess" for build scripts, hooks and CI. An operation may
//! proceed when no open `BLOCK` record of the issue blocks it.

use serde::Serialize;

use crate::error::ClarifyError;
use crate::ledger::{Ledger, Record, Severity, Status};
use crate::names::check_operation;

/// An open gap that keeps the gate closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenGap {
    pub clarification_id: String,
    pub gap_id: Option<String>,
    pub session_id: Option<String>,
    pub field: Option<String>,
    pub topic: String,
    pub severity: Severity,
    pub from: String,
    pub to: String,
    pub status: Status,
    /// Empty: the record blocks every operation.
    pub blocked_operations: Vec<String>,
}

impl OpenGap {
    fn of(record: &Record, status: Status) -> OpenGap {
        OpenGap {
            clarification_id: record.id.clone(),
            gap_id: record.gap_id.clone(),
            session_id: record.session_id.clone(),
            field: record.field.clone(),
            topic: record.topic.clone(),
            severity: record.severity(),
            from: record.from.clone(),
            to: record.to.clone(),
            status,
            blocked_operations: record.blocked_operations.clone(),
        }
    }
}

/// The gate of one issue for one operation (None: any operation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    pub issue_number: u32,
    pub operation: Option<String>,
    /// The open `BLOCK` records that block the operation, in ledger order; empty: open.
    pub open: Vec<OpenGap>,
}

impl Gate {
    pub fn is_closed(&self) -> bool {
        !self.open.is_empty()
    }

    /// `GATE_CLOSED` (exit 4) naming the open gaps, or None when the operation may proceed.
    pub fn error(&self) -> Option<ClarifyError> {
        self.is_closed().then(|| ClarifyError::GateClosed {
            issue: self.issue_number,
            operation: self.operation.clone(),
            open: self
                .open
                .iter()
                .map(|g| g.clarification_id.clone())
                .collect(),
        })
    }
}

/// Decides the gate of issue `issue` (whose ledger is `ledger`, None when it has none) for
/// `operation`. An open record is pending, stale, answered (the requester has not accepted
/// the answer yet) or escalated; it blocks when its severity is `BLOCK` and its
/// `blockedOperations` is empty or names the operation. Only a malformed operation name is
/// an error here; a closed gate is a [`Gate`] whose [`Gate::error`] is `GATE_CLOSED`.
pub fn gate(
    issue: u32,
    ledger: Option<&Ledger>,
    operation: Option<&str>,
) -> Result<Gate, ClarifyError> {
    if let Some(op) = operation {
        check_operation(op)?;
    }
    let open = ledger
        .map(|l| l.clarifications.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            let status = r.current_status();
            (status.is_open() && r.severity().is_blocking() && r.blocks(operation))
                .then(|| OpenGap::of(r, status))
        })
        .collect();
    Ok(Gate {
        issue_number: issue,
        operation: operation.map(str::to_owned),
        open,
    })
}
