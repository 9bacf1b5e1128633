//! What every `/mcp` request passes (docs/protocol.md §24), before rmcp sees it:
//! - `Origin`, when present, is the server's own or one of `[serve] allowed_origins` (403);
//! - `Authorization: Bearer <agent token>`: none, unknown or revoked → 401 with
//!   `WWW-Authenticate: Bearer realm="agentx"`; a human's token → 403; the store unreachable
//!   → 503. The token's agent goes into the request as [`Acting`]: the tools act as it and
//!   nothing the client says can change that;
//! - a session belongs to the token that opened it: another token presenting its id → 404
//!   (as for a session that does not exist, so ids of others' sessions cannot be probed).
//!
//! The token is looked up on every request, so a revocation takes effect on the next one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agentx_clarify_mcp::Acting;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::hub::App;
use crate::security::refusal;
use crate::tokens::Kind;

const SESSION_HEADER: &str = "mcp-session-id";

pub struct Gate {
    app: Arc<App>,
    /// Session id → the id of the token that opened it.
    sessions: Mutex<HashMap<String, String>>,
}

impl Gate {
    pub fn new(app: Arc<App>) -> Self {
        Gate {
            app,
            sessions: Mutex::default(),
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

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
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
    if let Some(sid) = &session {
        let owner = gate.sessions().get(sid).cloned();
        if owner.is_some_and(|owner| owner != token.id) {
            return refusal(StatusCode::NOT_FOUND, "NOT_FOUND", "no such session");
        }
    }
    let closing = request.method() == Method::DELETE;
    request
        .extensions_mut()
        .insert(Acting(Arc::from(token.name.as_str())));
    let response = next.run(request).await;
    match session {
        // A new session: it belongs to this token from now on.
        None => {
            if let Some(sid) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                gate.sessions().insert(sid.to_owned(), token.id.clone());
            }
        }
        // Closed by the client, or gone from rmcp (expired): forget the binding too.
        Some(sid)
            if (closing && response.status().is_success())
                || response.status() == StatusCode::NOT_FOUND =>
        {
            gate.sessions().remove(&sid);
        }
        Some(_) => {}
    }
    response.into_response()
}
