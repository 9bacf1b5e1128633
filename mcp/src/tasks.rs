//! A clarification as an MCP task (the Tasks extension, `io.modelcontextprotocol/tasks`;
//! docs/protocol.md §24): `clarify_ask` with `wait: "task"` answers with a task whose id is
//! the record's, and `tasks/get`, `tasks/update` and `tasks/cancel` read and write **the
//! ledger**, never rmcp's in-memory task store. So a task outlives the server that made it:
//! after a restart, on another server over the same PostgreSQL, or over the other transport,
//! `tasks/get` reads the same record and reports the same state.
//!
//! A task is its asker's: only the agent that asked the question (the principal of the call)
//! may read, answer or cancel it; to anyone else the id names no task, as an unknown one.

use std::collections::BTreeMap;

use agentx_clarify_core::config::ElicitPolicy;
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::{Action, Record, Status};
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask,
    ElicitRequest, ElicitResult, GetTaskResult, InputRequest, InputResponses, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use rmcp::ErrorData;
use serde_json::Value;

use crate::hub::Hub;
use crate::mrtr::Asker;
use crate::mrtr::FORM_KEY;
use crate::reply;

/// How often a client is asked to poll `tasks/get`: a person's or an agent's answer takes
/// seconds to hours, and `clarify_wait` is there for a client that wants it at once.
const POLL_MS: u64 = 5_000;

/// The one answer for an id that is not this agent's task: the same whether the record does
/// not exist or is another agent's, so an id tells nobody what it holds.
fn no_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task {id}"), None)
}

/// Record `id` when it is `agent`'s own question.
async fn owned(hub: &Hub, agent: &str, id: &str) -> Result<Record, ErrorData> {
    let issue = ClarificationId::parse(id).map_err(|_| no_task(id))?.issue;
    let ledger = hub
        .ledger(issue)
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    ledger
        .and_then(|l| l.find(id).cloned())
        .filter(|r| r.from == agent)
        .ok_or_else(|| no_task(id))
}

/// Whether a client may be handed the decision of record `id` in a task's `input_required`:
/// the record waits for the asker's own operator, `[mcp] elicit` allows it and the request's
/// client fills in forms.
fn form_allowed(
    hub: &Hub,
    record: &Record,
    who: &Asker<'_>,
    caps: Option<&ClientCapabilities>,
) -> bool {
    crate::elicit::wanted(record, who.agent, who.operator)
        && hub.elicit_setting() == ElicitPolicy::Requester
        && crate::mrtr::forms_declared(caps)
}

/// The task's base fields from the record: created when asked, updated at its newest entry.
/// `ttlMs` is `null` (unlimited): the ledger keeps the record for good, so the task can be read
/// as long as the record exists; the SLA says when it goes stale, not when it is discarded.
fn base(record: &Record, status: TaskStatus, message: String) -> Task {
    let created = record
        .created
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| record.thread.first().map(|e| e.timestamp.to_string()))
        .unwrap_or_default();
    let updated = record
        .thread
        .last()
        .map_or_else(|| created.clone(), |e| e.timestamp.to_string());
    let mut task = Task::new(record.id.clone(), status, created, updated)
        .with_status_message(message)
        .with_poll_interval_ms(POLL_MS);
    task.ttl_ms = None;
    task
}

/// Whether an answered record takes no further round: its answer is then final.
fn final_answer(record: &Record) -> bool {
    record.current_status() == Status::Answered && record.output_fold().round >= record.max_rounds
}

fn status_of(record: &Record) -> TaskStatus {
    match record.current_status() {
        Status::Resolved => TaskStatus::Completed,
        Status::Answered if final_answer(record) => TaskStatus::Completed,
        Status::Abandoned => TaskStatus::Cancelled,
        Status::Pending | Status::Stale | Status::Answered | Status::Escalated => {
            TaskStatus::Working
        }
    }
}

/// What the status means for the asker; an answer still open to a follow-up is quoted, as a
/// client may show the status message to the model.
fn message(record: &Record) -> String {
    let answer = record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == agentx_clarify_core::EntryKind::Answer)
        .map(|e| crate::lines::quote(&e.body));
    match (record.current_status(), answer) {
        (Status::Answered, Some(a)) if !final_answer(record) => format!(
            "answered: {a} — settle it with clarify_resolve or ask on with clarify_follow_up"
        ),
        (Status::Escalated, _) => String::from("escalated: waits for a person's decision"),
        (status, _) => status.as_str().to_owned(),
    }
}

/// The record as `show` gives it: a completed task's result, as a `clarify_show` call's.
async fn shown(hub: &Hub, id: &str) -> Result<CallToolResult, ErrorData> {
    let id = id.to_owned();
    let shown = hub
        .with_store("show", move |store, _| {
            let (issue, record) = agentx_clarify_command::show_id(store, &id)?;
            Ok(agentx_clarify_command::query::show_json(issue, &record))
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(reply::envelope(shown, |v| {
        let record = v.get("clarification").unwrap_or(&Value::Null);
        reply::latest_body(record, &["resolution", "answer"])
            .unwrap_or_default()
            .to_owned()
    }))
}

fn object(value: impl serde::Serialize) -> Result<JsonObject, ErrorData> {
    match serde_json::to_value(value) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Ok(JsonObject::new()),
        Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
    }
}

/// `clarify_ask`'s answer with `wait: "task"`: the task of the record it wrote (or reused).
pub async fn created(
    hub: &Hub,
    agent: &str,
    asked: CallToolResult,
) -> Result<CallToolResponse, ErrorData> {
    let id = asked
        .structured_content
        .as_ref()
        .and_then(|v| v.pointer("/clarification/id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(id) = id.filter(|_| asked.is_error != Some(true)) else {
        return Ok(asked.into());
    };
    let record = owned(hub, agent, &id).await?;
    let task = base(&record, status_of(&record), message(&record));
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// `tasks/get`: the record's state now, read from the ledger.
pub async fn get(
    hub: &Hub,
    who: &Asker<'_>,
    id: &str,
    caps: Option<&ClientCapabilities>,
) -> Result<GetTaskResult, ErrorData> {
    let agent = who.agent;
    let record = owned(hub, agent, id).await?;
    let status = status_of(&record);
    let task = base(&record, status, message(&record));
    let payload = match status {
        TaskStatus::Completed => TaskPayload::Completed {
            result: object(shown(hub, id).await?)?,
        },
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        _ if form_allowed(hub, &record, who, caps)
            && !hub.declined(agent, id, record.thread.len()) =>
        {
            match crate::elicit::form(&record, who.operator) {
                Some(form) => {
                    let mut requests = BTreeMap::new();
                    requests.insert(
                        FORM_KEY.to_owned(),
                        InputRequest::Elicitation(ElicitRequest::new(form)),
                    );
                    TaskPayload::InputRequired {
                        input_requests: requests,
                    }
                }
                None => TaskPayload::Working,
            }
        }
        _ => TaskPayload::Working,
    };
    Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
}

/// `tasks/update`: the person's answer to the task's form, decided as the input-required
/// retry's (`via: "elicitation"`); a decline or cancel writes nothing and is not asked again
/// while the record stays as it was. Refused when the task asks for no input now.
pub async fn update(
    hub: &Hub,
    who: &Asker<'_>,
    id: &str,
    responses: InputResponses,
    caps: Option<&ClientCapabilities>,
) -> Result<(), ErrorData> {
    let agent = who.agent;
    let record = owned(hub, agent, id).await?;
    if !form_allowed(hub, &record, who, caps) {
        return Err(ErrorData::invalid_params(
            format!("task {id} waits for no input"),
            None,
        ));
    }
    let response = responses.get(FORM_KEY).cloned().ok_or_else(|| {
        ErrorData::invalid_params(
            format!("no response to the input request `{FORM_KEY}`"),
            None,
        )
    })?;
    let response: ElicitResult = serde_json::from_value(response)
        .map_err(|e| ErrorData::invalid_params(format!("the `{FORM_KEY}` response: {e}"), None))?;
    match crate::elicit::accepted(&record, response) {
        Some(answered) => crate::elicit::decide(hub, id, agent, who.operator, answered)
            .await
            .map_err(|why| ErrorData::invalid_params(why, None)),
        None => {
            hub.decline(agent, id, record.thread.len());
            Ok(())
        }
    }
}

/// `tasks/cancel`: the asker abandons its question, as `clarify_abandon` does.
pub async fn cancel(hub: &Hub, agent: &str, id: &str) -> Result<(), ErrorData> {
    let record = owned(hub, agent, id).await?;
    if status_of(&record).is_terminal() {
        return Err(ErrorData::invalid_params(
            format!("task {id} is already {}", message(&record)),
            None,
        ));
    }
    let (what, action) = (
        id.to_owned(),
        Action::Abandon {
            from: Some(agent.to_owned()),
            message: Some(String::from("cancelled by the client (tasks/cancel)")),
        },
    );
    hub.with_store("act", move |store, now| {
        agentx_clarify_command::act(store, now, &what, &action)
    })
    .await
    .map(|_| ())
    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `max` rounds whose thread is the question of round 1, then `rest`.
    fn record(max: u32, rest: &str) -> Record {
        let q = r#"{"round":1,"from":"engineer","type":"question","body":"Which?","timestamp":"2026-11-22T10:00:00.000Z"}"#;
        let text = format!(
            r#"{{"issueNumber":1,"clarifications":[{{"id":"CLR-1-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"pending","round":1,"maxRounds":{max},"slaMinutes":30,"thread":[{q}{rest}]}}]}}"#
        );
        let ledger =
            agentx_clarify_core::Ledger::parse("issue-1.json", text.as_bytes(), Some(1)).unwrap();
        ledger.clarifications[0].clone()
    }

    fn entry(kind: &str, from: &str) -> String {
        format!(
            r#",{{"round":1,"from":"{from}","type":"{kind}","body":"LRU","timestamp":"2026-11-22T10:05:00.000Z"}}"#
        )
    }

    #[test]
    fn a_record_maps_to_the_task_status_of_its_state() {
        let answer = entry("answer", "architect");
        let cases = [
            (record(3, ""), TaskStatus::Working),
            (record(3, &answer), TaskStatus::Working),
            (record(1, &answer), TaskStatus::Completed),
            (
                record(3, &format!("{answer}{}", entry("resolution", "engineer"))),
                TaskStatus::Completed,
            ),
            (
                record(3, &entry("escalation", "engineer")),
                TaskStatus::Working,
            ),
            (
                record(3, &entry("abandonment", "engineer")),
                TaskStatus::Cancelled,
            ),
        ];
        for (r, want) in cases {
            assert_eq!(status_of(&r), want, "{:?}", r.current_status());
        }
        let open = record(3, &answer);
        assert!(message(&open).contains("LRU"), "{}", message(&open));
        let task = base(&open, TaskStatus::Working, message(&open));
        assert_eq!(task.task_id, "CLR-1-001");
        assert_eq!(task.created_at, "2026-11-22T10:00:00.000Z");
        assert_eq!(task.last_updated_at, "2026-11-22T10:05:00.000Z");
        assert_eq!(task.ttl_ms, None);
    }
}
