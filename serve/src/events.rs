//! `GET /events`: server-sent events for the pages — `change` with `{"revision", "issues"}`
//! whenever the feed sees one. The stream ends on shutdown (an open stream would otherwise
//! hold a graceful shutdown forever).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::broadcast::error::RecvError;

use crate::auth::{caller, Caller};
use crate::hub::App;
use crate::security::refusal;

pub async fn stream(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    match caller(&app, &headers).await {
        Caller::Session(_) | Caller::Human(_) => {}
        Caller::Agent => {
            return refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "an agent token cannot follow the inbox",
            )
        }
        Caller::Unavailable(why) => {
            return refusal(StatusCode::SERVICE_UNAVAILABLE, "IO_ERROR", &why)
        }
        Caller::Nobody => {
            return refusal(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "sign in first")
        }
    }
    let changes = app.changes.subscribe();
    let shutdown = app.shutdown.subscribe();
    let hello = Event::default().event("ready").data("{}");
    let events = stream::unfold(
        (changes, shutdown, Some(hello)),
        |(mut changes, mut shutdown, first)| async move {
            if let Some(ev) = first {
                return Some((Ok::<Event, Infallible>(ev), (changes, shutdown, None)));
            }
            if *shutdown.borrow() {
                return None;
            }
            tokio::select! {
                got = changes.recv() => {
                    let data = match got {
                        Ok(change) => serde_json::to_string(&change).unwrap_or_default(),
                        // Missed some: "something changed" (the page reloads its view).
                        Err(RecvError::Lagged(_)) => "{\"issues\":[]}".to_owned(),
                        Err(RecvError::Closed) => return None,
                    };
                    let ev = Event::default().event("change").data(data);
                    Some((Ok(ev), (changes, shutdown, None)))
                }
                _ = shutdown.changed() => None,
            }
        },
    );
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
