//! `reopen`: a human sends an escalated question back to its target (docs/protocol.md,
//! "Sending a question back") — after fixing a runner, or deciding the agent should answer
//! after all. A `reopen` entry makes the record pending again in the same round; the SLA clock
//! restarts from it and `retries` stays as it was, so the monitor's retry budget is its own.

use super::{check_now, Applied};
use crate::config::Config;
use crate::error::ClarifyError;
use crate::ledger::{EntryKind, Ledger};
use crate::names::{check_agent, check_text, ClarificationId, HUMAN};
use crate::signing::Signers;

/// Reopens escalated record `id`. `from` defaults to (and must be) `human`; `message` is kept
/// in the thread (default "reopened by human"). Guards in the order of every operation: input,
/// `NOT_FOUND`, `INVALID_TRANSITION` (only an escalated record), `NOT_PARTICIPANT`.
pub fn reopen(
    ledger: &Ledger,
    id: &str,
    from: Option<&str>,
    message: Option<&str>,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    check_now(now)?;
    let parsed = ClarificationId::parse(id)?;
    if let Some(actor) = from {
        check_agent(actor)?;
    }
    if let Some(m) = message {
        check_text("message", m, config.max_body_chars as usize)?;
    }
    let (mut ledger, index) = super::located(ledger, &parsed, id)?;
    let Some(record) = ledger.clarifications.get_mut(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };
    super::only_escalated(record, "reopen")?;
    let actor = from.unwrap_or(HUMAN);
    if actor != HUMAN {
        return Err(ClarifyError::NotParticipant {
            actor: actor.to_owned(),
            op: String::from("reopen"),
            id: id.to_owned(),
            allowed: String::from("human"),
        });
    }
    let body = message.map_or_else(|| format!("reopened by {actor}"), str::to_owned);
    record.append_signed(EntryKind::Reopen, actor, &body, now, signers);
    ledger.seal();
    Ok(Applied {
        ledger,
        id: id.to_owned(),
        events: Vec::new(),
        idempotent: false,
        reused: false,
        error: None,
    })
}
