//! What every page shares: who is viewing it (a person; else `/login`, or 403 for an agent),
//! the page around its body or the store's failure as a page, and how ages are shown.

use std::sync::Arc;

use agentx_clarify_core::ClarifyError;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Redirect, Response};

use crate::auth::{caller, Caller};
use crate::html;
use crate::hub::App;

/// The person viewing a page, and the page's CSRF token (none for a bearer caller).
pub struct Viewer {
    pub human: String,
    pub csrf: Option<String>,
}

/// Pages need a person: no session → `/login`, told the page to come back to and why (a
/// cookie that is no session now); an agent token → 403.
pub async fn viewer(app: &Arc<App>, headers: &HeaderMap, uri: &Uri) -> Result<Viewer, Response> {
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
        Caller::Nobody => {
            let here = uri.path_and_query().map_or("/", |p| p.as_str());
            let why = crate::auth::session_gone(app, headers).await;
            Err(Redirect::to(&crate::next::login_location(here, why)).into_response())
        }
    }
}

/// A page, or the store's failure as a page, with the status of `status.rs`'s table (the
/// API's).
pub fn render(
    v: &Viewer,
    title: &str,
    active: &str,
    body: Result<String, ClarifyError>,
) -> Response {
    render_headed(v, title, active, body.map(|b| (html::esc(title), b)))
}

/// [`render`] of a page whose heading (markup) is not its tab title: `(heading, body)`.
pub fn render_headed(
    v: &Viewer,
    title: &str,
    active: &str,
    page: Result<(String, String), ClarifyError>,
) -> Response {
    match page {
        Ok((heading, body)) => Html(html::page_headed(
            title,
            &heading,
            &v.human,
            v.csrf.as_deref(),
            active,
            &body,
        ))
        .into_response(),
        Err(e) => {
            let status = crate::status::of_code(e.error_code());
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

/// A time as every page shows it: `2026-11-22 10:00 UTC` (one format, the zone always named),
/// in a `<time>` element that carries the exact instant.
pub fn when(ms: i64) -> String {
    let iso = agentx_clarify_core::time::format_ms(ms);
    format!("<time datetime=\"{iso}\">{}</time>", when_text(&iso))
}

/// The text of [`when`] from RFC 3339 text (as the ledgers and statuses hold it); text that
/// is no time is shown as it is.
pub fn when_text(iso: &str) -> String {
    match agentx_clarify_core::time::parse_ms(iso) {
        Some(ms) => {
            let canonical = agentx_clarify_core::time::format_ms(ms);
            let date = canonical.get(..10).unwrap_or_default();
            let minute = canonical.get(11..16).unwrap_or_default();
            format!("{date} {minute} UTC")
        }
        None => iso.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_time_format_with_its_zone() {
        assert_eq!(
            when(1_795_341_600_000),
            "<time datetime=\"2026-11-22T10:00:00.000Z\">2026-11-22 10:00 UTC</time>"
        );
        assert_eq!(
            when_text("2026-11-22T11:30:59+01:00"),
            "2026-11-22 10:30 UTC"
        );
        assert_eq!(when_text("soon"), "soon");
        assert_eq!(age(120_000, 0), "2m");
    }
}
