//! `check` (docs/protocol.md §16): a plan's gaps become requests, idempotent by
//! `l4:<session_id>:<gap id>`, and the answer is Layer 4's response built from the ledger.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::plan::{located, Plan, PlanGap};
use crate::config::Config;
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::{EntryKind, Ledger, Record, Status};
use crate::names::check_uuid;
use crate::ops::{decide_request, open, NewRequest};
use crate::signing::Signers;
use crate::time::Timestamp;
use crate::workflow::Workflows;

/// The protocol version of the responses (seed 001).
pub const PROTOCOL_VERSION: &str = "1.0.0";

/// What the command gives besides the plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckArgs {
    pub issue_number: u64,
    /// The requester: the agent that refuses to guess (`--from`).
    pub from: String,
    /// The target of gaps without their own `to` (`--to`).
    pub to: Option<String>,
    pub workflow: Option<String>,
    pub step: Option<String>,
    /// The session id when the plan has none: the shell draws a new UUID v4 each call (the
    /// core has no randomness). Unused, and unchecked, when the plan has one.
    pub new_session_id: String,
}

/// The result of a check.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The ledger after the requests (sealed); write it when `changed`.
    pub ledger: Ledger,
    /// False when every gap was already asked (an idempotent replay): nothing to write.
    pub changed: bool,
    pub events: Vec<Event>,
    pub response: CheckResponse,
}

/// Layer 4's response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckResponse {
    pub protocol_version: &'static str,
    pub session_id: String,
    pub agent_id: String,
    pub timestamp: Timestamp,
    /// `needs_clarification` or `ready_to_proceed`.
    pub status: &'static str,
    pub gaps: Vec<GapStatus>,
    /// Resolved gaps.
    pub accepted_gaps: usize,
    /// Open `BLOCK` gaps.
    pub blocking_gaps: usize,
    /// Open `WARN` gaps.
    pub warning_gaps: usize,
}

/// A gap as the response shows it: the plan's gap (its `to` the record's target), its record
/// and where it stands. Every key is written (null or empty when absent), so readers need no
/// defaults: the gap's keys, then `clarificationId`, `status` and `answer`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapStatus {
    pub gap: PlanGap,
    pub clarification_id: Option<String>,
    /// The record's status (the fold); null only if the record is missing.
    pub status: Option<Status>,
    /// The latest answer, so the requester can judge it before resolving.
    pub answer: Option<String>,
}

impl Serialize for GapStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.gap.serialize_fields(&mut m)?;
        m.serialize_entry("clarificationId", &self.clarification_id)?;
        m.serialize_entry("status", &self.status)?;
        m.serialize_entry("answer", &self.answer)?;
        m.end()
    }
}

/// The idempotency key of a gap.
pub fn gap_key(session_id: &str, gap_id: &str) -> String {
    format!("l4:{session_id}:{gap_id}")
}

/// The session a check runs in: the plan's, else the shell's new one (checked here).
pub fn session_of(plan: &Plan, args: &CheckArgs) -> Result<String, ClarifyError> {
    match &plan.session_id {
        Some(s) => Ok(s.clone()),
        None => {
            check_uuid("new session id", &args.new_session_id)?;
            Ok(args.new_session_id.clone())
        }
    }
}

/// A record's topic for a gap: its field, cut to the topic limit (the field is also kept
/// whole in `field`).
fn topic_of(field: &str, max: usize) -> String {
    if field.chars().count() <= max {
        field.to_owned()
    } else {
        let mut cut: String = field.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The request each gap becomes, validated (every gap before any is asked, so an error in
/// the last gap writes nothing). Errors name the gap.
pub fn gap_requests(
    plan: &Plan,
    args: &CheckArgs,
    session_id: &str,
    config: &Config,
) -> Result<Vec<NewRequest>, ClarifyError> {
    let mut out = Vec::with_capacity(plan.gaps.len());
    for gap in &plan.gaps {
        let at = format!("gap '{}'", crate::error::shown(&gap.id));
        let to = gap.to.clone().or_else(|| args.to.clone()).ok_or_else(|| {
            ClarifyError::input(format!(
                "{at} has no target: give the gap a `to` or the command a --to"
            ))
        })?;
        let req = NewRequest {
            issue_number: args.issue_number,
            from: args.from.clone(),
            to,
            topic: topic_of(&gap.field, config.max_topic_chars as usize),
            question: gap.question.clone(),
            blocking: gap.severity.is_blocking(),
            workflow: args.workflow.clone(),
            step: args.step.clone(),
            field: Some(gap.field.clone()),
            suggestions: gap.suggestions.clone(),
            idempotency_key: Some(gap_key(session_id, &gap.id)),
            severity: Some(gap.severity),
            context: gap.context.clone(),
            blocked_operations: gap.blocked_operations.clone(),
            session_id: Some(session_id.to_owned()),
            gap_id: Some(gap.id.clone()),
            answer: gap.answer_spec(),
            ask_again: false,
            extra: serde_json::Map::new(),
        };
        req.validate(config).map_err(|e| located(&at, e))?;
        out.push(req);
    }
    Ok(out)
}

/// Asks every gap of `plan` on `ledger` (None: no ledger yet) and answers with Layer 4's
/// response. All or nothing: any refusal returns the error and no ledger. A second check of
/// the same plan (same session) asks nothing again and reports where each gap stands.
pub fn check(
    ledger: Option<&Ledger>,
    plan: &Plan,
    args: &CheckArgs,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    signers: &Signers,
) -> Result<Checked, ClarifyError> {
    crate::ops::check_now(now)?;
    let session_id = session_of(plan, args)?;
    let requests = gap_requests(plan, args, &session_id, config)?;
    let issue = crate::names::check_issue(args.issue_number)?;
    let mut current = match ledger {
        Some(l) => l.clone(),
        None => Ledger::new(issue),
    };
    let (mut changed, mut events) = (false, Vec::new());
    for (req, gap) in requests.iter().zip(&plan.gaps) {
        let at = format!("gap '{}'", crate::error::shown(&gap.id));
        // Decided on the ledger as it is, then the ledger is moved in: one copy per check.
        let opening = decide_request(Some(&current), req, config, workflows, now)
            .map_err(|e| located(&at, e))?;
        let applied = open(Some(current), opening, req, now, signers);
        changed |= !applied.idempotent;
        events.extend(applied.events);
        current = applied.ledger;
    }
    if changed {
        current.seal();
    }
    // The agent the records are written as, never the plan's own claim (docs/protocol.md §31).
    let agent_id = args.from.clone();
    let response = response(&current, plan, args, &session_id, &agent_id, now);
    Ok(Checked {
        ledger: current,
        changed,
        events,
        response,
    })
}

/// The record a gap's re-ask was answered from (docs/protocol.md §22): the latest record of the issue,
/// not abandoned, with the gap's fingerprint (a gap asked again in a new session).
fn reused_for<'a>(ledger: &'a Ledger, gap: &PlanGap, args: &CheckArgs) -> Option<&'a Record> {
    let to = gap.to.as_deref().or(args.to.as_deref())?;
    let issue = ledger.issue_number;
    let wanted = crate::kinds::fingerprint(issue, to, Some(&gap.field), &gap.question);
    ledger.clarifications.iter().rev().find(|r| {
        r.current_status() != Status::Abandoned
            && r.fingerprint_or_computed(issue).as_deref() == Some(wanted.as_str())
    })
}

/// Layer 4's response for `plan` in `session_id`, from the ledger as it stands: accepted =
/// resolved, blocking / warning = open `BLOCK` / `WARN` gaps; ready iff no open `BLOCK` gap.
/// A gap without a record (never asked) counts as open.
pub fn response(
    ledger: &Ledger,
    plan: &Plan,
    args: &CheckArgs,
    session_id: &str,
    agent_id: &str,
    now: i64,
) -> CheckResponse {
    let (mut accepted, mut blocking, mut warning) = (0, 0, 0);
    let mut gaps = Vec::with_capacity(plan.gaps.len());
    for gap in &plan.gaps {
        let key = gap_key(session_id, &gap.id);
        let record = ledger
            .clarifications
            .iter()
            .find(|r| r.idempotency_key.as_deref() == Some(key.as_str()) && r.from == args.from)
            .or_else(|| reused_for(ledger, gap, args));
        let status = record.map(Record::current_status);
        let severity = record.map_or(gap.severity, Record::severity);
        match status {
            Some(Status::Resolved) => accepted += 1,
            Some(s) if !s.is_open() => {}
            _ if severity.is_blocking() => blocking += 1,
            _ => warning += 1,
        }
        gaps.push(gap_status(gap, args, record, status));
    }
    CheckResponse {
        protocol_version: PROTOCOL_VERSION,
        session_id: session_id.to_owned(),
        agent_id: agent_id.to_owned(),
        timestamp: Timestamp::from_ms(now),
        status: if blocking == 0 {
            "ready_to_proceed"
        } else {
            "needs_clarification"
        },
        gaps,
        accepted_gaps: accepted,
        blocking_gaps: blocking,
        warning_gaps: warning,
    }
}

fn gap_status(
    gap: &PlanGap,
    args: &CheckArgs,
    record: Option<&Record>,
    status: Option<Status>,
) -> GapStatus {
    let answer = record.and_then(|r| {
        r.thread
            .iter()
            .rev()
            .find(|e| e.kind == EntryKind::Answer)
            .map(|e| e.body.clone())
    });
    let to = record.map_or_else(
        || gap.to.clone().or_else(|| args.to.clone()),
        |r| Some(r.to.clone()),
    );
    GapStatus {
        gap: PlanGap { to, ..gap.clone() },
        clarification_id: record.map(|r| r.id.clone()),
        status,
        answer,
    }
}
