//! What routing writes (docs/protocol.md §14.2 step 6), decided on the ledger as it stands under its
//! lock after the run: nothing when someone else moved the record on meanwhile
//! (`superseded`); else the answer, the question asked back, or the escalation. Pure; the
//! command layer calls it inside the ledger's update.

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::error::ClarifyError;
use crate::ledger::{Ledger, Record, Status};
use crate::names::AGENT_X;
use crate::ops::{act_with, request_forwarding, Action, Applied};
use crate::replies::ASKED_BACK;
use crate::routing::interpret::Interpretation;
use crate::signing::Signers;
use crate::workflow::Workflows;

/// How a routing ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Answered,
    AskedBack,
    Escalated,
    /// The record was answered, escalated, closed or asked again meanwhile: nothing written.
    Superseded,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::AskedBack => "asked-back",
            Outcome::Escalated => "escalated",
            Outcome::Superseded => "superseded",
        }
    }
}

/// The decision, with what to write.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub outcome: Outcome,
    /// The new ledger and its events (`None`: superseded, nothing to write).
    pub applied: Option<Applied>,
    /// The record asked back (a new request), when the outcome is `asked-back`.
    pub asked: Option<String>,
    /// Why the record was escalated (the entry's reason), when it was.
    pub reason: Option<String>,
    /// The agent failed: its cause (the outcome is then `escalated`).
    pub agent_error: Option<String>,
}

impl Decision {
    fn superseded() -> Decision {
        Decision {
            outcome: Outcome::Superseded,
            applied: None,
            asked: None,
            reason: None,
            agent_error: None,
        }
    }
}

/// A routed agent's answer to a typed question (docs/protocol.md §22): an answer whose first line is no
/// option, when the question accepts nothing else, is an agent error (`answer fits no
/// option`), escalated like any; every other reading is unchanged.
pub fn fit_to_kind(reading: Interpretation, record: &Record) -> Interpretation {
    match &reading {
        Interpretation::Answer { answer }
            if !record.answer.allows_other()
                && record
                    .answer
                    .match_reply(answer.lines().next().unwrap_or_default())
                    .is_none() =>
        {
            Interpretation::AgentError {
                cause: String::from(NO_OPTION_FITS),
            }
        }
        _ => reading,
    }
}

/// The agent error of an answer that fits no option of a closed question.
pub const NO_OPTION_FITS: &str = "answer fits no option";

/// Whether `record` can still take what a run started in `round` produced.
pub fn still_routable(record: &Record, round: u32) -> bool {
    matches!(record.current_status(), Status::Pending | Status::Stale)
        && record.folded_round() == round
}

/// Which run [`decide`] decides on: record `id`'s, started in `round`, and what it said.
#[derive(Clone, Copy)]
pub struct RunOf<'a> {
    pub id: &'a str,
    pub round: u32,
    pub run: &'a Interpretation,
}

/// Decides what the run of record `id` (started in `round`) writes on `ledger` as it is now.
/// What it writes is signed when `signers` holds the author's key (the target's for an
/// answer or a question asked back, the hub key for an escalation).
pub fn decide(
    ledger: Option<&Ledger>,
    of: RunOf<'_>,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    signers: &Signers,
) -> Result<Decision, ClarifyError> {
    let RunOf { id, round, run } = of;
    let Some((ledger, record)) = ledger.and_then(|l| l.find(id).map(|r| (l, r))) else {
        return Ok(Decision::superseded());
    };
    if !still_routable(record, round) {
        return Ok(Decision::superseded());
    }
    let max = config.max_body_chars as usize;
    let escalate = |reason: String, agent_error: Option<String>| {
        let reason = cut(&reason, max);
        let action = Action::Escalate {
            from: Some(AGENT_X.to_owned()),
            message: Some(reason.clone()),
        };
        act_with(ledger, id, &action, config, now, signers).map(|applied| Decision {
            outcome: Outcome::Escalated,
            applied: Some(applied),
            asked: None,
            reason: Some(reason),
            agent_error,
        })
    };
    match run {
        Interpretation::Answer { answer } => {
            // A typed question (docs/protocol.md §22): the reply's first line names the value.
            let first = answer.lines().next().unwrap_or_default();
            let action = match record.answer.match_reply(first) {
                Some(value) => Action::AnswerValue {
                    from: record.to.clone(),
                    body: Some(answer.clone()),
                    value,
                },
                None if record.answer.allows_other() => Action::Answer {
                    from: record.to.clone(),
                    body: answer.clone(),
                },
                // Shells read the run through `fit_to_kind` first; a caller that did not still
                // escalates instead of recording an answer the question does not accept.
                None => {
                    let cause = String::from(NO_OPTION_FITS);
                    return escalate(format!("agent error: {cause}"), Some(cause));
                }
            };
            act_with(ledger, id, &action, config, now, signers).map(|applied| Decision {
                outcome: Outcome::Answered,
                applied: Some(applied),
                asked: None,
                reason: None,
                agent_error: None,
            })
        }
        Interpretation::AskedBack { questions, to } => {
            let mut req = asked_back_request(
                ledger.issue_number,
                record,
                questions,
                to.as_deref(),
                config,
            )?;
            req.extra.insert(ASKED_BACK.to_owned(), Value::from(id));
            match request_forwarding(Some(ledger.clone()), &req, config, workflows, now, signers) {
                Ok(applied) => Ok(Decision {
                    outcome: Outcome::AskedBack,
                    asked: Some(applied.id.clone()),
                    applied: Some(applied),
                    reason: None,
                    agent_error: None,
                }),
                // The questions must not be lost: a human sees them with the refusal.
                Err(refused) => escalate(
                    format!(
                        "agent asked back: {} (asking '{}' was refused: {refused})",
                        questions.join(" / "),
                        req.to
                    ),
                    None,
                ),
            }
        }
        Interpretation::Stopped {
            blocker_type,
            details,
        } => {
            let reason = match details {
                Some(d) => format!("agent stopped: {blocker_type}: {d}"),
                None => format!("agent stopped: {blocker_type}"),
            };
            escalate(reason, None)
        }
        Interpretation::AgentError { cause } => {
            escalate(format!("agent error: {cause}"), Some(cause.clone()))
        }
    }
}

/// The request a routed agent asks back (docs/protocol.md §14.2): from the target to the requester (or
/// to the block's `to`), topic `Re: <topic>`, one question listing the block's questions,
/// blocking, under the ledger's workflow. Every other field keeps `NewRequest`'s default, so
/// fields a request gains later get their defaults here too.
pub fn asked_back_request(
    issue: u32,
    record: &Record,
    questions: &[String],
    to: Option<&str>,
    config: &Config,
) -> Result<crate::ops::NewRequest, ClarifyError> {
    let question = match questions {
        [one] => one.clone(),
        many => many
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{}. {q}", i + 1))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Ok(crate::ops::NewRequest {
        issue_number: u64::from(issue),
        from: record.to.clone(),
        to: to.unwrap_or(&record.from).to_owned(),
        topic: cut(
            &format!("Re: {}", record.topic),
            config.max_topic_chars as usize,
        ),
        question,
        blocking: true,
        ..crate::ops::NewRequest::default()
    })
}

/// At most `max` characters, the cut marked with `…`.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let kept: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", kept.trim_end())
    }
}
