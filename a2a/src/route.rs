//! Routing to an A2A agent (docs/protocol.md §27): the prompt goes as one `SendMessage` (a
//! text part; the record's id and issue as metadata), and the task is followed with `GetTask`
//! to an end. The outcome is handed to the core as a run it already knows how to read:
//! `completed` is an answer (the text of the artifacts, else of the last agent message),
//! `input-required` a `[CLARIFICATION_NEEDED]` block with the agent's question, anything else
//! (failed, rejected, canceled, auth-required, a transport error, the timeout) an agent
//! error with its cause. On the timeout `CancelTask` is sent.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use a2a::{
    Message, Part, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, Task,
    TaskState,
};
use agentx_clarify_command::RunFor;
use agentx_clarify_core::routing::{Invocation, RunResult};
use serde_json::{json, Value};

use crate::client::{card, CallError, Client};

/// The first wait between two `GetTask`s; it grows to [`POLL_MAX`].
const POLL_FIRST: Duration = Duration::from_millis(100);
const POLL_MAX: Duration = Duration::from_secs(2);
/// How long a `CancelTask` after the timeout may take.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// How a task ended, for the core.
enum End {
    Answer(String),
    AskedBack(String),
    Error(String),
    TimedOut(String),
}

/// Runs `invocation` (preset `a2a`: its `program` is the agent's base URL) for `record`.
pub fn run(invocation: &Invocation, prompt: &str, record: Option<&RunFor<'_>>) -> RunResult {
    let started_ms = now_ms();
    let mut log = Vec::new();
    let end = follow(invocation, prompt, record, &mut log);
    let mut result = RunResult {
        started_ms,
        stderr: log.join("\n"),
        ..RunResult::default()
    };
    match end {
        End::Answer(text) => {
            result.exit = Some(0);
            result.stdout = text;
        }
        End::AskedBack(question) => {
            result.exit = Some(0);
            result.stdout = asked_back_block(&invocation.agent, &question);
        }
        End::Error(cause) => result.spawn_error = Some(cause),
        End::TimedOut(cause) => {
            result.timed_out = true;
            result.spawn_error = Some(cause);
        }
    }
    result.ended_ms = now_ms();
    result
}

/// Why the runner cannot reach the agent before anything is written (`RUNNER_UNAVAILABLE`):
/// its token variable is not set.
pub fn unavailable(invocation: &Invocation) -> Option<String> {
    match &invocation.token_env {
        Some(name) if token(invocation).is_none() => Some(format!(
            "the A2A runner of '{}' reads its bearer token from ${name}, which is not set",
            invocation.agent
        )),
        _ => None,
    }
}

/// The bearer token: the runner's own `env` table first, then the hub's environment.
fn token(invocation: &Invocation) -> Option<String> {
    let name = invocation.token_env.as_ref()?;
    invocation
        .env
        .get(name)
        .cloned()
        .or_else(|| std::env::var(name).ok())
        .filter(|t| !t.is_empty())
}

fn follow(
    invocation: &Invocation,
    prompt: &str,
    record: Option<&RunFor<'_>>,
    log: &mut Vec<String>,
) -> End {
    let timeout = Duration::from_secs(u64::from(invocation.timeout_seconds));
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let token = token(invocation);
    if invocation.token_env.is_some() && token.is_none() {
        return End::Error(String::from("its token_env variable is not set"));
    }
    let (card, endpoint) = match card(&invocation.program, token.as_deref(), left()) {
        Ok(found) => found,
        Err(e) => return End::Error(e.0),
    };
    log.push(format!(
        "agent card: {} {} (JSON-RPC at {endpoint})",
        card.name, card.version
    ));
    if let Err(why) = endpoint_allowed(invocation, &endpoint) {
        return End::Error(why);
    }
    let mut client = match Client::new(endpoint, token) {
        Ok(c) => c,
        Err(e) => return End::Error(e.0),
    };
    let mut metadata = HashMap::new();
    if let Some(r) = record {
        metadata.insert(String::from("id"), json!(r.id));
        metadata.insert(String::from("issue"), json!(r.issue));
        metadata.insert(String::from("round"), json!(r.round));
    }
    let mut message = Message::new(Role::User, vec![Part::text(prompt)]);
    message.metadata = (!metadata.is_empty()).then_some(metadata);
    let request = SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: Some(vec![String::from("text/plain")]),
            task_push_notification_config: None,
            history_length: None,
            // Without it SendMessage blocks until the task ends, and a task that never ends
            // could not be canceled: its id would never be known.
            return_immediately: Some(true),
        }),
        metadata: None,
        tenant: None,
    };
    let mut task = match client.send(&request, left()) {
        Ok(SendMessageResponse::Message(m)) => {
            log.push(String::from("SendMessage: a message (no task)"));
            return match text_of(&m.parts) {
                Some(text) => End::Answer(text),
                None => End::Error(String::from("the agent's reply holds no text")),
            };
        }
        Ok(SendMessageResponse::Task(t)) => t,
        Err(e) if left().is_zero() => return End::TimedOut(timed_out(invocation, None, e)),
        Err(e) => return End::Error(e.0),
    };
    log.push(format!(
        "task {}: {}",
        task.id,
        state_name(&task.status.state)
    ));
    let mut wait = POLL_FIRST;
    loop {
        if let Some(end) = ended(&task) {
            return end;
        }
        if left().is_zero() {
            return End::TimedOut(cancel(&mut client, invocation, &task.id, log));
        }
        std::thread::sleep(wait.min(left()));
        wait = (wait * 3 / 2).min(POLL_MAX);
        if left().is_zero() {
            return End::TimedOut(cancel(&mut client, invocation, &task.id, log));
        }
        match client.get_task(&task.id, left()) {
            Ok(t) => {
                if t.status.state != task.status.state {
                    log.push(format!("task {}: {}", t.id, state_name(&t.status.state)));
                }
                task = t;
            }
            Err(_) if left().is_zero() => {
                return End::TimedOut(cancel(&mut client, invocation, &task.id, log))
            }
            Err(e) => return End::Error(e.0),
        }
    }
}

/// The bearer token goes only to the origin of the configured URL (issue 48): a card naming
/// its JSON-RPC endpoint on another origin would have the hub send its credential wherever
/// the agent says — unless `[agents.X] allow_card_origins` lists that origin.
fn endpoint_allowed(invocation: &Invocation, endpoint: &str) -> Result<(), String> {
    use agentx_clarify_core::origin::origin_of;
    let configured = origin_of(&invocation.program);
    let named = origin_of(endpoint);
    match named {
        Some(o) if Some(&o) == configured.as_ref() || invocation.allow_card_origins.contains(&o) => {
            Ok(())
        }
        Some(o) => Err(format!(
            "the agent card names its JSON-RPC endpoint on another origin, {o} (the runner's URL is on {}): refused, no request sent there; list it in [agents.{}] allow_card_origins to trust it",
            configured.as_deref().unwrap_or("?"),
            invocation.agent
        )),
        None => Err(format!(
            "the agent card names a JSON-RPC endpoint that is not an http(s) URL: {}",
            agentx_clarify_core::error::shown(endpoint)
        )),
    }
}

fn timed_out(invocation: &Invocation, task: Option<&str>, e: CallError) -> String {
    match task {
        Some(id) => format!(
            "timed out after {} s; CancelTask sent for task {id}",
            invocation.timeout_seconds
        ),
        None => format!("timed out after {} s ({e})", invocation.timeout_seconds),
    }
}

/// Sends `CancelTask` (bounded) and says so.
fn cancel(client: &mut Client, invocation: &Invocation, id: &str, log: &mut Vec<String>) -> String {
    match client.cancel_task(id, CANCEL_WAIT) {
        Ok(t) => log.push(format!("CancelTask {id}: {}", state_name(&t.status.state))),
        Err(e) => log.push(format!("CancelTask {id}: {e}")),
    }
    timed_out(invocation, Some(id), CallError(String::new()))
}

/// The end a task reached, or `None` while it works.
fn ended(task: &Task) -> Option<End> {
    let said = task.status.message.as_ref().and_then(|m| text_of(&m.parts));
    let state = &task.status.state;
    match state {
        TaskState::Unspecified | TaskState::Submitted | TaskState::Working => None,
        TaskState::Completed => {
            let artifacts = task
                .artifacts
                .iter()
                .flatten()
                .filter_map(|a| text_of(&a.parts))
                .collect::<Vec<_>>();
            let answer = if artifacts.is_empty() {
                said.or_else(|| last_agent_message(task))
            } else {
                Some(artifacts.join("\n"))
            };
            Some(match answer {
                Some(text) => End::Answer(text),
                None => End::Error(String::from(
                    "the A2A task completed without any text (no artifact, no agent message)",
                )),
            })
        }
        TaskState::InputRequired => Some(match said.or_else(|| last_agent_message(task)) {
            Some(question) => End::AskedBack(question),
            None => End::Error(String::from(
                "the A2A task asked for input without saying what it needs",
            )),
        }),
        TaskState::Failed | TaskState::Rejected | TaskState::Canceled | TaskState::AuthRequired => {
            let what = match state {
                TaskState::Failed => "failed",
                TaskState::Rejected => "was rejected",
                TaskState::Canceled => "was canceled",
                _ => "requires authentication the hub cannot give",
            };
            Some(End::Error(match said {
                Some(text) => format!("the A2A task {what}: {}", one_line(&text)),
                None => format!("the A2A task {what}"),
            }))
        }
    }
}

fn last_agent_message(task: &Task) -> Option<String> {
    task.history
        .iter()
        .flatten()
        .rev()
        .filter(|m| m.role == Role::Agent)
        .find_map(|m| text_of(&m.parts))
}

/// The text parts, joined by newlines; `None` when there is no text.
fn text_of(parts: &[Part]) -> Option<String> {
    let text = parts
        .iter()
        .filter_map(Part::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    (!text.trim().is_empty()).then_some(text)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn state_name(state: &TaskState) -> String {
    match serde_json::to_value(state) {
        Ok(Value::String(s)) => s,
        _ => String::from("?"),
    }
}

/// The agent's question as the block the core reads as a question asked back (§17); a reply
/// that is such a block already is passed on as it is.
fn asked_back_block(agent: &str, question: &str) -> String {
    if question.contains("[CLARIFICATION_NEEDED]") {
        return question.to_owned();
    }
    format!(
        "[CLARIFICATION_NEEDED]\nagent_id: {agent}\nquestions:\n- {}\n[/CLARIFICATION_NEEDED]\n",
        one_line(question)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_question_becomes_one_block_line() {
        let b = asked_back_block("architect", "Which region?\nAnd  why?");
        assert_eq!(
            b,
            "[CLARIFICATION_NEEDED]\nagent_id: architect\nquestions:\n- Which region? And why?\n[/CLARIFICATION_NEEDED]\n"
        );
        let parsed = agentx_clarify_core::routing::interpret(
            &RunResult {
                exit: Some(0),
                stdout: b,
                ..RunResult::default()
            },
            &agentx_clarify_core::routing::Preset::A2a.output(),
            1000,
        );
        assert!(
            matches!(parsed, agentx_clarify_core::routing::Interpretation::AskedBack { ref questions, .. } if questions == &["Which region? And why?"]),
            "{parsed:?}"
        );
    }
}
