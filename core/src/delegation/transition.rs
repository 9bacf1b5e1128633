//! The delegation transition table: for each (status, operation), who may perform it.
//!
//! | status    | accept | complete | reject (capability, context) | fail   | timeout |
//! |-----------|--------|----------|------------------------------|--------|---------|
//! | REQUESTED | target | target   | target                       | target | —       |
//! | ACCEPTED  | —      | target   | target                       | target | monitor |
//! | others    | —      | —        | —                            | —      | —       |
//!
//! "target" also admits `human` (an operator closing a delegation by hand). Completing a
//! request that was never accepted is allowed: a specialist that reports done has started.

use super::Status;
use crate::names::{HUMAN, MONITOR};

/// Operations on an existing delegation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Accept,
    Complete,
    RejectCapability,
    RejectContext,
    Fail,
    Timeout,
}

impl Op {
    pub const ALL: [Op; 6] = [
        Op::Accept,
        Op::Complete,
        Op::RejectCapability,
        Op::RejectContext,
        Op::Fail,
        Op::Timeout,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Accept => "accept",
            Op::Complete => "complete",
            Op::RejectCapability => "reject (capability)",
            Op::RejectContext => "reject (context)",
            Op::Fail => "fail",
            Op::Timeout => "time out",
        }
    }

    /// The status the operation leads to.
    pub fn status_after(self) -> Status {
        match self {
            Op::Accept => Status::Accepted,
            Op::Complete => Status::Completed,
            Op::RejectCapability => Status::RejectedCapability,
            Op::RejectContext => Status::RejectedContext,
            Op::Fail => Status::FailedExecution,
            Op::Timeout => Status::Timeout,
        }
    }
}

/// Who may perform an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The delegation's target (`to`), or `human`.
    Target,
    /// Only the monitor.
    Monitor,
}

impl Who {
    pub fn admits(self, actor: &str, target: &str) -> bool {
        match self {
            Who::Target => actor == target || actor == HUMAN,
            Who::Monitor => actor == MONITOR,
        }
    }

    pub fn describe(self, target: &str) -> String {
        match self {
            Who::Target => format!("the target '{target}' or 'human'"),
            Who::Monitor => String::from("'monitor'"),
        }
    }
}

pub fn who_may(status: Status, op: Op) -> Option<Who> {
    match (status, op) {
        (Status::Requested, Op::Accept) => Some(Who::Target),
        (Status::Accepted, Op::Timeout) => Some(Who::Monitor),
        (
            Status::Requested | Status::Accepted,
            Op::Complete | Op::RejectCapability | Op::RejectContext | Op::Fail,
        ) => Some(Who::Target),
        _ => None,
    }
}

/// The operations a status admits, for `INVALID_TRANSITION` messages.
pub fn allowed_ops(status: Status) -> String {
    let ops: Vec<&str> = Op::ALL
        .into_iter()
        .filter(|op| who_may(status, *op).is_some())
        .map(Op::as_str)
        .collect();
    if ops.is_empty() {
        String::from("none (the delegation is closed)")
    } else {
        ops.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        assert_eq!(
            allowed_ops(Status::Requested),
            "accept, complete, reject (capability), reject (context), fail"
        );
        assert_eq!(
            allowed_ops(Status::Accepted),
            "complete, reject (capability), reject (context), fail, time out"
        );
        for s in [
            Status::Completed,
            Status::RejectedCapability,
            Status::RejectedContext,
            Status::Timeout,
            Status::FailedExecution,
        ] {
            assert_eq!(allowed_ops(s), "none (the delegation is closed)");
            assert!(!s.is_open());
        }
        for op in Op::ALL {
            if let Some(who) = who_may(Status::Accepted, op) {
                assert_eq!(who == Who::Monitor, op == Op::Timeout);
            }
        }
        assert!(Who::Target.admits("human", "b"));
        assert!(!Who::Target.admits("a", "b"));
        assert!(!Who::Monitor.admits("b", "b"));
    }
}
