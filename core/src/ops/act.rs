//! Operations on an existing record: answer, follow-up, resolve, abandon, escalate.

use super::transition::{allowed_ops, who_may, Op};
use super::{check_now, Applied};
use crate::config::Config;
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::{EntryKind, Ledger, Status};
use crate::names::{check_agent, check_text, ClarificationId, AGENT_X, HUMAN};
use crate::signing::Signers;

/// An operation on an existing record, with its actor and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Answer {
        from: String,
        body: String,
    },
    FollowUp {
        from: String,
        question: String,
    },
    /// `from` defaults to `human` on an escalated record, else the requester.
    Resolve {
        from: Option<String>,
        message: Option<String>,
    },
    /// `from` defaults to `human`.
    Escalate {
        from: Option<String>,
        message: Option<String>,
    },
    /// `from` defaults to the requester.
    Abandon {
        from: Option<String>,
        message: Option<String>,
    },
}

impl Action {
    fn op(&self) -> Op {
        match self {
            Action::Answer { .. } => Op::Answer,
            Action::FollowUp { .. } => Op::FollowUp,
            Action::Resolve { .. } => Op::Resolve,
            Action::Escalate { .. } => Op::Escalate,
            Action::Abandon { .. } => Op::Abandon,
        }
    }

    fn explicit_actor(&self) -> Option<&str> {
        match self {
            Action::Answer { from, .. } | Action::FollowUp { from, .. } => Some(from),
            Action::Resolve { from, .. }
            | Action::Escalate { from, .. }
            | Action::Abandon { from, .. } => from.as_deref(),
        }
    }

    /// (field name, text) to validate.
    fn text(&self) -> Option<(&'static str, &str)> {
        match self {
            Action::Answer { body, .. } => Some(("answer", body)),
            Action::FollowUp { question, .. } => Some(("question", question)),
            Action::Resolve { message, .. }
            | Action::Escalate { message, .. }
            | Action::Abandon { message, .. } => message.as_deref().map(|m| ("message", m)),
        }
    }
}

impl Action {
    /// Input validation (the first guard): the id, the actor when given, the text. Shells call
    /// it before reading the ledger the id names, so input errors win over file errors.
    pub fn validate(&self, id: &str, config: &Config) -> Result<ClarificationId, ClarifyError> {
        let parsed = ClarificationId::parse(id)?;
        if let Some(actor) = self.explicit_actor() {
            check_agent(actor)?;
        }
        if let Some((field, text)) = self.text() {
            check_text(field, text, config.max_body_chars as usize)?;
        }
        Ok(parsed)
    }
}

/// Applies `action` to record `id`, unsigned: [`act_with`] with no keys.
pub fn act(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
) -> Result<Applied, ClarifyError> {
    act_with(ledger, id, action, config, now, &Signers::default())
}

/// Applies `action` to record `id`. Guards run in the order of docs/protocol.md §4: input validation,
/// `NOT_FOUND`, `INVALID_TRANSITION`, `NOT_PARTICIPANT`. The entry is signed when `signers`
/// holds the key that may sign for its author (the hub key for `agent-x` and `human`).
pub fn act_with(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    check_now(now)?;
    let parsed = action.validate(id, config)?;
    let index = (parsed.issue == ledger.issue_number)
        .then(|| ledger.position(id))
        .flatten()
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let mut ledger = ledger.clone();
    let issue = ledger.issue_number;
    let Some(record) = ledger.clarifications.get_mut(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };

    let op = action.op();
    let status = record.current_status();
    let legacy_empty = record.is_legacy_empty();
    let Some(who) = who_may(status, op, legacy_empty) else {
        return Err(ClarifyError::InvalidTransition {
            op: op.as_str().to_owned(),
            id: id.to_owned(),
            status: status.as_str().to_owned(),
            allowed: allowed_ops(status, legacy_empty),
        });
    };
    let actor = match action.explicit_actor() {
        Some(a) => a.to_owned(),
        None => match action {
            Action::Resolve { .. } if status == Status::Escalated => HUMAN.to_owned(),
            Action::Escalate { .. } => HUMAN.to_owned(),
            _ => record.from.clone(),
        },
    };
    if !who.admits(&actor, &record.from, &record.to) {
        return Err(ClarifyError::NotParticipant {
            actor,
            op: op.as_str().to_owned(),
            id: id.to_owned(),
            allowed: who.describe(&record.from, &record.to),
        });
    }

    // A person's decision says something: the asker resumes from it (docs/protocol.md).
    if let Action::Resolve { message, .. } = action {
        if status == Status::Escalated
            && actor == HUMAN
            && message.as_deref().is_none_or(|m| m.trim().is_empty())
        {
            return Err(ClarifyError::input(format!(
                "a decision is needed: resolving escalated {id} as human takes a message (-m TEXT) that the asker resumes from"
            )));
        }
    }
    let mut error = None;
    let (kind, author, body) = match action {
        Action::Answer { body, .. } => (EntryKind::Answer, actor, body.clone()),
        Action::FollowUp { question, .. } => {
            let round = record.folded_round();
            if round >= record.max_rounds {
                error = Some(ClarifyError::MaxRoundsExceeded {
                    id: id.to_owned(),
                    max: record.max_rounds,
                });
                let reason = format!("max rounds reached ({} of {})", round, record.max_rounds);
                (EntryKind::Escalation, AGENT_X.to_owned(), reason)
            } else {
                (EntryKind::Question, actor, question.clone())
            }
        }
        Action::Resolve { message, .. } => (
            EntryKind::Resolution,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("resolved by {actor}")),
        ),
        Action::Escalate { message, .. } => (
            EntryKind::Escalation,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("escalated by {actor}")),
        ),
        Action::Abandon { message, .. } => (
            EntryKind::Abandonment,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("abandoned by {actor}")),
        ),
    };
    let at = record.append_signed(kind, &author, &body, now, signers);
    let events = Event::for_entry(issue, record, kind, &author, &body, at)
        .into_iter()
        .collect();
    ledger.seal();
    Ok(Applied {
        ledger,
        id: id.to_owned(),
        events,
        idempotent: false,
        error,
    })
}
