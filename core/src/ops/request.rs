//! `request`: a new clarification record (validation → idempotency → scope → write), and
//! `request_escalated`: one created already escalated to a human (no scope: no one is asked).

use serde_json::{Map, Value};

use super::asked_back::{self, Forward, Link};
use super::{check_now, Applied};
use crate::config::{Config, MAX_SHORT_TEXT, MAX_SUGGESTIONS};
use crate::error::ClarifyError;
use crate::events::{Event, EventType};
use crate::kinds::{fingerprint, AnswerSpec};
use crate::ledger::{EntryKind, Ledger, Record, Reuses, Severity, Status};
use crate::names::{
    check_agent, check_issue, check_line, check_operation, check_text, check_uuid,
    check_workflow_name, is_reserved, AGENT_X,
};
use crate::scope::{self, default_max_rounds, Ask};
use crate::signing::Signers;
use crate::time::Timestamp;
use crate::workflow::{Workflows, DEFAULT_SLA_MINUTES};

/// At most this many `blockedOperations` per record (docs/protocol.md §16).
pub const MAX_BLOCKED_OPERATIONS: usize = 20;
/// Longest `gapId` (docs/protocol.md §16).
pub const MAX_GAP_ID: usize = 64;

/// What an agent asks. Layer 4's fields (docs/protocol.md §16) are optional: all empty is a request as
/// before Layer 4. Build one with `..NewRequest::default()` for the fields you leave out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRequest {
    pub issue_number: u64,
    pub from: String,
    pub to: String,
    pub topic: String,
    pub question: String,
    /// Ignored when `severity` is given (`BLOCK` blocks): see [`NewRequest::is_blocking`].
    pub blocking: bool,
    pub workflow: Option<String>,
    pub step: Option<String>,
    pub field: Option<String>,
    pub suggestions: Vec<String>,
    pub idempotency_key: Option<String>,
    /// `BLOCK` or `WARN`; absent, the record's severity follows `blocking`.
    pub severity: Option<Severity>,
    pub context: Option<String>,
    /// Operations the record blocks while open (the gate); empty blocks every operation.
    pub blocked_operations: Vec<String>,
    /// A UUID naming the Layer 4 session the gap belongs to.
    pub session_id: Option<String>,
    pub gap_id: Option<String>,
    /// The answer kind asked for (docs/protocol.md §22); the default is a text question.
    pub answer: AnswerSpec,
    /// Ask even when the issue holds a record with the same fingerprint (docs/protocol.md §22).
    pub ask_again: bool,
    /// Record fields beyond the protocol's, kept on the new record (e.g. the `signal` an
    /// ingested block came from). Not compared on an idempotent replay.
    pub extra: Map<String, Value>,
}

/// Empty texts, no options, and blocking — the default of every surface's `blocking`.
impl Default for NewRequest {
    fn default() -> Self {
        NewRequest {
            issue_number: 0,
            from: String::new(),
            to: String::new(),
            topic: String::new(),
            question: String::new(),
            blocking: true,
            workflow: None,
            step: None,
            field: None,
            suggestions: Vec::new(),
            idempotency_key: None,
            severity: None,
            context: None,
            blocked_operations: Vec::new(),
            session_id: None,
            gap_id: None,
            answer: AnswerSpec::default(),
            ask_again: false,
            extra: Map::new(),
        }
    }
}

impl NewRequest {
    /// docs/protocol.md §6.4 step 1, in the documented order, then Layer 4's fields (context, blocked
    /// operations: count, each name, duplicates; session id, gap id). Shells call it before
    /// reading the ledger so that input errors win over file errors; [`request`] runs it
    /// again (it is cheap).
    pub fn validate(&self, config: &Config) -> Result<u32, ClarifyError> {
        let issue = check_issue(self.issue_number)?;
        check_agent(&self.from)?;
        check_agent(&self.to)?;
        if let Some(w) = &self.workflow {
            check_workflow_name(w)?;
        }
        check_line("topic", &self.topic, config.max_topic_chars as usize)?;
        check_text("question", &self.question, config.max_body_chars as usize)?;
        if let Some(f) = &self.field {
            check_line("field", f, MAX_SHORT_TEXT)?;
        }
        if self.suggestions.len() > MAX_SUGGESTIONS {
            return Err(ClarifyError::TextTooLong {
                field: String::from("suggestions"),
                len: self.suggestions.len(),
                max: MAX_SUGGESTIONS,
                unit: "suggestions",
            });
        }
        for s in &self.suggestions {
            check_line("suggestion", s, MAX_SHORT_TEXT)?;
        }
        if let Some(k) = &self.idempotency_key {
            check_line("idempotency key", k, MAX_SHORT_TEXT)?;
        }
        self.validate_layer4(config)?;
        self.answer.validate()?;
        Ok(issue)
    }

    fn validate_layer4(&self, config: &Config) -> Result<(), ClarifyError> {
        if let Some(c) = &self.context {
            check_text("context", c, config.max_body_chars as usize)?;
        }
        if self.blocked_operations.len() > MAX_BLOCKED_OPERATIONS {
            return Err(ClarifyError::TextTooLong {
                field: String::from("blocked operations"),
                len: self.blocked_operations.len(),
                max: MAX_BLOCKED_OPERATIONS,
                unit: "operations",
            });
        }
        for (i, op) in self.blocked_operations.iter().enumerate() {
            check_operation(op)?;
            if self.blocked_operations.iter().take(i).any(|o| o == op) {
                return Err(ClarifyError::input(format!(
                    "blocked operation '{op}' is listed twice; list each operation once"
                )));
            }
        }
        if let Some(s) = &self.session_id {
            check_uuid("session id", s)?;
        }
        if let Some(g) = &self.gap_id {
            check_line("gap id", g, MAX_GAP_ID)?;
        }
        Ok(())
    }

    /// Whether the record blocks its requester: `severity` when given, else `blocking`.
    pub fn is_blocking(&self) -> bool {
        self.severity.map_or(self.blocking, Severity::is_blocking)
    }

    /// Whether `record` was asked with this request, for an idempotent replay: the same
    /// requester, target, topic and first question, and Layer 4's severity and blocked
    /// operations as given (they decide the gate); context, session and gap ids do not take
    /// part (see `docs/decisions.md`).
    fn asked(&self, record: &Record) -> bool {
        let first_question = record.thread.iter().find(|e| e.kind == EntryKind::Question);
        record.from == self.from
            && record.to == self.to
            && record.topic == self.topic
            && first_question.is_some_and(|q| q.body == self.question)
            && record.severity == self.severity
            && record.blocked_operations == self.blocked_operations
    }
}

/// Opens a clarification on `ledger` (None: the issue has no ledger yet), unsigned:
/// [`request_owned`] on a copy, with no keys.
pub fn request(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
) -> Result<Applied, ClarifyError> {
    request_owned(
        ledger.cloned(),
        req,
        config,
        workflows,
        now,
        &Signers::default(),
    )
}

/// [`request`], signed (the question is signed when `signers` holds the requester's key,
/// [`Signers::for_author`]), on a ledger the caller hands over: a store's update gives the
/// decision its own copy, so it is moved into the result instead of copied once more (on a
/// ledger of hundreds of records the copy is most of an ask's work).
pub fn request_owned(
    ledger: Option<Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    let opening = decide_request(ledger.as_ref(), req, config, workflows, now)?;
    Ok(sealed(open(ledger, opening, req, now, signers)))
}

/// [`request_owned`] for routing's asks back, which may send the question on to a third agent
/// (`askedBack` then links it without putting it in the conversation's scope).
pub(crate) fn request_forwarding(
    ledger: Option<Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    let opening = decide_request_with(
        ledger.as_ref(),
        req,
        config,
        workflows,
        now,
        Forward::Allowed,
    )?;
    Ok(sealed(open(ledger, opening, req, now, signers)))
}

/// A record created already escalated to a human (docs/protocol.md §17: a subagent that asks no one in
/// particular, or stops work): the question by the requester, then an escalation by `agent-x`
/// with `reason`. `req.to` may be `human`; no workflow governs the record, so it gets the
/// default round limit and SLA. Validation and idempotency are `request`'s. Entries are
/// signed as [`request_owned`]'s (the escalation with the hub key).
pub fn request_escalated(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    reason: &str,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    let opening = decide_escalated(ledger, req, reason, config, now)?;
    Ok(sealed(open(ledger.cloned(), opening, req, now, signers)))
}

/// A new record's ledger is sealed for writing; a replay's is returned as it was.
fn sealed(mut applied: Applied) -> Applied {
    if !applied.idempotent {
        applied.ledger.seal();
    }
    applied
}

/// What a request decided, before anything is built: the ledger can then be moved in
/// instead of copied (ingest opens many records on one ledger).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Opening {
    /// The idempotency key already names this record.
    Replay(String),
    /// The issue already holds this question (docs/protocol.md §22): the record at this index answers it.
    Reuse(usize),
    /// A new record on issue `issue`; `escalate` gives the reason of one created escalated.
    New {
        issue: u32,
        limits: Limits,
        escalate: Option<Escalate>,
    },
}

/// The escalation a record is created with: its reason, and who it is assigned to when the
/// settings define people (docs/protocol.md §37).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Escalate {
    pub reason: String,
    pub assigner: Option<crate::people::Assigner>,
}

/// Every guard of [`request_owned`], in order, on the ledger as it is.
pub(crate) fn decide_request(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
) -> Result<Opening, ClarifyError> {
    decide_request_with(ledger, req, config, workflows, now, Forward::Refused)
}

/// [`decide_request`]; `forward` says whether `askedBack` may link a question sent on to a
/// third agent (routing's `[CLARIFICATION_NEEDED]` block with `to:`).
pub(crate) fn decide_request_with(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    forward: Forward,
) -> Result<Opening, ClarifyError> {
    let issue = prepare(ledger, req, config, now)?;
    if let Some(id) = replay(ledger, req)? {
        return Ok(Opening::Replay(id));
    }
    if let Some(Link::Conversation(asked)) = asked_back::link(ledger, req, forward)? {
        // In the conversation's scope: whatever the workflow's steps allow, under the
        // question's own limits (its workflow is the ledger's).
        if is_reserved(&req.to) {
            return Err(ClarifyError::InvalidAgent {
                name: req.to.clone(),
                why: String::from("reserved actors (human, monitor, agent-x) cannot be asked"),
            });
        }
        return Ok(Opening::New {
            issue,
            limits: Limits {
                max_rounds: asked.max_rounds,
                sla_minutes: asked.sla_minutes,
                workflow: ledger.and_then(|l| l.workflow.clone()),
            },
            escalate: None,
        });
    }
    let grant = scope::check(
        &Ask {
            from: &req.from,
            to: &req.to,
            blocking: req.is_blocking(),
            workflow: req.workflow.as_deref(),
            step: req.step.as_deref(),
            ledger_workflow: ledger.and_then(|l| l.workflow.as_deref()),
        },
        config,
        workflows,
    )?;
    if let Some(index) = reusable(ledger, req, issue) {
        return Ok(Opening::Reuse(index));
    }
    Ok(Opening::New {
        issue,
        limits: Limits {
            max_rounds: grant.max_rounds,
            sla_minutes: grant.sla_minutes,
            workflow: Some(grant.workflow),
        },
        escalate: None,
    })
}

/// Every guard of [`request_escalated`], in order, on the ledger as it is.
pub(crate) fn decide_escalated(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    reason: &str,
    config: &Config,
    now: i64,
) -> Result<Opening, ClarifyError> {
    let issue = prepare(ledger, req, config, now)?;
    check_text("reason", reason, config.max_body_chars as usize)?;
    if req.from == req.to {
        return Err(ClarifyError::SelfClarification {
            agent: req.from.clone(),
        });
    }
    if let Some(id) = replay(ledger, req)? {
        return Ok(Opening::Replay(id));
    }
    Ok(Opening::New {
        issue,
        limits: Limits {
            max_rounds: default_max_rounds(req.is_blocking()),
            sla_minutes: DEFAULT_SLA_MINUTES,
            workflow: None,
        },
        escalate: Some(Escalate {
            reason: reason.to_owned(),
            assigner: crate::people::Assigner::of(config),
        }),
    })
}

/// Validation, `now`, and that the ledger is the request's issue's.
fn prepare(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    config: &Config,
    now: i64,
) -> Result<u32, ClarifyError> {
    check_now(now)?;
    let issue = req.validate(config)?;
    if let Some(l) = ledger.filter(|l| l.issue_number != issue) {
        return Err(ClarifyError::input(format!(
            "the ledger is for issue {} but the request is for issue {issue}",
            l.issue_number
        )));
    }
    Ok(issue)
}

/// An agent that crashed and re-sends its request gets the original record back. Keys are
/// scoped by requester (docs/protocol.md §31): another agent's record under the same key is not this
/// one's, so a predictable key (`l4:<session>:<gap>`) cannot be taken first by someone else.
fn replay(ledger: Option<&Ledger>, req: &NewRequest) -> Result<Option<String>, ClarifyError> {
    let (Some(key), Some(ledger)) = (&req.idempotency_key, ledger) else {
        return Ok(None);
    };
    let Some(existing) = ledger
        .clarifications
        .iter()
        .find(|r| r.idempotency_key.as_ref() == Some(key) && r.from == req.from)
    else {
        return Ok(None);
    };
    if !req.asked(existing) {
        return Err(ClarifyError::IdempotencyConflict {
            key: key.clone(),
            id: existing.id.clone(),
        });
    }
    Ok(Some(existing.id.clone()))
}

/// The record a re-ask is answered from (docs/protocol.md §22): the latest one of the issue with the
/// request's fingerprint that is not abandoned. Records written before fingerprints were
/// stored get theirs computed, only when their target and field already match. Nothing when
/// the request says `askAgain`.
fn reusable(ledger: Option<&Ledger>, req: &NewRequest, issue: u32) -> Option<usize> {
    let ledger = ledger.filter(|_| !req.ask_again)?;
    let wanted = fingerprint(issue, &req.to, req.field.as_deref(), &req.question);
    ledger.clarifications.iter().rposition(|r| {
        let same = match &r.fingerprint {
            Some(f) => *f == wanted,
            None => {
                r.to == req.to
                    && r.field == req.field
                    && r.first_question()
                        .is_some_and(|q| fingerprint(issue, &r.to, r.field.as_deref(), q) == wanted)
            }
        };
        same && r.current_status() != Status::Abandoned
    })
}

/// What governs a new record: its round limit, SLA, and the workflow a new ledger records.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Limits {
    max_rounds: u32,
    sla_minutes: u32,
    workflow: Option<String>,
}

/// Carries out what [`decide_request`] or [`decide_escalated`] decided on `ledger` (moved in,
/// not copied): the new record with its question, and its escalation when it is created
/// escalated. Only the new record is sealed; callers seal the ledger before writing it.
pub(crate) fn open(
    ledger: Option<Ledger>,
    opening: Opening,
    req: &NewRequest,
    now: i64,
    signers: &Signers,
) -> Applied {
    let (issue, limits, escalate) = match opening {
        Opening::Replay(id) => {
            return Applied {
                ledger: ledger.unwrap_or_else(|| Ledger::new(0)),
                id,
                events: Vec::new(),
                idempotent: true,
                reused: false,
                error: None,
            }
        }
        Opening::Reuse(index) => return reuse(ledger, index, req, now),
        Opening::New {
            issue,
            limits,
            escalate,
        } => (issue, limits, escalate),
    };
    let mut ledger = ledger.unwrap_or_else(|| Ledger::new(issue));
    let id = ledger.next_id().to_string();
    let mut record = Record {
        id: id.clone(),
        from: req.from.clone(),
        to: req.to.clone(),
        topic: req.topic.clone(),
        blocking: req.is_blocking(),
        status: Status::Pending,
        round: 0,
        max_rounds: limits.max_rounds,
        sla_minutes: limits.sla_minutes,
        created: Some(Timestamp::from_ms(now)),
        stale_after: None,
        retries: 0,
        resolved_at: None,
        field: req.field.clone(),
        suggestions: req.suggestions.clone(),
        idempotency_key: req.idempotency_key.clone(),
        severity: req.severity,
        context: req.context.clone(),
        blocked_operations: req.blocked_operations.clone(),
        session_id: req.session_id.clone(),
        gap_id: req.gap_id.clone(),
        answer: req.answer.clone(),
        fingerprint: Some(fingerprint(
            issue,
            &req.to,
            req.field.as_deref(),
            &req.question,
        )),
        reuses: Reuses::default(),
        thread: Vec::new(),
        extra: req.extra.clone(),
    };
    let at = record.append_signed(EntryKind::Question, &req.from, &req.question, now, signers);
    let mut events: Vec<Event> = Event::for_entry(
        issue,
        &record,
        EntryKind::Question,
        &req.from,
        &req.question,
        at,
    )
    .into_iter()
    .collect();
    if let Some(Escalate { reason, assigner }) = &escalate {
        let workflow = ledger.workflow.as_deref().or(limits.workflow.as_deref());
        let entry = crate::ledger::NewEntry {
            kind: EntryKind::Escalation,
            from: AGENT_X,
            body: reason,
            value: None,
            extra: assigner
                .as_ref()
                .map_or_else(Map::new, |a| a.fields(workflow, &record, now)),
        };
        let at = record.append_entry(entry, now, signers);
        events.extend(Event::for_entry(
            issue,
            &record,
            EntryKind::Escalation,
            AGENT_X,
            reason,
            at,
        ));
    }
    if ledger.workflow.is_none() {
        ledger.workflow = limits.workflow;
    }
    ledger.clarifications.push(record);
    Applied {
        ledger,
        id,
        events,
        idempotent: false,
        reused: false,
        error: None,
    }
}

/// A re-ask answered from record `index` of `ledger`: its trace noted, its event returned.
fn reuse(ledger: Option<Ledger>, index: usize, req: &NewRequest, now: i64) -> Applied {
    let mut ledger = ledger.unwrap_or_else(|| Ledger::new(0));
    let issue = ledger.issue_number;
    let (id, events) = match ledger.clarifications.get_mut(index) {
        Some(record) => {
            let at = record.clamp_now(now);
            record.reuses.note(&req.from, at);
            let mut event = Event::routing(EventType::Reused, issue, record, at, None);
            event.actor.clone_from(&req.from);
            (record.id.clone(), vec![event])
        }
        None => (String::new(), Vec::new()),
    };
    Applied {
        ledger,
        id,
        events,
        idempotent: false,
        reused: true,
        error: None,
    }
}
