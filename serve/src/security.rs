//! What every request passes before its handler (docs/protocol.md §23 "Security"): the `Host` check
//! (DNS rebinding), the body cap, same-origin for state-changing requests made with a cookie,
//! and the response headers.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::hub::App;

/// Largest request body.
pub const MAX_BODY: usize = 1024 * 1024;

/// The JSON refusal every API path uses.
pub fn refusal(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(agentx_clarify_core::envelope::refusal(code, message)),
    )
        .into_response()
}

pub async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let mut response = match check(&app, &request) {
        Some(refused) => refused,
        None => next.run(request).await,
    };
    secure_headers(response.headers_mut(), app.https);
    response
}

/// The refusal of a request that fails a check, or `None`.
fn check(app: &App, request: &Request) -> Option<Response> {
    let headers = request.headers();
    // HTTP/2 carries the host as the `:authority` of the URI, not as a header.
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .map(str::to_ascii_lowercase);
    if !host.as_ref().is_some_and(|h| app.hosts.contains(h)) {
        return Some(refusal(
            StatusCode::MISDIRECTED_REQUEST,
            "MISDIRECTED",
            "this server does not answer for that Host",
        ));
    }
    let too_long = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > MAX_BODY);
    if too_long {
        return Some(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "TOO_LARGE",
            "the request body is over 1 MiB",
        ));
    }
    let changes_state = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    // A cookie rides along on cross-site requests; a sign-in form could be posted from
    // anywhere (login CSRF). A bearer token is never sent by a browser on its own.
    let ambient = headers.contains_key(header::COOKIE) || request.uri().path() == "/login";
    if changes_state && ambient && !has_bearer(headers) && !same_origin(app, headers) {
        return Some(refusal(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "a cross-origin request may not change anything here (Origin is not this server)",
        ));
    }
    None
}

pub fn has_bearer(headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer "))
}

/// A browser request from one of this server's own pages: `Origin` is ours, or (a browser
/// that sends `Origin: null` on a form post) `Sec-Fetch-Site: same-origin`.
fn same_origin(app: &App, headers: &HeaderMap) -> bool {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match value("origin") {
        Some("null") | None => value("sec-fetch-site") == Some("same-origin"),
        Some(origin) => {
            let origin = origin.to_ascii_lowercase();
            let scheme = if app.https { "https" } else { "http" };
            origin == app.origin
                || app
                    .hosts
                    .iter()
                    .any(|h| origin == format!("{scheme}://{h}"))
        }
    }
}

fn secure_headers(h: &mut HeaderMap, https: bool) {
    let set = |h: &mut HeaderMap, name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(
        h,
        "content-security-policy",
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    set(h, "x-frame-options", "DENY");
    set(h, "x-content-type-options", "nosniff");
    set(h, "referrer-policy", "same-origin");
    // Over https (TLS here or at the proxy) the browser keeps to https for a year: a first
    // visit by http, or a downgrade on the way, cannot carry the cookie in clear (issue 48).
    if https {
        set(h, "strict-transport-security", "max-age=31536000");
    }
    if !h.contains_key(header::CACHE_CONTROL) {
        set(h, "cache-control", "no-store");
    }
}

pub async fn not_found() -> Response {
    refusal(StatusCode::NOT_FOUND, "NOT_FOUND", "no such path")
}
