//! A clarification as an A2A task (docs/protocol.md §27): `working` while pending, stale or
//! escalated; `input-required` while the target's question asked back to the asker is open;
//! `completed` with the answer (or the person's decision) as an artifact when answered or
//! resolved; `canceled` when abandoned.

use std::collections::HashMap;

use agentx_clarify_a2a::protocol::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use serde_json::{json, Value};

/// A record's task, read from the record and the other records of its issue (where a
/// question asked back lives).
pub fn task_of(record: &Value, issue_records: &[Value]) -> Task {
    let id = text(record, "id");
    let issue = record["issueNumber"].as_u64().unwrap_or(0);
    let context_id = format!("issue-{issue}");
    let question = record["thread"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["type"] == "question"))
        .map(|e| text(e, "body"))
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
    let status = text(record, "status");
    let last = |kinds: &[&str]| {
        record["thread"]
            .as_array()
            .and_then(|t| {
                t.iter()
                    .rev()
                    .find(|e| kinds.iter().any(|k| e["type"] == *k))
            })
            .cloned()
    };
    let mut artifacts = None;
    let (state, message) = match status.as_str() {
        "answered" | "resolved" => {
            let entry = last(&["answer", "resolution"]).unwrap_or(Value::Null);
            let mut parts = vec![Part::text(text(&entry, "body"))];
            let mut metadata = HashMap::from([(String::from("from"), entry["from"].clone())]);
            if let Some(value) = entry.get("value").filter(|v| !v.is_null()) {
                parts.push(Part::data(json!({ "value": value })));
                metadata.insert(String::from("value"), value.clone());
            }
            let name = if status == "resolved" {
                "decision"
            } else {
                "answer"
            };
            artifacts = Some(vec![Artifact {
                artifact_id: format!("{id}-{name}"),
                name: Some(name.to_owned()),
                description: None,
                parts,
                metadata: Some(metadata),
                extensions: None,
            }]);
            (TaskState::Completed, None)
        }
        "abandoned" => (TaskState::Canceled, None),
        _ => match open_asked_back(&id, issue_records) {
            Some(back) => {
                let body = back["thread"]
                    .as_array()
                    .and_then(|t| t.iter().rev().find(|e| e["type"] == "question"))
                    .map(|e| text(e, "body"))
                    .unwrap_or_default();
                let metadata = HashMap::from([(String::from("clarification"), back["id"].clone())]);
                (
                    TaskState::InputRequired,
                    Some(agent_message("asked-back", body, Some(metadata))),
                )
            }
            None if status == "escalated" => {
                let why = last(&["escalation"]).map(|e| text(&e, "body"));
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
            (String::from("from"), record["from"].clone()),
            (String::from("to"), record["to"].clone()),
            (String::from("topic"), record["topic"].clone()),
            (String::from("status"), record["status"].clone()),
        ])),
    }
}

/// The open question the target asked back on `id`, if any.
fn open_asked_back<'a>(id: &str, issue_records: &'a [Value]) -> Option<&'a Value> {
    issue_records.iter().rev().find(|r| {
        r["askedBack"] == id
            && matches!(
                r["status"].as_str(),
                Some("pending" | "stale" | "escalated")
            )
    })
}

pub fn is_final(state: &TaskState) -> bool {
    matches!(state, TaskState::Completed | TaskState::Canceled)
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}
