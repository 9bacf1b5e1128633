//! Agent statuses (docs/protocol.md §5): `.agentx/state/agent-status.json`, keyed by agent name.
//!
//! ```text
//!   idle ──▶ working ──▶ clarifying ──▶ working          (answering a question)
//!            working ──▶ blocked-clarification ──▶ working   (waiting on a blocking request)
//!            working ──▶ done ──▶ working | idle
//!            working ──▶ stuck ──▶ working
//! ```
//! Clarification operations update statuses as a pure function of their events, whatever the
//! current status is; the table only decides whether `hook`/`state` warn.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::ClarifyError;
use crate::events::{Event, EventType};
use crate::keep_unknown::extensible_deserialize;
use crate::names::{check_agent, is_reserved};
use crate::time::format_ms;

pub const IDLE: &str = "idle";
pub const WORKING: &str = "working";
pub const CLARIFYING: &str = "clarifying";
pub const BLOCKED: &str = "blocked-clarification";
pub const DONE: &str = "done";
pub const STUCK: &str = "stuck";

/// Every status an agent can have.
pub const AGENT_STATES: [&str; 6] = [IDLE, WORKING, CLARIFYING, BLOCKED, DONE, STUCK];

/// One agent's slot. Unknown fields written by other tools are kept.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentStatus {
    pub status: String,
    pub issue: Option<u64>,
    pub last_activity: Option<String>,
    /// When the agent last reported on itself (`hook`/`state`, docs/protocol.md §28); clarification
    /// operations never set it. Only a report later than a question can abandon it.
    pub reported_at: Option<String>,
    pub clarification_id: Option<String>,
    pub waiting_on: Option<String>,
    pub responding_to: Option<String>,
    pub extra: Map<String, Value>,
}

impl Serialize for AgentStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("status", &self.status)?;
        m.serialize_entry("issue", &self.issue)?;
        m.serialize_entry("lastActivity", &self.last_activity)?;
        // Absent until the agent reports: AgentX's own files never carry it.
        if let Some(at) = &self.reported_at {
            m.serialize_entry("reportedAt", at)?;
        }
        m.serialize_entry("clarificationId", &self.clarification_id)?;
        m.serialize_entry("waitingOn", &self.waiting_on)?;
        m.serialize_entry("respondingTo", &self.responding_to)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The file's shape as read: everything optional but `status`.
#[derive(Default)]
struct RawStatus {
    status: Option<String>,
    issue: Option<u64>,
    last_activity: Option<String>,
    reported_at: Option<String>,
    clarification_id: Option<String>,
    waiting_on: Option<String>,
    responding_to: Option<String>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawStatus, required: [status], fields: {
    status => "status",
    issue => "issue",
    last_activity => "lastActivity",
    reported_at => "reportedAt",
    clarification_id => "clarificationId",
    waiting_on => "waitingOn",
    responding_to => "respondingTo",
});

impl<'de> Deserialize<'de> for AgentStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawStatus::deserialize(d)?;
        Ok(AgentStatus {
            status: raw.status.unwrap_or_default(),
            issue: raw.issue,
            last_activity: raw.last_activity,
            reported_at: raw.reported_at,
            clarification_id: raw.clarification_id,
            waiting_on: raw.waiting_on,
            responding_to: raw.responding_to,
            extra: raw.extra,
        })
    }
}

impl AgentStatus {
    fn fresh() -> Self {
        AgentStatus {
            status: IDLE.to_owned(),
            issue: None,
            last_activity: None,
            reported_at: None,
            clarification_id: None,
            waiting_on: None,
            responding_to: None,
            extra: Map::new(),
        }
    }

    fn set(
        &mut self,
        status: &str,
        clarification: Option<&str>,
        waiting_on: Option<&str>,
        responding_to: Option<&str>,
        at_ms: i64,
    ) {
        self.status = status.to_owned();
        self.clarification_id = clarification.map(str::to_owned);
        self.waiting_on = waiting_on.map(str::to_owned);
        self.responding_to = responding_to.map(str::to_owned);
        self.last_activity = Some(format_ms(at_ms));
    }
}

/// All agents, ordered by name.
pub type Statuses = BTreeMap<String, AgentStatus>;

/// Parses `agent-status.json` bytes (a UTF-8 BOM, as PowerShell 5 writes, is skipped).
pub fn parse_statuses(file: &str, bytes: &[u8]) -> Result<Statuses, ClarifyError> {
    serde_json::from_slice(crate::encoding::strip_bom(bytes))
        .map_err(|e| ClarifyError::corrupt(file, e.to_string()))
}

/// The file's bytes: pretty JSON with a trailing newline.
pub fn statuses_to_json(statuses: &Statuses) -> String {
    let mut out = serde_json::to_string_pretty(statuses).unwrap_or_else(|_| String::from("{}"));
    out.push('\n');
    out
}

/// Whether `from → to` is in the transition table.
pub fn transition_allowed(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        (IDLE, WORKING)
            | (WORKING, CLARIFYING)
            | (CLARIFYING, WORKING)
            | (WORKING, BLOCKED)
            | (BLOCKED, WORKING)
            | (WORKING, DONE)
            | (WORKING, STUCK)
            | (STUCK, WORKING)
            | (DONE, WORKING)
            | (DONE, IDLE)
    ) || from == to
}

/// Applies the status effects of applied clarification operations, in order.
pub fn apply_events(statuses: &mut Statuses, events: &[Event]) {
    for e in events {
        apply_event(statuses, e);
    }
}

/// docs/protocol.md §8, the repair rule: the statuses a ledger's records imply, for a write
/// whose status update was lost (its writer died between the ledger and the status file).
/// Each record's current state stands for the event that put it there — pending or stale: it
/// was requested; answered, resolved, abandoned: so — at the time of its latest entry, applied
/// in time order and only to the agents whose last activity is older than that: what a later
/// write already set stays, and repairing twice changes nothing. Returns whether any changed.
pub fn repair_from_ledger(statuses: &mut Statuses, ledger: &crate::Ledger) -> bool {
    use crate::ledger::Status;
    let mut implied: Vec<Event> = ledger
        .clarifications
        .iter()
        .filter_map(|r| {
            let kind = match r.status {
                Status::Pending | Status::Stale => EventType::Requested,
                Status::Answered => EventType::Answered,
                Status::Resolved => EventType::Resolved,
                Status::Abandoned => EventType::Abandoned,
                Status::Escalated => return None,
            };
            let at = r.thread.last()?.timestamp.ms();
            Some(Event {
                kind,
                clarification_id: r.id.clone(),
                issue_number: ledger.issue_number,
                from_agent: r.from.clone(),
                to_agent: r.to.clone(),
                topic: r.topic.clone(),
                blocking: r.blocking,
                timestamp: at,
                actor: String::from("agentx"),
                reason: None,
            })
        })
        .collect();
    implied.sort_by_key(|e| e.timestamp);
    let mut changed = false;
    for e in &implied {
        let older = |agent: &str| {
            statuses
                .get(agent)
                .and_then(|s| s.last_activity.as_deref())
                .and_then(crate::time::parse_ms)
                .is_none_or(|t| t < e.timestamp)
        };
        let agents: Vec<String> = [&e.from_agent, &e.to_agent]
            .into_iter()
            .filter(|a| older(a))
            .cloned()
            .collect();
        if agents.is_empty() {
            continue;
        }
        let mut scratch = statuses.clone();
        apply_event(&mut scratch, e);
        for agent in agents {
            if let Some(s) = scratch.remove(&agent) {
                if statuses.get(&agent) != Some(&s) {
                    statuses.insert(agent, s);
                    changed = true;
                }
            }
        }
    }
    changed
}

fn slot<'a>(statuses: &'a mut Statuses, agent: &str) -> &'a mut AgentStatus {
    statuses
        .entry(agent.to_owned())
        .or_insert_with(AgentStatus::fresh)
}

fn apply_event(statuses: &mut Statuses, e: &Event) {
    let id = e.clarification_id.as_str();
    let at = e.timestamp;
    // A reserved actor (a record created escalated to `human`) has no status of its own: it
    // never becomes `clarifying` or `working`.
    let target = !is_reserved(&e.to_agent);
    match e.kind {
        EventType::Requested => {
            if target {
                slot(statuses, &e.to_agent).set(
                    CLARIFYING,
                    Some(id),
                    None,
                    Some(&e.from_agent),
                    at,
                );
            }
            if e.blocking {
                slot(statuses, &e.from_agent).set(BLOCKED, Some(id), Some(&e.to_agent), None, at);
            }
        }
        EventType::Answered => {
            if target {
                slot(statuses, &e.to_agent).set(WORKING, None, None, None, at);
            }
            release_requester(statuses, e);
        }
        EventType::Resolved | EventType::Abandoned => {
            release_requester(statuses, e);
            if let Some(target) = statuses.get_mut(&e.to_agent) {
                if target.status == CLARIFYING && target.clarification_id.as_deref() == Some(id) {
                    target.set(WORKING, None, None, None, at);
                }
            }
        }
        EventType::Stale
        | EventType::Escalated
        | EventType::Routed
        | EventType::RouteFailed
        | EventType::Reused => {}
    }
}

/// The requester goes back to work only if it is blocked on exactly this record.
fn release_requester(statuses: &mut Statuses, e: &Event) {
    if let Some(req) = statuses.get_mut(&e.from_agent) {
        if req.status == BLOCKED
            && req.clarification_id.as_deref() == Some(e.clarification_id.as_str())
        {
            req.set(WORKING, None, None, None, e.timestamp);
        }
    }
}

/// What `hook start|finish` and `agentx state` record: a fact from outside, written even when
/// the transition is not in the table (then a warning is returned for stderr).
pub fn set_status(
    statuses: &mut Statuses,
    agent: &str,
    status: &str,
    issue: Option<u64>,
    now: i64,
) -> Result<(AgentStatus, Option<String>), ClarifyError> {
    check_agent(agent)?;
    if !AGENT_STATES.contains(&status) {
        return Err(ClarifyError::input(format!(
            "unknown agent status '{status}'; allowed: {}",
            AGENT_STATES.join(", ")
        )));
    }
    if let Some(n) = issue {
        crate::names::check_issue(n)?;
    }
    let entry = slot(statuses, agent);
    let previous = entry.status.clone();
    let warning = (!transition_allowed(&previous, status))
        .then(|| format!("agent '{agent}' went from {previous} to {status}, which the status table does not allow; recorded anyway"));
    entry.status = status.to_owned();
    entry.issue = issue;
    entry.last_activity = Some(format_ms(now));
    entry.reported_at = Some(format_ms(now));
    if status != CLARIFYING && status != BLOCKED {
        entry.clarification_id = None;
        entry.waiting_on = None;
        entry.responding_to = None;
    }
    Ok((entry.clone(), warning))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventType, id: &str, blocking: bool) -> Event {
        Event {
            kind,
            clarification_id: id.into(),
            issue_number: 42,
            from_agent: "engineer".into(),
            to_agent: "architect".into(),
            topic: "t".into(),
            blocking,
            timestamp: 1_795_341_600_000,
            actor: "engineer".into(),
            reason: None,
        }
    }

    #[test]
    fn blocking_request_then_answer() {
        let mut s = Statuses::new();
        set_status(&mut s, "engineer", WORKING, Some(42), 0).unwrap();
        apply_events(&mut s, &[event(EventType::Requested, "CLR-42-001", true)]);
        assert_eq!(s["engineer"].status, BLOCKED);
        assert_eq!(s["engineer"].waiting_on.as_deref(), Some("architect"));
        assert_eq!(s["engineer"].issue, Some(42), "issue is never changed");
        assert_eq!(s["architect"].status, CLARIFYING);
        assert_eq!(s["architect"].responding_to.as_deref(), Some("engineer"));
        assert_eq!(s["architect"].issue, None, "new agents get issue null");
        assert_eq!(
            s["architect"].last_activity.as_deref(),
            Some("2026-11-22T10:00:00.000Z")
        );
        apply_events(&mut s, &[event(EventType::Answered, "CLR-42-001", true)]);
        assert_eq!(s["engineer"].status, WORKING);
        assert_eq!(s["architect"].status, WORKING);
    }

    #[test]
    fn a_request_to_a_human_gives_the_human_no_status() {
        let mut s = Statuses::new();
        let mut e = event(EventType::Requested, "CLR-42-001", true);
        e.to_agent = String::from("human");
        apply_events(&mut s, std::slice::from_ref(&e));
        assert_eq!(s["engineer"].status, BLOCKED);
        assert_eq!(s["engineer"].waiting_on.as_deref(), Some("human"));
        assert!(!s.contains_key("human"), "{s:?}");
        e.kind = EventType::Answered;
        apply_events(&mut s, &[e]);
        assert!(!s.contains_key("human"), "{s:?}");
        assert_eq!(s["engineer"].status, WORKING);
    }

    #[test]
    fn non_blocking_request_leaves_requester_alone() {
        let mut s = Statuses::new();
        apply_events(&mut s, &[event(EventType::Requested, "CLR-42-001", false)]);
        assert!(!s.contains_key("engineer"));
        assert_eq!(s["architect"].status, CLARIFYING);
    }

    #[test]
    fn answer_releases_only_the_awaited_record() {
        let mut s = Statuses::new();
        apply_events(
            &mut s,
            &[
                event(EventType::Requested, "CLR-42-001", true),
                event(EventType::Requested, "CLR-42-002", true),
            ],
        );
        apply_events(&mut s, &[event(EventType::Answered, "CLR-42-001", true)]);
        assert_eq!(
            s["engineer"].status, BLOCKED,
            "the latest request holds the slot"
        );
    }

    #[test]
    fn resolve_returns_clarifying_target() {
        let mut s = Statuses::new();
        apply_events(
            &mut s,
            &[
                event(EventType::Requested, "CLR-42-001", true),
                event(EventType::Abandoned, "CLR-42-001", true),
            ],
        );
        assert_eq!(s["engineer"].status, WORKING);
        assert_eq!(s["architect"].status, WORKING);
    }

    #[test]
    fn set_status_warns_outside_the_table() {
        let mut s = Statuses::new();
        let (_, w) = set_status(&mut s, "engineer", WORKING, Some(1), 0).unwrap();
        assert!(w.is_none());
        let (written, w) = set_status(&mut s, "engineer", IDLE, None, 0).unwrap();
        assert!(w.is_some());
        assert_eq!(written.status, IDLE);
        assert!(set_status(&mut s, "engineer", "sleeping", None, 0).is_err());
        assert_eq!(
            set_status(&mut s, "Bad", WORKING, None, 0)
                .unwrap_err()
                .code(),
            "INVALID_AGENT"
        );
    }

    #[test]
    fn a_status_file_with_a_bom_is_read() {
        let s = parse_statuses(
            "agent-status.json",
            b"\xEF\xBB\xBF{\"engineer\": {\"status\": \"done\", \"issue\": 1, \"lastActivity\": \"2026-11-22T10:00:00.94Z\"}}",
        )
        .unwrap();
        assert_eq!(s["engineer"].status, "done");
    }
}
