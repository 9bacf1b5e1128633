//! The transition table: for each (status, operation), who may perform it.

use crate::ledger::Status;
use crate::names::{HUMAN, MONITOR};

/// Operations on an existing record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Answer,
    FollowUp,
    Resolve,
    Abandon,
    Escalate,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Answer => "answer",
            Op::FollowUp => "follow-up",
            Op::Resolve => "resolve",
            Op::Abandon => "abandon",
            Op::Escalate => "escalate",
        }
    }

    /// The spelling of the JSON API and the bindings (`followUp`).
    pub fn api_name(self) -> &'static str {
        match self {
            Op::FollowUp => "followUp",
            other => other.as_str(),
        }
    }

    pub const ALL: [Op; 5] = [
        Op::Answer,
        Op::FollowUp,
        Op::Resolve,
        Op::Abandon,
        Op::Escalate,
    ];
}

/// Who may perform an operation in a given status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Only the record's target (`to`).
    Target,
    /// Only the requester (`from`).
    Requester,
    /// The requester or the monitor.
    RequesterOrMonitor,
    /// Only a human.
    Human,
    /// Any valid actor.
    Anyone,
}

impl Who {
    pub fn admits(self, actor: &str, requester: &str, target: &str) -> bool {
        match self {
            Who::Target => actor == target,
            Who::Requester => actor == requester,
            Who::RequesterOrMonitor => actor == requester || actor == MONITOR,
            Who::Human => actor == HUMAN,
            Who::Anyone => true,
        }
    }

    /// The spelling of the JSON API's `transitions` table.
    pub fn as_str(self) -> &'static str {
        match self {
            Who::Target => "target",
            Who::Requester => "requester",
            Who::RequesterOrMonitor => "requesterOrMonitor",
            Who::Human => "human",
            Who::Anyone => "anyone",
        }
    }

    pub fn describe(self, requester: &str, target: &str) -> String {
        match self {
            Who::Target => format!("the target '{target}'"),
            Who::Requester => format!("the requester '{requester}'"),
            Who::RequesterOrMonitor => format!("the requester '{requester}' or 'monitor'"),
            Who::Human => String::from("'human'"),
            Who::Anyone => String::from("anyone"),
        }
    }
}

/// The table of docs/protocol.md §4. A legacy record with an empty thread admits only escalate and
/// abandon (it has no question to answer, follow up or resolve).
pub fn who_may(status: Status, op: Op, legacy_empty: bool) -> Option<Who> {
    use Status::*;
    if legacy_empty && !matches!(op, Op::Escalate | Op::Abandon) {
        return None;
    }
    match (status, op) {
        (Pending | Stale, Op::Answer) => Some(Who::Target),
        (Answered, Op::FollowUp | Op::Resolve) => Some(Who::Requester),
        (Escalated, Op::Resolve) => Some(Who::Human),
        // A person may also drop what was handed to them (GitHub Mode's `/abandon`,
        // docs/github.md): the record waits on nobody else.
        (Escalated, Op::Abandon) => Some(Who::Human),
        (Pending | Stale | Answered, Op::Abandon) => Some(Who::RequesterOrMonitor),
        (Pending | Stale | Answered, Op::Escalate) => Some(Who::Anyone),
        _ => None,
    }
}

/// The operations a status admits, for `INVALID_TRANSITION` messages.
pub fn allowed_ops(status: Status, legacy_empty: bool) -> String {
    let ops: Vec<String> = Op::ALL
        .into_iter()
        .filter_map(|op| {
            who_may(status, op, legacy_empty).map(|who| match who {
                Who::Human => format!("{} (by human)", op.as_str()),
                _ => op.as_str().to_owned(),
            })
        })
        .collect();
    if ops.is_empty() {
        String::from("none (the record is closed)")
    } else {
        ops.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_states_admit_nothing() {
        for op in Op::ALL {
            assert!(who_may(Status::Resolved, op, false).is_none());
            assert!(who_may(Status::Abandoned, op, false).is_none());
        }
        assert_eq!(
            allowed_ops(Status::Resolved, false),
            "none (the record is closed)"
        );
    }

    #[test]
    fn allowed_lists() {
        assert_eq!(
            allowed_ops(Status::Pending, false),
            "answer, abandon, escalate"
        );
        assert_eq!(
            allowed_ops(Status::Answered, false),
            "follow-up, resolve, abandon, escalate"
        );
        assert_eq!(
            allowed_ops(Status::Escalated, false),
            "resolve (by human), abandon (by human)"
        );
        assert_eq!(allowed_ops(Status::Pending, true), "abandon, escalate");
    }
}
