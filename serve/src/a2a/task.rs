//! A clarification as an A2A task (docs/protocol.md §27): `working` while pending, stale or
//! escalated; `input-required` while the target's question asked back to the asker is open;
//! `completed` with the answer (or the person's decision) as an artifact when answered or
//! resolved; `canceled` when abandoned.

use std::collections::HashMap;

use agentx_clarify_a2a::protocol::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use agentx_clarify_core::ledger::{Entry, EntryKind, Record, Status};
use agentx_clarify_core::replies::asked_back_from;
use serde_json::{json, Value};

/// A record's task, read from the record and the other records of its issue (where a
/// question asked back lives).
pub fn task_of(issue: u32, record: &Record, issue_records: &[Record]) -> Task {
    let id = record.id.clone();
    let context_id = format!("issue-{issue}");
    let question = first(record, &[EntryKind::Question])
        .map(|e| e.body.clone())
        .unwrap_or_default();
    let mut asked = Message::new(Role::User, vec![Part::text(question)]);
    asked.message_id = format!("{id}-question");
    asked.task_id = Some(id.clone());
    asked.context_id = Some(context_id.clone());
    let agent_message = |suffix: &str, body: String, metadata: Option<HashMap<String, Value>>| {
        let mut m = Message::new(Role::Agent, vec![Part::text(body)]);
        m.message_id = format!("{id}-{suffix}");
        m.task_id = Some(id.clone());
        m.context_id = Some(context_id.clone());
        m.metadata = metadata;
        m
    };
    let status = record.current_status();
    let mut artifacts = None;
    let (state, message) = match status {
        Status::Answered | Status::Resolved => {
            artifacts = Some(vec![answer_artifact(record, status)]);
            (TaskState::Completed, None)
        }
        Status::Abandoned => (TaskState::Canceled, None),
        _ => match open_asked_back(&id, issue_records) {
            Some(back) => {
                let body = last(back, &[EntryKind::Question])
                    .map(|e| e.body.clone())
                    .unwrap_or_default();
                let metadata = HashMap::from([(String::from("clarification"), json!(back.id))]);
                (
                    TaskState::InputRequired,
                    Some(agent_message("asked-back", body, Some(metadata))),
                )
            }
            None if status == Status::Escalated => {
                let why = last(record, &[EntryKind::Escalation]).map(|e| e.body.clone());
                (
                    TaskState::Working,
                    why.map(|w| agent_message("escalated", format!("escalated: {w}"), None)),
                )
            }
            None => (TaskState::Working, None),
        },
    };
    Task {
        id: id.clone(),
        context_id,
        status: TaskStatus {
            state,
            message,
            timestamp: None,
        },
        artifacts,
        history: Some(vec![asked]),
        metadata: Some(HashMap::from([
            (String::from("issue"), json!(issue)),
            (String::from("from"), json!(record.from)),
            (String::from("to"), json!(record.to)),
            (String::from("topic"), json!(record.topic)),
            (String::from("status"), json!(status.as_str())),
        ])),
    }
}

/// The answer (or the person's decision) of an answered or resolved record.
fn answer_artifact(record: &Record, status: Status) -> Artifact {
    let entry = last(record, &[EntryKind::Answer, EntryKind::Resolution]);
    let body = entry.map(|e| e.body.clone()).unwrap_or_default();
    let mut parts = vec![Part::text(body)];
    let from = entry.map_or(Value::Null, |e| json!(e.from));
    let mut metadata = HashMap::from([(String::from("from"), from)]);
    if let Some(value) = entry.and_then(|e| e.value.as_ref()) {
        parts.push(Part::data(json!({ "value": value })));
        metadata.insert(String::from("value"), value.clone());
    }
    let name = if status == Status::Resolved {
        "decision"
    } else {
        "answer"
    };
    Artifact {
        artifact_id: format!("{}-{name}", record.id),
        name: Some(name.to_owned()),
        description: None,
        parts,
        metadata: Some(metadata),
        extensions: None,
    }
}

fn first<'a>(record: &'a Record, kinds: &[EntryKind]) -> Option<&'a Entry> {
    record.thread.iter().find(|e| kinds.contains(&e.kind))
}

fn last<'a>(record: &'a Record, kinds: &[EntryKind]) -> Option<&'a Entry> {
    record.thread.iter().rev().find(|e| kinds.contains(&e.kind))
}

/// The open question the target asked back on `id`, if any.
fn open_asked_back<'a>(id: &str, issue_records: &'a [Record]) -> Option<&'a Record> {
    issue_records.iter().rev().find(|r| {
        asked_back_from(r) == Some(id)
            && matches!(
                r.current_status(),
                Status::Pending | Status::Stale | Status::Escalated
            )
    })
}

pub fn is_final(state: &TaskState) -> bool {
    matches!(state, TaskState::Completed | TaskState::Canceled)
}
