//! What every page shares: who is viewing it (a person; else `/login`, or 403 for an agent),
//! the page around its body or the store's failure as a page, and how ages are shown.

use std::sync::Arc;

use agentx_clarify_core::ClarifyError;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};

use crate::auth::{caller, Caller};
use crate::html;
use crate::hub::App;

/// The person viewing a page, and the page's CSRF token (none for a bearer caller).
pub struct Viewer {
    pub human: String,
    pub csrf: Option<String>,
}

/// Pages need a person: no session → `/login`; an agent token → 403.
pub async fn viewer(app: &Arc<App>, headers: &HeaderMap) -> Result<Viewer, Response> {
    match caller(app, headers).await {
        Caller::Session(s) => Ok(Viewer {
            human: s.human,
            csrf: Some(s.csrf),
        }),
        Caller::Human(name) => Ok(Viewer {
            human: name,
            csrf: None,
        }),
        Caller::Agent => Err((
            StatusCode::FORBIDDEN,
            Html(html::bare(
                "Forbidden",
                "<p>An agent token cannot open the inbox.</p>",
            )),
        )
            .into_response()),
        Caller::Unavailable(why) => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            Html(html::bare(
                "The store is unreachable",
                &format!("<p class=\"error\" role=\"alert\">{}</p>", html::esc(&why)),
            )),
        )
            .into_response()),
        Caller::Nobody => Err(Redirect::to("/login").into_response()),
    }
}

/// A page, or the store's failure as a page (503 when the store cannot be reached).
pub fn render(
    v: &Viewer,
    title: &str,
    active: &str,
    body: Result<String, ClarifyError>,
) -> Response {
    match body {
        Ok(body) => Html(html::page(
            title,
            &v.human,
            v.csrf.as_deref(),
            active,
            &body,
        ))
        .into_response(),
        Err(e) => {
            let status = match e.code() {
                "NOT_FOUND" | "NO_LEDGER" | "INVALID_ID" | "INVALID_ISSUE" => StatusCode::NOT_FOUND,
                "IO_ERROR" | "LOCK_TIMEOUT" => StatusCode::SERVICE_UNAVAILABLE,
                c if c.starts_with("INVALID_") => StatusCode::BAD_REQUEST,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            let body = format!(
                "<p class=\"error\" role=\"alert\"><strong>{}</strong>: {}</p>",
                html::esc(e.code()),
                html::esc(&e.to_string())
            );
            (
                status,
                Html(html::page(
                    title,
                    &v.human,
                    v.csrf.as_deref(),
                    active,
                    &body,
                )),
            )
                .into_response()
        }
    }
}

/// How long ago `ms` was, shortly (`3m`, `2h`, `5d`).
pub fn age(now: i64, ms: i64) -> String {
    let s = (now - ms).max(0) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}
