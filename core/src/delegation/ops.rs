//! The delegation operations: `request` (validation → idempotency → capability check →
//! write) and `act` on an existing delegation (accept, complete, reject, fail, time out).
//! Pure: each returns the new ledger and its events, or a typed refusal with nothing written.

use serde::Serialize;
use serde_json::{Map, Value};

use super::manifest::{Manifests, Offer};
use super::transition::{allowed_ops, who_may, Op};
use super::{
    check_capability, Delegation, DelegationId, DelegationLedger, Entry, Response, Status,
};
use crate::config::{Config, MAX_SHORT_TEXT};
use crate::error::ClarifyError;
use crate::names::{check_agent, check_issue, check_line, check_text, is_reserved, AGENT_X};
use crate::ops::check_now;
use crate::time::Timestamp;

/// A delegation's deadline when the request sets none: accepted + this many minutes.
pub const DEFAULT_TIMEOUT_MINUTES: u32 = 60;
/// Allowed `timeoutMinutes` (one minute to one week).
pub const TIMEOUT_RANGE: (u32, u32) = (1, 10_080);
/// Items in each list of a response.
const MAX_LIST_ITEMS: usize = 100;

/// What a delegator asks (seed 003 §6.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewDelegation {
    pub issue_number: u64,
    pub from: String,
    pub to: String,
    pub capability: Option<String>,
    pub objective: String,
    pub context_slice: Map<String, Value>,
    pub output_contract: Map<String, Value>,
    /// `None`: [`DEFAULT_TIMEOUT_MINUTES`].
    pub timeout_minutes: Option<u32>,
    /// The idempotency key of the block it comes from: a replay returns the same envelope.
    pub signal_key: Option<String>,
    /// More envelope fields (a `[DELEGATE_WORK]` block's `coordination`, `independence`).
    pub extra: Map<String, Value>,
}

impl NewDelegation {
    /// Input validation; shells call it before reading the ledger (input errors win).
    pub fn validate(&self, config: &Config) -> Result<u32, ClarifyError> {
        let issue = check_issue(self.issue_number)?;
        check_agent(&self.from)?;
        check_agent(&self.to)?;
        if is_reserved(&self.to) {
            return Err(ClarifyError::InvalidAgent {
                name: self.to.clone(),
                why: String::from(
                    "reserved actors (human, monitor, agent-x) cannot be delegated to",
                ),
            });
        }
        if self.from == self.to {
            return Err(ClarifyError::input(format!(
                "agent '{}' cannot delegate to itself; name another agent",
                self.from
            )));
        }
        if let Some(c) = &self.capability {
            check_capability(c).map_err(ClarifyError::input)?;
        }
        check_text("objective", &self.objective, config.max_body_chars as usize)?;
        if let Some(t) = self.timeout_minutes {
            let (min, max) = TIMEOUT_RANGE;
            if !(min..=max).contains(&t) {
                return Err(ClarifyError::input(format!(
                    "timeoutMinutes must be from {min} to {max}, found {t}"
                )));
            }
        }
        if let Some(k) = &self.signal_key {
            check_line("signal key", k, MAX_SHORT_TEXT)?;
        }
        Ok(issue)
    }
}

/// An operation on an existing delegation, by `by`.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub op: Op,
    pub by: String,
    /// The entry's text (a reason, a diagnostic); a default names the actor.
    pub message: Option<String>,
    /// The response envelope of a completion.
    pub response: Option<Response>,
    /// The idempotency key of the block that caused it (kept on the entry).
    pub signal_key: Option<String>,
}

impl Action {
    fn new(op: Op, by: &str) -> Action {
        Action {
            op,
            by: by.to_owned(),
            message: None,
            response: None,
            signal_key: None,
        }
    }

    pub fn accept(by: &str) -> Action {
        Action::new(Op::Accept, by)
    }

    pub fn complete(by: &str, response: Response) -> Action {
        Action {
            response: Some(response),
            ..Action::new(Op::Complete, by)
        }
    }

    /// `capability`: REJECTED_CAPABILITY, else REJECTED_CONTEXT.
    pub fn reject(by: &str, capability: bool, message: Option<String>) -> Action {
        let op = if capability {
            Op::RejectCapability
        } else {
            Op::RejectContext
        };
        Action {
            message,
            ..Action::new(op, by)
        }
    }

    pub fn fail(by: &str, message: Option<String>) -> Action {
        Action {
            message,
            ..Action::new(Op::Fail, by)
        }
    }

    pub fn with_signal_key(mut self, key: Option<String>) -> Action {
        self.signal_key = key;
        self
    }

    fn validate(&self, id: &str, config: &Config) -> Result<DelegationId, ClarifyError> {
        let parsed = DelegationId::parse(id)?;
        check_agent(&self.by)?;
        let max = config.max_body_chars as usize;
        if let Some(m) = &self.message {
            check_text("message", m, max)?;
        }
        if let Some(r) = &self.response {
            if let Some(p) = &r.artifact_path {
                check_text("artifactPath", p, max)?;
            }
            if !r.summary.is_empty() {
                check_text("summary", &r.summary, max)?;
            }
            for (field, items) in [
                ("followUpRecommended", &r.follow_up_recommended),
                ("unresolved", &r.unresolved),
            ] {
                if items.len() > MAX_LIST_ITEMS {
                    return Err(ClarifyError::TextTooLong {
                        field: field.to_owned(),
                        len: items.len(),
                        max: MAX_LIST_ITEMS,
                        unit: "items",
                    });
                }
                for item in items {
                    check_text(field, item, max)?;
                }
            }
        }
        if let Some(k) = &self.signal_key {
            check_line("signal key", k, MAX_SHORT_TEXT)?;
        }
        Ok(parsed)
    }
}

/// What happened to a delegation, for event buses and tree views.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EventType {
    #[serde(rename = "delegation-requested")]
    Requested,
    #[serde(rename = "delegation-accepted")]
    Accepted,
    #[serde(rename = "delegation-completed")]
    Completed,
    #[serde(rename = "delegation-rejected")]
    Rejected,
    #[serde(rename = "delegation-timeout")]
    Timeout,
    #[serde(rename = "delegation-failed")]
    Failed,
}

impl EventType {
    fn for_status(status: Status) -> EventType {
        match status {
            Status::Requested => EventType::Requested,
            Status::Accepted => EventType::Accepted,
            Status::Completed => EventType::Completed,
            Status::RejectedCapability | Status::RejectedContext => EventType::Rejected,
            Status::Timeout => EventType::Timeout,
            Status::FailedExecution => EventType::Failed,
        }
    }
}

/// One delegation event; `timestamp` is epoch ms.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: EventType,
    pub delegation_id: String,
    pub issue_number: u32,
    pub from_agent: String,
    pub to_agent: String,
    pub capability: Option<String>,
    pub status: Status,
    pub timestamp: i64,
    pub actor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Event {
    pub(super) fn for_entry(
        issue: u32,
        d: &Delegation,
        entry_status: Status,
        actor: &str,
        body: &str,
        at: i64,
    ) -> Event {
        let reason = matches!(
            entry_status,
            Status::RejectedCapability
                | Status::RejectedContext
                | Status::Timeout
                | Status::FailedExecution
        )
        .then(|| body.to_owned());
        Event {
            kind: EventType::for_status(entry_status),
            delegation_id: d.id.clone(),
            issue_number: issue,
            from_agent: d.from.clone(),
            to_agent: d.to.clone(),
            capability: d.capability.clone(),
            status: entry_status,
            timestamp: at,
            actor: actor.to_owned(),
            reason,
        }
    }
}

/// The result of an operation that wrote something (or an idempotent replay).
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The ledger to write (sealed).
    pub ledger: DelegationLedger,
    pub id: String,
    /// The delegation's status afterwards.
    pub status: Status,
    pub events: Vec<Event>,
    /// True for a replay of the same signal: nothing changed.
    pub idempotent: bool,
}

pub(super) fn entry(status: Status, from: &str, body: &str) -> Entry {
    Entry {
        status,
        from: from.to_owned(),
        body: body.to_owned(),
        timestamp: Timestamp::from_ms(0),
        response: None,
        hash: None,
        extra: Map::new(),
    }
}

/// Opens a delegation on `ledger` (None: the issue has none yet). A target whose manifest
/// lacks or excludes the capability gets the envelope `REJECTED_CAPABILITY` at once; a
/// target without a manifest is not checked; a broken manifest is its `CONFIG_INVALID`.
pub fn request(
    ledger: Option<&DelegationLedger>,
    req: &NewDelegation,
    manifests: &Manifests,
    config: &Config,
    now: i64,
) -> Result<Applied, ClarifyError> {
    let opening = decide_request(ledger, req, manifests, config, now)?;
    Ok(sealed(open_delegation(ledger.cloned(), opening, req, now)))
}

/// A written ledger is sealed; a replay's is returned as it was.
fn sealed(mut applied: Applied) -> Applied {
    if !applied.idempotent {
        applied.ledger.seal();
    }
    applied
}

/// What a request decided, before anything is built (so that ingest can move the ledger in).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Opening {
    /// The signal key already names this delegation.
    Replay { id: String, status: Status },
    /// A new envelope; `refusal` says why it is rejected for capability at once.
    New { issue: u32, refusal: Option<String> },
}

/// Every guard of [`request`], in order, on the ledger as it is.
pub(crate) fn decide_request(
    ledger: Option<&DelegationLedger>,
    req: &NewDelegation,
    manifests: &Manifests,
    config: &Config,
    now: i64,
) -> Result<Opening, ClarifyError> {
    check_now(now)?;
    let issue = req.validate(config)?;
    if let Some(l) = ledger.filter(|l| l.issue_number != issue) {
        return Err(ClarifyError::input(format!(
            "the delegation ledger is for issue {} but the request is for issue {issue}",
            l.issue_number
        )));
    }
    let replay = req.signal_key.as_ref().and_then(|key| {
        ledger?
            .delegations
            .iter()
            .find(|d| d.signal_key.as_ref() == Some(key))
    });
    if let Some(d) = replay {
        return Ok(Opening::Replay {
            id: d.id.clone(),
            status: d.current_status(),
        });
    }
    let refusal = match &req.capability {
        None => None,
        Some(c) => match manifests.get(&req.to) {
            None => None,
            Some(Err(e)) => return Err(e.clone()),
            Some(Ok(m)) => match m.offers(c) {
                Offer::Offered(_) => None,
                Offer::Excluded(x) => Some(format!("'{}' excludes {x}, which covers {c}", req.to)),
                Offer::Missing => Some(format!("the manifest of '{}' does not list {c}", req.to)),
            },
        },
    };
    Ok(Opening::New { issue, refusal })
}

/// Carries out [`decide_request`]'s decision on `ledger` (moved in, not copied). Callers
/// seal the ledger before writing it.
pub(crate) fn open_delegation(
    ledger: Option<DelegationLedger>,
    opening: Opening,
    req: &NewDelegation,
    now: i64,
) -> Applied {
    let (issue, refusal) = match opening {
        Opening::Replay { id, status } => {
            return Applied {
                ledger: ledger.unwrap_or_else(|| DelegationLedger::new(0)),
                id,
                status,
                events: Vec::new(),
                idempotent: true,
            }
        }
        Opening::New { issue, refusal } => (issue, refusal),
    };
    let mut ledger = ledger.unwrap_or_else(|| DelegationLedger::new(issue));
    let id = ledger.next_id().to_string();
    let timeout_minutes = req.timeout_minutes.unwrap_or(DEFAULT_TIMEOUT_MINUTES);
    let mut d = Delegation {
        id: id.clone(),
        from: req.from.clone(),
        to: req.to.clone(),
        capability: req.capability.clone(),
        objective: req.objective.clone(),
        context_slice: req.context_slice.clone(),
        output_contract: req.output_contract.clone(),
        timeout_minutes,
        status: Status::Requested,
        created_at: None,
        accepted_at: None,
        deadline: None,
        finished_at: None,
        response: None,
        signal_key: req.signal_key.clone(),
        thread: Vec::new(),
        extra: req.extra.clone(),
    };
    // The requested entry repeats the envelope so that the hash chain covers it.
    let mut first = entry(Status::Requested, &req.from, &req.objective);
    let envelope = [
        ("to", Value::from(req.to.as_str())),
        (
            "capability",
            req.capability.clone().map_or(Value::Null, Value::from),
        ),
        ("contextSlice", Value::Object(req.context_slice.clone())),
        ("outputContract", Value::Object(req.output_contract.clone())),
        ("timeoutMinutes", Value::from(timeout_minutes)),
    ];
    first.extra.extend(envelope.map(|(k, v)| (k.to_owned(), v)));
    let at = d.append(first, now);
    let mut events = vec![Event::for_entry(
        issue,
        &d,
        Status::Requested,
        &req.from,
        &req.objective,
        at,
    )];
    if let Some(reason) = refusal {
        let at = d.append(entry(Status::RejectedCapability, AGENT_X, &reason), now);
        events.push(Event::for_entry(
            issue,
            &d,
            Status::RejectedCapability,
            AGENT_X,
            &reason,
            at,
        ));
    }
    let status = d.current_status();
    ledger.delegations.push(d);
    Applied {
        ledger,
        id,
        status,
        events,
        idempotent: false,
    }
}

/// Applies `action` to delegation `id`. Guards in order: input, `NOT_FOUND`,
/// `INVALID_TRANSITION` (naming what the status allows), `NOT_PARTICIPANT`.
pub fn act(
    ledger: &DelegationLedger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
) -> Result<Applied, ClarifyError> {
    let index = decide_act(ledger, id, action, config, now)?;
    Ok(sealed(apply_act(ledger.clone(), index, action, now)))
}

/// Every guard of [`act`], in order; the delegation's index when all pass.
pub(crate) fn decide_act(
    ledger: &DelegationLedger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
) -> Result<usize, ClarifyError> {
    check_now(now)?;
    let parsed = action.validate(id, config)?;
    let index = (parsed.issue == ledger.issue_number)
        .then(|| ledger.delegations.iter().position(|d| d.id == id))
        .flatten()
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let Some(d) = ledger.delegations.get(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };
    let status = d.current_status();
    let Some(who) = who_may(status, action.op) else {
        return Err(ClarifyError::InvalidTransition {
            op: action.op.as_str().to_owned(),
            id: id.to_owned(),
            status: status.as_str().to_owned(),
            allowed: allowed_ops(status),
        });
    };
    if !who.admits(&action.by, &d.to) {
        return Err(ClarifyError::NotParticipant {
            actor: action.by.clone(),
            op: action.op.as_str().to_owned(),
            id: id.to_owned(),
            allowed: who.describe(&d.to),
        });
    }
    Ok(index)
}

/// Carries out `action` on the delegation at `index` that [`decide_act`] admitted.
pub(crate) fn apply_act(
    mut ledger: DelegationLedger,
    index: usize,
    action: &Action,
    now: i64,
) -> Applied {
    let issue = ledger.issue_number;
    let after = action.op.status_after();
    let body = match (&action.message, &action.response) {
        (Some(m), _) => m.clone(),
        (None, Some(r)) if !r.summary.trim().is_empty() => r.summary.clone(),
        _ => default_body(action.op, &action.by),
    };
    let mut e = entry(after, &action.by, &body);
    if after == Status::Completed {
        let mut r = action.response.clone().unwrap_or_default();
        if r.summary.trim().is_empty() {
            r.summary.clone_from(&body);
        }
        e.response = Some(r);
    }
    if let Some(k) = &action.signal_key {
        e.extra.insert("signalKey".into(), Value::from(k.as_str()));
    }
    let mut events = Vec::new();
    let mut id = String::new();
    if let Some(d) = ledger.delegations.get_mut(index) {
        let at = d.append(e, now);
        events.push(Event::for_entry(issue, d, after, &action.by, &body, at));
        id.clone_from(&d.id);
    }
    Applied {
        ledger,
        id,
        status: after,
        events,
        idempotent: false,
    }
}

fn default_body(op: Op, by: &str) -> String {
    match op {
        Op::Accept => format!("accepted by {by}"),
        Op::Complete => format!("completed by {by}"),
        Op::RejectCapability => format!("rejected by {by}: capability mismatch"),
        Op::RejectContext => format!("rejected by {by}: missing critical context"),
        Op::Fail => format!("failed in {by}"),
        Op::Timeout => String::from("deadline passed"),
    }
}
