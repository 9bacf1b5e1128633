//! What every `/mcp` request passes (docs/protocol.md §24), before rmcp sees it:
//! - `Origin`, when present, is the server's own or one of `[serve] allowed_origins` (403);
//! - `Authorization: Bearer <agent token>`: none, unknown or revoked → 401 with
//!   `WWW-Authenticate: Bearer realm="agentx"`; a human's token → 403; the store unreachable
//!   → 503. The token's agent goes into the request as [`Acting`]: the tools act as it and
//!   nothing the client says can change that;
//! - a session belongs to the token that opened it: another token presenting its id → 404
//!   (as for a session that does not exist, so ids of others' sessions cannot be probed);
//! - a token keeps at most `sessions::PER_TOKEN` sessions (its oldest idle one is closed when
//!   it opens one more) and an idle session ends after `sessions::IDLE_FOR` (`sessions.rs`).
//!
//! The token is looked up on every request, so a revocation takes effect on the next one; a
//! stream a request opened (an event stream of rmcp's) looks at it again before each event
//! it sends, and ends once it is revoked (issue 48).

use std::sync::Arc;

use agentx_clarify_mcp::http::Sessions;
use agentx_clarify_mcp::{Acting, Operator};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::sessions::{Book, InUse};
use crate::hub::App;
use crate::security::refusal;
use crate::tokens::Kind;

const SESSION_HEADER: &str = "mcp-session-id";

pub struct Gate {
    app: Arc<App>,
    /// Each session: the token that opened it, its use (`sessions.rs`).
    pub book: Arc<Book>,
    /// rmcp's sessions, to close those the book lets go.
    pub sessions: Sessions,
}

impl Gate {
    pub fn new(app: Arc<App>, sessions: Sessions) -> Self {
        Gate {
            book: Arc::new(Book::counted(app.metrics.mcp_sessions.clone())),
            app,
            sessions,
        }
    }

    /// `[serve] allowed_origins` of the settings as the server last read them (no look: this
    /// runs on the async threads), lowercase, without a trailing slash.
    fn origins(&self) -> Vec<String> {
        let store = self.app.ws.current();
        let config = store.files.settings().config();
        config
            .map(|c| c.serve_allowed_origins.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
            .collect()
    }

    /// Closes the sessions the book let go (rmcp frees their memory), off the request.
    pub fn close(&self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        let sessions = Arc::clone(&self.sessions);
        tokio::spawn(async move {
            for id in ids {
                agentx_clarify_mcp::http::close(&sessions, &id).await;
            }
        });
    }

    fn origin_ok(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        let scheme = if self.app.https { "https" } else { "http" };
        origin == self.app.origin
            || self
                .app
                .hosts
                .iter()
                .any(|h| origin == format!("{scheme}://{h}"))
            || self.origins().contains(&origin)
    }
}

fn unauthorized(message: &str) -> Response {
    let mut r = refusal(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message);
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"agentx\""),
    );
    r
}

pub async fn check(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !origin.to_str().is_ok_and(|o| gate.origin_ok(o)) {
            return refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "this Origin may not use /mcp (add it to [serve] allowed_origins)",
            );
        }
    }
    let Some(presented) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned())
    else {
        return unauthorized(
            "/mcp needs `Authorization: Bearer <agent token>` (agentx tokens new --agent NAME)",
        );
    };
    let token = match crate::auth::lookup(&gate.app, presented).await {
        Ok(Some(t)) => t,
        Ok(None) => return unauthorized("the token is unknown or was revoked"),
        Err(_) => {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                "the token could not be checked: the store is unreachable",
            )
        }
    };
    if token.kind != Kind::Agent || agentx_clarify_core::names::is_reserved(&token.name) {
        return refusal(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "/mcp is for agents: a human token acts in the inbox and /api/v1",
        );
    }
    let session = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut in_use = None;
    if let Some(sid) = &session {
        if gate.book.owner(sid).is_some_and(|owner| owner != token.id) {
            return refusal(StatusCode::NOT_FOUND, "NOT_FOUND", "no such session");
        }
        in_use = gate.book.begin(sid);
    }
    let closing = request.method() == Method::DELETE;
    let token_id = token.id.clone();
    request
        .extensions_mut()
        .insert(Acting(Arc::from(token.name.as_str())));
    // Who runs the agent's client, when the token says (docs/protocol.md §37).
    if let Some(o) = &token.operator {
        request
            .extensions_mut()
            .insert(Operator(Arc::from(o.as_str())));
    }
    let response = next.run(request).await;
    match session {
        // A new session: it belongs to this token from now on, and may push out its oldest
        // idle one.
        None => {
            if let Some(sid) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                let (opened, close) = gate.book.opened(sid, &token.id);
                in_use = Some(opened);
                gate.close(close);
            }
        }
        // Closed by the client, or gone from rmcp (expired): forget the binding too.
        Some(sid)
            if (closing && response.status().is_success())
                || response.status() == StatusCode::NOT_FOUND =>
        {
            in_use = None;
            gate.book.forget(&sid);
        }
        Some(_) => {}
    }
    let response = checked(Arc::clone(&gate.app), token_id, response.into_response());
    match in_use {
        Some(guard) => until_sent(response, guard),
        None => response,
    }
}

/// An event stream that ends as soon as its token is revoked: each frame waits for the
/// token's check. Other responses pass as they are.
fn checked(app: Arc<App>, token_id: String, response: Response) -> Response {
    use futures_util::StreamExt as _;
    let streaming = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !streaming {
        return response;
    }
    let (parts, body) = response.into_parts();
    let credential = crate::auth::Credential::Token(token_id);
    let frames = futures_util::stream::unfold(
        (body.into_data_stream(), app, credential),
        |(mut frames, app, credential)| async move {
            let frame = frames.next().await?;
            if !crate::auth::still_valid(&app, &credential).await {
                return None;
            }
            Some((frame, (frames, app, credential)))
        },
    );
    Response::from_parts(parts, axum::body::Body::from_stream(frames))
}

/// `response`, its session in use until its body has been sent to the end (a tool call's
/// event stream, an elicitation's wait) or the client went away.
fn until_sent(response: Response, guard: InUse) -> Response {
    use futures_util::StreamExt as _;
    response.map(|body| {
        Body::from_stream(body.into_data_stream().map(move |chunk| {
            let _held = &guard;
            chunk
        }))
    })
}
