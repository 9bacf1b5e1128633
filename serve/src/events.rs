//! `GET /events`: server-sent events for the pages — `change` with `{"revision", "issues"}`
//! whenever the feed sees one. The stream ends on shutdown (an open stream would otherwise
//! hold a graceful shutdown forever), and when the credential that opened it no longer stands
//! (a revoked token, an ended session: checked at each event and every
//! [`CHECK_EVERY`], issue 48). One credential holds at most
//! [`crate::limits::STREAMS_PER_CREDENTIAL`] streams (429 past it).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::broadcast::error::RecvError;

use crate::auth::{caller_with, still_valid, Caller};
use crate::hub::App;
use crate::security::refusal;

/// How often an idle stream looks at its credential again.
pub const CHECK_EVERY: Duration = Duration::from_secs(15);

pub async fn stream(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let (who, credential) = caller_with(&app, &headers).await;
    match who {
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
    let Some(credential) = credential else {
        return refusal(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "sign in first");
    };
    let Some(slot) = app.streams.open(&credential.key()) else {
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "TOO_MANY_STREAMS",
            "this credential holds as many event streams open as it may: close one first",
        );
    };
    let changes = app.changes.subscribe();
    let shutdown = app.shutdown.subscribe();
    let hello = Event::default().event("ready").data("{}");
    let mut check = tokio::time::interval(CHECK_EVERY);
    check.reset();
    let state = Follow {
        app: Arc::clone(&app),
        credential,
        changes,
        shutdown,
        check,
        _slot: slot,
    };
    let events = stream::unfold((state, Some(hello)), |(mut f, first)| async move {
        if let Some(ev) = first {
            return Some((Ok::<Event, Infallible>(ev), (f, None)));
        }
        let ev = f.next().await?;
        Some((Ok(ev), (f, None)))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// What an open stream follows, and the slot it holds.
struct Follow {
    app: Arc<App>,
    credential: crate::auth::Credential,
    changes: tokio::sync::broadcast::Receiver<crate::hub::Change>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    check: tokio::time::Interval,
    _slot: crate::limits::StreamSlot,
}

impl Follow {
    /// The next event, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if *self.shutdown.borrow() {
                return None;
            }
            tokio::select! {
                got = self.changes.recv() => {
                    let data = match got {
                        Ok(change) => serde_json::to_string(&change).unwrap_or_default(),
                        // Missed some: "something changed" (the page reloads its view).
                        Err(RecvError::Lagged(_)) => "{\"issues\":[]}".to_owned(),
                        Err(RecvError::Closed) => return None,
                    };
                    if !still_valid(&self.app, &self.credential).await {
                        return None;
                    }
                    return Some(Event::default().event("change").data(data));
                }
                _ = self.check.tick() => {
                    if !still_valid(&self.app, &self.credential).await {
                        return None;
                    }
                }
                _ = self.shutdown.changed() => return None,
            }
        }
    }
}
