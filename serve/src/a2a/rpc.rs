//! `POST /a2a`: A2A 1.0 JSON-RPC for agent bearer tokens (docs/protocol.md §27). Each method
//! is one or two calls of the command layer acting as the token's agent.

use std::sync::Arc;

use agentx_clarify_a2a::protocol::{
    A2AError, JsonRpcId, JsonRpcRequest, JsonRpcResponse, Part, SendMessageRequest, Task,
    TaskState, SVC_PARAM_VERSION,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use agentx_clarify_core::call::fields::Fields;
use agentx_clarify_core::call::store::{Answer, Ask};
use agentx_clarify_core::call::{IssueArg, NOW};
use agentx_clarify_core::ops::Action;
use agentx_clarify_core::ClarifyError;

use super::read::{read, RpcError};
use super::task::is_final;
use crate::hub::App;
use crate::security::refusal;
use crate::tokens::Kind;

/// The agent a request comes from, and its token's id: its bearer token must be an agent token
/// (401 without a token or with an unknown one, 403 with a person's).
async fn agent_of(app: &Arc<App>, headers: &HeaderMap) -> Result<(String, String), Response> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned());
    let unauthorized = || {
        let mut r = refusal(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "an agent bearer token is required (agentx tokens new --agent NAME)",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    };
    let Some(presented) = presented else {
        return Err(unauthorized());
    };
    let found = crate::auth::lookup(app, presented).await;
    match found {
        // A token minted under a reserved name before they were refused (issue 48): `/a2a`
        // never acts as the hub, as `/mcp` does not.
        Ok(Some(t)) if agentx_clarify_core::names::is_reserved(&t.name) => Err(refusal(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "a token named as one of the hub's own actors (human, monitor, agent-x) acts nowhere",
        )),
        Ok(Some(t)) if t.kind == Kind::Agent => Ok((t.name, t.id)),
        Ok(Some(_)) => Err(refusal(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "a person's token cannot call /a2a; use an agent token",
        )),
        Ok(None) => Err(unauthorized()),
        Err(why) => Err(refusal(StatusCode::SERVICE_UNAVAILABLE, "IO_ERROR", &why)),
    }
}

fn reply(id: JsonRpcId, result: Result<Value, RpcError>) -> Response {
    let body = match result {
        Ok(v) => JsonRpcResponse::success(id, v),
        Err(RpcError(e)) => JsonRpcResponse::error(id, e.to_jsonrpc_error()),
    };
    axum::Json(body).into_response()
}

pub async fn call(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let (agent, token) = match agent_of(&app, &headers).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    let credential = crate::auth::Credential::Token(token);
    let version = headers
        .get(SVC_PARAM_VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    if let Some(v) = version.filter(|v| !v.is_empty() && !v.starts_with("1.") && *v != "1") {
        return reply(
            JsonRpcId::Null,
            Err(RpcError(A2AError::version_not_supported(v))),
        );
    }
    let request: JsonRpcRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            let parse = serde_json::from_slice::<Value>(&body).is_err();
            let error = if parse {
                A2AError::parse_error(e.to_string())
            } else {
                A2AError::invalid_request(e.to_string())
            };
            return reply(JsonRpcId::Null, Err(RpcError(error)));
        }
    };
    let params = request.params.unwrap_or(Value::Null);
    let id = request.id;
    match request.method.as_str() {
        "SendMessage" => reply(
            id,
            send(&app, &agent, params).await.map(|t| json!({"task": t})),
        ),
        "GetTask" => {
            let result = match task_id(&params) {
                Ok(task) => read(&app, &agent, &task).await.and_then(to_value),
                Err(e) => Err(e),
            };
            reply(id, result)
        }
        "CancelTask" => {
            let result = match task_id(&params) {
                Ok(task) => cancel(&app, &agent, &task).await.and_then(to_value),
                Err(e) => Err(e),
            };
            reply(id, result)
        }
        "SubscribeToTask" => match task_id(&params) {
            Ok(task) => match read(&app, &agent, &task).await {
                Ok(first) => super::stream::respond(app, agent, credential, id, first),
                Err(e) => reply(id, Err(e)),
            },
            Err(e) => reply(id, Err(e)),
        },
        "SendStreamingMessage" => match send(&app, &agent, params).await {
            Ok(first) => super::stream::respond(app, agent, credential, id, first),
            Err(e) => reply(id, Err(e)),
        },
        "ListTasks"
        | "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig"
        | "GetExtendedAgentCard" => reply(
            id,
            Err(RpcError(A2AError::unsupported_operation(format!(
                "{} is not offered by this hub",
                request.method
            )))),
        ),
        other => reply(id, Err(RpcError(A2AError::method_not_found(other)))),
    }
}

fn to_value(task: Task) -> Result<Value, RpcError> {
    serde_json::to_value(task).map_err(|e| RpcError(A2AError::internal(e.to_string())))
}

fn task_id(params: &Value) -> Result<String, RpcError> {
    params["id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| RpcError::params("`id` (the task id) is required"))
}

/// The keys of a message's metadata: A2A's own (`to` the agent asked, `issue`, `topic`,
/// `route`; `value` on a reply) and `ask`'s fields by their names (docs/protocol.md §22, §27).
/// Any other key is refused, with the nearest known one.
const METADATA: &[&str] = &[
    "to",
    "issue",
    "topic",
    "route",
    "value",
    "blocking",
    "field",
    "suggestions",
    "answerKind",
    "options",
    "allowOther",
    "minSelect",
    "maxSelect",
    "workflow",
    "step",
    "severity",
    "context",
    "askAgain",
    "idempotencyKey",
];

/// A refusal of the request itself, in the table's words (`errors.rs`).
fn refused(e: &ClarifyError) -> RpcError {
    RpcError(super::errors::of_error(e, None))
}

/// The metadata's fields, checked: a network door takes no `now` (the server's clock dates
/// every write), and no key outside [`METADATA`].
fn metadata(meta: Map<String, Value>) -> Result<Fields, RpcError> {
    if meta.contains_key(NOW) {
        return Err(refused(&agentx_clarify_command::json::now_refused()));
    }
    Fields::check(meta, METADATA, &[]).map_err(|why| refused(&in_metadata(&why)))
}

/// A field of the metadata, typed.
fn take<T: agentx_clarify_core::call::fields::Field + Default>(
    fields: &mut Fields,
    key: &str,
) -> Result<T, RpcError> {
    fields.get(key).map_err(|why| refused(&in_metadata(&why)))
}

/// A refusal of a metadata key, named by its path (`metadata.answerKind`).
fn in_metadata(why: &str) -> ClarifyError {
    ClarifyError::input(agentx_clarify_core::call::fields::nest("metadata", why))
}

/// A new question's `ask` input: the text is the question, the token's agent asks, the
/// metadata names the rest.
fn ask_input(agent: &str, text: &str, f: &mut Fields) -> Result<Ask, RpcError> {
    let to: Option<String> = take(f, "to")?;
    let to = to.ok_or_else(|| RpcError::params("metadata.to (the agent asked) is required"))?;
    let issue: Option<IssueArg> = take(f, "issue")?;
    let issue =
        issue.ok_or_else(|| RpcError::params("metadata.issue (the issue number) is required"))?;
    let topic: Option<String> = take(f, "topic")?;
    let topic = topic.unwrap_or_else(|| {
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .chars()
            .take(100)
            .collect()
    });
    Ok(Ask {
        issue_number: issue,
        from: agent.to_owned(),
        to,
        topic,
        question: text.to_owned(),
        blocking: take(f, "blocking")?,
        field: take(f, "field")?,
        suggestions: take(f, "suggestions")?,
        answer_kind: take(f, "answerKind")?,
        options: take(f, "options")?,
        allow_other: take(f, "allowOther")?,
        min_select: take(f, "minSelect")?,
        max_select: take(f, "maxSelect")?,
        workflow: take(f, "workflow")?,
        step: take(f, "step")?,
        severity: take(f, "severity")?,
        context: take(f, "context")?,
        ask_again: take(f, "askAgain")?,
        idempotency_key: take(f, "idempotencyKey")?,
        ..Ask::default()
    })
}

/// Runs a record operation as the token's agent, typed, off the async threads.
async fn act(app: &App, id: &str, action: Action) -> Result<(), RpcError> {
    let target = id.to_owned();
    let done = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            let m = agentx_clarify_command::act(ws, now, &target, &action)?;
            m.error.map_or(Ok(()), Err)
        })
        .await;
    done.map_err(|e| RpcError(super::errors::of_error(&e, Some(id))))
}

async fn send(app: &Arc<App>, agent: &str, params: Value) -> Result<Task, RpcError> {
    let request: SendMessageRequest = serde_json::from_value(params)
        .map_err(|e| RpcError::params(format!("not a SendMessage request: {e}")))?;
    let message = request.message;
    let text = message
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    let mut meta: Map<String, Value> = Map::new();
    for m in [request.metadata, message.metadata].into_iter().flatten() {
        meta.extend(m);
    }
    let mut fields = metadata(meta)?;
    if let Some(task) = message.task_id.filter(|t| !t.is_empty()) {
        let value: Option<Value> = take(&mut fields, "value")?;
        return answer_back(app, agent, &task, text, value).await;
    }
    if text.trim().is_empty() {
        return Err(RpcError::params(
            "the message has no text: the text is the question",
        ));
    }
    let route: Option<bool> = take(&mut fields, "route")?;
    let ask = ask_input(agent, &text, &mut fields)?;
    let asker = agent.to_owned();
    let asked = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            let m = agentx_clarify_command::ask(ws, now, &ask.into_request()?)?;
            if let Some(e) = m.error {
                return Err(e);
            }
            // Decided before, in other issues (docs/protocol.md §36): only those of issues
            // the asker takes part in, as at every network door.
            let related = match m.related {
                Some(hits) => Some(agentx_clarify_command::seen::visible_hits(
                    ws, &asker, hits,
                )?),
                None => None,
            };
            Ok((m.id, related))
        })
        .await;
    let (id, related) = asked.map_err(|e| refused(&e))?;
    let mut task = read(app, agent, &id).await?;
    if let Some(related) = related {
        task.metadata
            .get_or_insert_with(Default::default)
            .insert(String::from("related"), json!(related));
    }
    // `route: true` (as MCP's clarify_ask): the hub runs the target's runner now, in the
    // background; the task reports what it does. A reused answered question is not routed.
    if route == Some(true) && task.status.state == TaskState::Working {
        let app = Arc::clone(app);
        let routed = id.clone();
        tokio::spawn(async move {
            let done = app
                .call_routed(String::from("route"), json!({"id": routed}))
                .await;
            if done["ok"] != true {
                let code = done["error"]["code"].as_str().unwrap_or("?");
                crate::log::line(&format!("a2a: routing {routed} ended with {code}"));
            }
        });
    }
    Ok(task)
}

/// A message on an existing task: the asker's reply to the question the target asked back.
async fn answer_back(
    app: &App,
    agent: &str,
    task: &str,
    text: String,
    value: Option<Value>,
) -> Result<Task, RpcError> {
    let current = read(app, agent, task).await?;
    if asker(&current) != Some(agent) {
        return Err(RpcError::params(format!(
            "only the agent that asked {task} can give the input it waits for"
        )));
    }
    if current.status.state != TaskState::InputRequired {
        return Err(RpcError::params(format!(
            "task {task} does not wait for input; a new question is a message without a taskId"
        )));
    }
    let back = current
        .status
        .message
        .as_ref()
        .and_then(|m| m.metadata.as_ref())
        .and_then(|m| m.get("clarification"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RpcError::not_found(task))?;
    if text.trim().is_empty() && value.is_none() {
        return Err(RpcError::params("the reply has no text"));
    }
    let reply = Answer {
        id: back.clone(),
        from: agent.to_owned(),
        body: Some(text).filter(|t| !t.trim().is_empty()),
        value,
    };
    let action = reply.action().map_err(|e| refused(&e))?;
    act(app, &back, action).await?;
    read(app, agent, task).await
}

async fn cancel(app: &App, agent: &str, id: &str) -> Result<Task, RpcError> {
    let current = read(app, agent, id).await?;
    if is_final(&current.status.state) {
        return Err(RpcError(A2AError::task_not_cancelable(id)));
    }
    if asker(&current) != Some(agent) {
        let mut e = A2AError::task_not_cancelable(id);
        e.message = format!("{}: only the agent that asked can cancel it", e.message);
        return Err(RpcError(e));
    }
    let abandon = Action::Abandon {
        from: Some(agent.to_owned()),
        message: Some(String::from("canceled by the asker (A2A CancelTask)")),
    };
    act(app, id, abandon).await?;
    read(app, agent, id).await
}

/// The agent that asked the task's question.
fn asker(task: &Task) -> Option<&str> {
    task.metadata.as_ref()?.get("from")?.as_str()
}
