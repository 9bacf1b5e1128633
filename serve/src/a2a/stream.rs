//! `SubscribeToTask` and `SendStreamingMessage`: server-sent events, each a JSON-RPC response
//! whose result is an A2A `StreamResponse` — the task first, then a `statusUpdate` (after an
//! `artifactUpdate` with the answer) whenever the task's state changes. Changes come from the
//! server's change feed (any process's write shows); the stream ends when the task does, on
//! shutdown, or when the agent's token is revoked (checked before each event and every
//! `events::CHECK_EVERY`, issue 48). One token holds at most
//! [`crate::limits::STREAMS_PER_CREDENTIAL`] streams.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_a2a::protocol::{
    A2AError, JsonRpcId, JsonRpcResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::read::read;
use super::task::is_final;
use crate::auth::{still_valid, Credential};
use crate::hub::App;

fn event(id: &JsonRpcId, item: StreamResponse) -> Event {
    let body = serde_json::to_value(item)
        .map(|v| JsonRpcResponse::success(id.clone(), v))
        .and_then(|r| serde_json::to_string(&r))
        .unwrap_or_default();
    Event::default().data(body)
}

/// What changed between two readings of a task, as stream items.
fn updates(before: &Task, now: &Task) -> Vec<StreamResponse> {
    if before.status.state == now.status.state && before.status.message == now.status.message {
        return Vec::new();
    }
    let mut out = Vec::new();
    for artifact in now.artifacts.iter().flatten() {
        out.push(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: now.id.clone(),
            context_id: now.context_id.clone(),
            artifact: artifact.clone(),
            append: Some(false),
            last_chunk: Some(true),
            metadata: None,
        }));
    }
    out.push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: now.id.clone(),
        context_id: now.context_id.clone(),
        status: now.status.clone(),
        metadata: None,
    }));
    out
}

fn issue_of(task: &Task) -> Option<u64> {
    task.metadata.as_ref()?.get("issue")?.as_u64()
}

pub fn respond(
    app: Arc<App>,
    agent: String,
    credential: Credential,
    id: JsonRpcId,
    first: Task,
) -> Response {
    let Some(slot) = app.streams.open(&credential.key()) else {
        let e =
            A2AError::internal("this token holds as many streams open as it may: close one first");
        return axum::Json(JsonRpcResponse::error(id, e.to_jsonrpc_error())).into_response();
    };
    let (tx, rx) = mpsc::channel::<Event>(16);
    let mut changes = app.changes.subscribe();
    let mut shutdown = app.shutdown.subscribe();
    let mut check = tokio::time::interval(crate::events::CHECK_EVERY);
    check.reset();
    tokio::spawn(async move {
        let _slot = slot;
        let issue = issue_of(&first);
        let mut last = first.clone();
        if tx
            .send(event(&id, StreamResponse::Task(first)))
            .await
            .is_err()
            || is_final(&last.status.state)
        {
            return;
        }
        loop {
            tokio::select! {
                got = changes.recv() => match got {
                    Ok(change) if issue.is_some_and(|n| change.issues.iter().any(|i| u64::from(*i) == n)) => {}
                    Ok(_) => continue,
                    // Missed some: read again.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
                _ = shutdown.changed() => return,
                // The client went away: stop following.
                _ = tx.closed() => return,
                _ = check.tick() => {
                    if still_valid(&app, &credential).await {
                        continue;
                    }
                    return;
                }
            }
            // A revoked token hears nothing more, not even the answer it waited for.
            if !still_valid(&app, &credential).await {
                return;
            }
            let Ok(now) = read(&app, &agent, &last.id).await else {
                return;
            };
            for item in updates(&last, &now) {
                if tx.send(event(&id, item)).await.is_err() {
                    return;
                }
            }
            if is_final(&now.status.state) {
                return;
            }
            last = now;
        }
    });
    let events = stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok::<Event, Infallible>(e), rx))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
