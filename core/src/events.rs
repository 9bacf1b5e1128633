//! Events (docs/protocol.md §10): what every applied operation reports, for event buses and tree views.

use serde::{Deserialize, Serialize};

use crate::ledger::{EntryKind, Record};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "clarification-requested")]
    Requested,
    #[serde(rename = "clarification-answered")]
    Answered,
    #[serde(rename = "clarification-stale")]
    Stale,
    #[serde(rename = "clarification-resolved")]
    Resolved,
    #[serde(rename = "clarification-escalated")]
    Escalated,
    #[serde(rename = "clarification-abandoned")]
    Abandoned,
    /// The hub started the target's runner (docs/protocol.md §14.2). No entry is written.
    #[serde(rename = "clarification-routed")]
    Routed,
    /// The routed agent failed; `reason` is the cause (an escalation follows).
    #[serde(rename = "clarification-route-failed")]
    RouteFailed,
    /// A re-ask was answered from the record that already holds the question (docs/protocol.md §22);
    /// `actor` is who asked again. No entry is written and no one is woken.
    #[serde(rename = "clarification-reused")]
    Reused,
}

impl EventType {
    /// The event an entry of this kind produces; a retry produces none (surfaces re-route
    /// the question on the `clarification-stale` event that precedes it).
    pub fn for_entry(kind: EntryKind) -> Option<EventType> {
        match kind {
            EntryKind::Question => Some(EventType::Requested),
            EntryKind::Answer => Some(EventType::Answered),
            EntryKind::Stale => Some(EventType::Stale),
            EntryKind::Retry
            | EntryKind::Reopen
            | EntryKind::Claim
            | EntryKind::Handoff
            | EntryKind::Lapse
            | EntryKind::Approval
            | EntryKind::Assign => None,
            EntryKind::Escalation => Some(EventType::Escalated),
            EntryKind::Resolution => Some(EventType::Resolved),
            EntryKind::Abandonment => Some(EventType::Abandoned),
        }
    }
}

/// One event. `fromAgent`/`toAgent` are always the record's requester and target; `actor` is
/// who caused it; `timestamp` is epoch ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: EventType,
    pub clarification_id: String,
    pub issue_number: u32,
    pub from_agent: String,
    pub to_agent: String,
    pub topic: String,
    pub blocking: bool,
    pub timestamp: i64,
    pub actor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Event {
    /// A routing event about `record` (no ledger entry stands for it), caused by the hub.
    pub fn routing(
        kind: EventType,
        issue: u32,
        record: &Record,
        at_ms: i64,
        reason: Option<String>,
    ) -> Event {
        Event {
            kind,
            clarification_id: record.id.clone(),
            issue_number: issue,
            from_agent: record.from.clone(),
            to_agent: record.to.clone(),
            topic: record.topic.clone(),
            blocking: record.blocking,
            timestamp: at_ms,
            actor: crate::names::AGENT_X.to_owned(),
            reason,
        }
    }

    /// The event for an entry just appended to `record` (None for a retry).
    pub fn for_entry(
        issue: u32,
        record: &Record,
        kind: EntryKind,
        actor: &str,
        body: &str,
        at_ms: i64,
    ) -> Option<Event> {
        let event_kind = EventType::for_entry(kind)?;
        let reason =
            matches!(kind, EntryKind::Escalation | EntryKind::Abandonment).then(|| body.to_owned());
        Some(Event {
            kind: event_kind,
            clarification_id: record.id.clone(),
            issue_number: issue,
            from_agent: record.from.clone(),
            to_agent: record.to.clone(),
            topic: record.topic.clone(),
            blocking: record.blocking,
            timestamp: at_ms,
            actor: actor.to_owned(),
            reason,
        })
    }
}
