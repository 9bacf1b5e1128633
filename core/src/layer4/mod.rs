//! Layer 4 of the Agent Clarification Protocol (seed 001, docs/protocol.md §16): refuse, don't guess.
//!
//! - [`Plan`]: a plan's field-level gaps, each with a severity (`BLOCK` | `WARN`);
//! - [`check`]: every gap becomes a request (idempotent per session and gap) and the answer
//!   is Layer 4's response, `needs_clarification` or `ready_to_proceed`;
//! - [`gate`]: may an operation proceed? Not while an open `BLOCK` record blocks it;
//! - [`audit`]: the signed, timestamped ask/answer chain, verified.
//!
//! All pure: the shells read the plan, the ledger and the keys, draw the session id and the
//! clock, and write what comes back.

mod audit;
mod check;
mod gate;
mod plan;

pub use audit::{audit, Audit, AuditGap, AuditProblem, AuditRound, AuditScope, AuditStep};
pub use check::{
    check, gap_key, gap_requests, response, session_of, CheckArgs, CheckResponse, Checked,
    GapStatus, PROTOCOL_VERSION,
};
pub use gate::{gate, Gate, OpenGap};
pub use plan::{Plan, PlanGap, MAX_PLAN_GAPS};

#[cfg(test)]
mod tests;
