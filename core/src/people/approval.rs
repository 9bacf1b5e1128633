//! `approve` (docs/protocol.md §37): a decider's approval of an escalated record's decision —
//! a new one (`message`, `value`, read by the record's answer kind as every decision is), or,
//! with neither, the first one proposed, as written. On a record that needs one decider it
//! decides at once, as `resolve` does.

use serde_json::Value;

use super::claim::PersonCall;
use super::quorum::{approve, proposals, quorum_of, Approval};
use crate::error::ClarifyError;
use crate::ledger::Ledger;
use crate::ops::Applied;

/// `by` approves a decision on escalated record `id`. Guards in the order of every
/// operation: input, `NOT_FOUND`, `INVALID_TRANSITION` (only an escalated record), then
/// `NOT_ALLOWED` for a person who may not decide it.
pub fn approve_decision(
    ledger: &Ledger,
    call: PersonCall<'_>,
    message: Option<&str>,
    value: Option<&Value>,
) -> Result<Applied, ClarifyError> {
    let PersonCall {
        id,
        by,
        now,
        signers,
        ..
    } = call;
    let (mut ledger, index) = call.escalated(ledger, "approve", message, || Ok(()))?;
    let issue = ledger.issue_number;
    let Some(record) = ledger.clarifications.get_mut(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };
    super::check_decider(record, Some(&by.by), "approve")?;
    let (body, value, seconds) = if message.is_none() && value.is_none() {
        // "Approve as written": the first decision proposed, whoever proposed it.
        let first = proposals(record)
            .into_iter()
            .find_map(|p| p.by.into_iter().next())
            .ok_or_else(|| {
                ClarifyError::input(format!(
                    "nothing to approve yet on {id}: propose the decision (-m TEXT, or --value)"
                ))
            })?;
        let body = format!("approves {first}'s decision as written");
        (body, None, Some(first))
    } else {
        let (body, value) = record.answer.decision(message, value)?;
        (body, value, None)
    };
    let q = quorum_of(record).unwrap_or(1);
    let approval = Approval {
        body: &body,
        value,
        person: by.fields(),
        seconds: seconds.as_deref(),
    };
    let events = approve(record, issue, approval, q, now, signers);
    ledger.seal();
    Ok(Applied {
        ledger,
        id: id.to_owned(),
        events,
        idempotent: false,
        reused: false,
        error: None,
    })
}
