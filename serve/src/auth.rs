//! Who is asking (docs/protocol.md §23): a session cookie (from a one-time sign-in link or a human
//! token typed into `/login`), or a bearer token. Sessions live in the state store
//! (`sessions.rs`): every server on it knows them, and a session opened with a token ends
//! with the token.
//!
//! On loopback without a public URL the inbox has a host name of its own,
//! `<label>.localhost:<port>` ([`App::inbox_host`]): browsers resolve `*.localhost` to
//! loopback and keep its cookies from every other port of 127.0.0.1 (a cookie is not bound
//! to its port). The cookie is set, and honoured, only on requests for that name; a sign-in
//! on 127.0.0.1 is sent there first (issue 48).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::html;
use crate::hub::App;
use crate::sessions::{Session, SESSION_FOR};
use crate::tokens::{self, same_secret, Kind};
use agentx_clarify_core::names::is_reserved;

/// Who sent a request.
pub enum Caller {
    Session(Session),
    /// A human bearer token.
    Human(String),
    /// An agent bearer token: never the inbox or `/api/v1`.
    Agent,
    /// No credentials, or ones that are unknown, revoked or expired.
    Nobody,
    /// The token could not be checked: the store is unreachable (503, never a guess).
    Unavailable(String),
}

pub fn cookie_name(app: &App) -> &'static str {
    if app.https {
        "__Host-agentx"
    } else {
        "agentx"
    }
}

/// Whether a cookie may be set or honoured on this request: its `Host` is the inbox's own
/// name, when the inbox has one.
fn cookie_host(app: &App, headers: &HeaderMap) -> bool {
    match &app.inbox_host {
        None => true,
        Some(inbox) => headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| h.eq_ignore_ascii_case(inbox)),
    }
}

/// The same path on the inbox's own name, when this request came by another one: where a
/// sign-in is sent so the cookie is set for that name only.
fn to_inbox_host(app: &App, headers: &HeaderMap, path_and_query: &str) -> Option<Response> {
    let inbox = app.inbox_host.as_ref()?;
    if cookie_host(app, headers) {
        return None;
    }
    Some(Redirect::to(&format!("http://{inbox}{path_and_query}")).into_response())
}

fn cookie_value<'a>(app: &App, headers: &'a HeaderMap) -> Option<&'a str> {
    if !cookie_host(app, headers) {
        return None;
    }
    let name = cookie_name(app);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The stored token that `presented` is, its use recorded, looked up off the async threads:
/// every bearer check (pages, `/api/v1`, `/mcp`, `/a2a`) goes through here. `Err` says why
/// the tokens could not be read.
pub async fn lookup(app: &Arc<App>, presented: String) -> Result<Option<tokens::Token>, String> {
    let shared = Arc::clone(app);
    let found = app.bounded(move || {
        let app = shared;
        let all = app.tokens.load()?;
        let found = tokens::find(&all, &presented);
        if let Some(t) = &found {
            tokens::touch(
                &app.tokens,
                &t.id,
                t.last_used,
                agentx_clarify_store::clock::system_now_ms(),
            );
        }
        Ok::<_, agentx_clarify_core::ClarifyError>(found)
    });
    found.await.map_err(|e| e.to_string())
}

/// What a caller presented, to look at again while a stream it opened stays open.
#[derive(Clone, Debug)]
pub enum Credential {
    /// A bearer token, by its id.
    Token(String),
    /// A session, by [`Session::key`].
    Session(String),
}

impl Credential {
    /// Its name among the stream caps (`limits::Streams`).
    pub fn key(&self) -> String {
        match self {
            Credential::Token(id) => format!("token:{id}"),
            Credential::Session(key) => format!("session:{key}"),
        }
    }
}

/// The caller of a request: a bearer token wins over a cookie.
pub async fn caller(app: &Arc<App>, headers: &HeaderMap) -> Caller {
    caller_with(app, headers).await.0
}

/// [`caller`] and what it presented (none when nothing valid was).
pub async fn caller_with(app: &Arc<App>, headers: &HeaderMap) -> (Caller, Option<Credential>) {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(presented) = bearer {
        let found = lookup(app, presented.trim().to_owned()).await;
        return match found {
            // A token minted under a reserved name before they were refused acts nowhere.
            Ok(Some(t)) if is_reserved(&t.name) => (Caller::Nobody, None),
            Ok(Some(t)) if t.kind == Kind::Human => {
                (Caller::Human(t.name), Some(Credential::Token(t.id)))
            }
            Ok(Some(t)) => (Caller::Agent, Some(Credential::Token(t.id))),
            Ok(None) => (Caller::Nobody, None),
            Err(why) => (Caller::Unavailable(why), None),
        };
    }
    let Some(cookie) = cookie_value(app, headers).map(str::to_owned) else {
        return (Caller::Nobody, None);
    };
    // Bounded as every request's store call is: a frozen database is a 503 within
    // `[store] timeout_ms`, not a request that hangs (docs/protocol.md §32).
    let store = Arc::clone(app);
    let found = app
        .bounded(move || {
            let tokens = store.tokens.load()?;
            let now = agentx_clarify_store::clock::system_now_ms();
            store.sessions.get(&cookie, now, &tokens)
        })
        .await;
    match found {
        Ok(Some(s)) => {
            let key = Credential::Session(s.key.clone());
            (Caller::Session(s), Some(key))
        }
        Ok(None) => (Caller::Nobody, None),
        Err(e) => (Caller::Unavailable(format!("{}: {e}", e.code())), None),
    }
}

/// Whether `credential` still stands: the token is not revoked, the session not ended,
/// expired or dead with its token. What an open stream asks at each event (issue 48). A
/// store that cannot answer keeps the stream: a revocation is written to that same store, and
/// while it is down no change reaches the stream either; the next event asks again (an
/// outage must not drop every open stream, docs/protocol.md §32).
pub async fn still_valid(app: &Arc<App>, credential: &Credential) -> bool {
    let store = Arc::clone(app);
    let credential = credential.clone();
    tokio::task::spawn_blocking(move || {
        let tokens = store.tokens.load()?;
        match &credential {
            Credential::Token(id) => Ok(tokens.iter().any(|t| &t.id == id)),
            Credential::Session(key) => {
                let now = agentx_clarify_store::clock::system_now_ms();
                store.sessions.still(key, now, &tokens)
            }
        }
    })
    .await
    .ok()
    .and_then(Result::ok)
    .unwrap_or(true)
}

/// Why a request that presented a session cookie has no session: `expired` (it lapsed) or
/// `unknown` (signed out, or ended with its token); `None` without a cookie, or when the
/// store cannot say.
pub async fn session_gone(app: &Arc<App>, headers: &HeaderMap) -> Option<&'static str> {
    let cookie = cookie_value(app, headers)?.to_owned();
    let store = Arc::clone(app);
    tokio::task::spawn_blocking(move || {
        let tokens = store.tokens.load().ok()?;
        let now = agentx_clarify_store::clock::system_now_ms();
        match store.sessions.get(&cookie, now, &tokens) {
            Ok(Some(_)) | Err(_) => None,
            Ok(None) => Some(if store.sessions.lapsed(&cookie, now).unwrap_or(false) {
                "expired"
            } else {
                "unknown"
            }),
        }
    })
    .await
    .ok()
    .flatten()
}

/// The CSRF token a cookie request must carry: `X-CSRF-Token` or the form's `csrf`.
pub fn csrf_ok(session: &Session, headers: &HeaderMap, form_field: Option<&str>) -> bool {
    let sent = headers
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
        .or(form_field);
    sent.is_some_and(|t| same_secret(t, &session.csrf))
}

fn set_cookie(app: &App, value: &str, max_age: u64) -> HeaderValue {
    let secure = if app.https { "; Secure" } else { "" };
    let text = format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}",
        cookie_name(app)
    );
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The session cookie and the redirect to where the person was going (`next`, checked: one
/// of this server's pages; else the inbox); `clear` drops the kept `next` once used.
/// Starts a session for `human` (opened with token `token`, or a link) and sets its cookie.
async fn signed_in(
    app: &Arc<App>,
    human: &str,
    token: Option<String>,
    next: Option<&str>,
    clear: bool,
) -> Response {
    let store = Arc::clone(app);
    let name = human.to_owned();
    let started = app
        .bounded(move || {
            let tokens = store.tokens.load()?;
            let now = agentx_clarify_store::clock::system_now_ms();
            store.sessions.start(&name, token.as_deref(), now, &tokens)
        })
        .await;
    match started {
        Ok(cookie) => {
            crate::log::line(&format!("'{human}' signed in"));
            let to = next.and_then(crate::next::safe).unwrap_or("/");
            let mut r = Redirect::to(to).into_response();
            let h = r.headers_mut();
            h.append(
                header::SET_COOKIE,
                set_cookie(app, &cookie, SESSION_FOR.as_secs()),
            );
            if clear {
                h.append(header::SET_COOKIE, next_cookie(app, "", 0));
            }
            r
        }
        Err(e) => {
            crate::log::line(&format!("a session could not be started: {}", e.code()));
            (StatusCode::SERVICE_UNAVAILABLE, "cannot start a session").into_response()
        }
    }
}

/// The cookie that keeps `next` while the person fetches a sign-in link (10 minutes, as the
/// link lives).
fn next_cookie(app: &App, next: &str, max_age: u64) -> HeaderValue {
    let secure = if app.https { "; Secure" } else { "" };
    let text = format!(
        "{}={}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
        crate::next::cookie_name(app.https),
        html::query_value(next)
    );
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `next` kept by [`next_cookie`], decoded and checked.
fn kept_next(app: &App, headers: &HeaderMap) -> Option<String> {
    let name = crate::next::cookie_name(app.https);
    let raw = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)?;
    let decoded = percent_decode(raw)?;
    crate::next::safe(&decoded).map(str::to_owned)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn too_many() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        html::bare(
            "Too many tries",
            "<p>Too many failed sign-ins with this token from this address: wait a minute.</p>",
        ),
    )
        .into_response()
}

/// Why the person is asked to sign in, in words (the page's first line).
fn reason(why: Option<&str>, next: Option<&str>) -> Option<String> {
    let base = match why {
        Some("expired") => Some("Your session expired (a sign-in lasts 12 hours)."),
        Some("unknown") => Some(
            "This server does not know your session: you signed out, or it ended when the server restarted.",
        ),
        _ => None,
    };
    let then = next.map(|n| format!("Sign in to open {n}."));
    match (base, then) {
        (None, None) => None,
        (Some(b), None) => Some(format!("{b} Sign in again.")),
        (None, Some(t)) => Some(t),
        (Some(b), Some(t)) => Some(format!("{b} {t}")),
    }
}

fn login_view(error: Option<&str>, why: Option<&str>, next: Option<&str>) -> String {
    let note = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", html::esc(e)))
        .or_else(|| {
            reason(why, next)
                .map(|r| format!("<p class=\"why\" role=\"status\">{}</p>", html::esc(&r)))
        })
        .unwrap_or_default();
    let next_field = next
        .map(|n| {
            format!(
                "<input type=\"hidden\" name=\"next\" value=\"{}\">",
                html::esc(n)
            )
        })
        .unwrap_or_default();
    // With a `next`, the page's script looks whether this browser is signed in after all (a
    // link followed from another site comes without the SameSite=Strict cookie) and goes on.
    let data = next
        .map(|n| format!(" data-next=\"{}\"", html::esc(n)))
        .unwrap_or_default();
    html::bare(
        "Sign in",
        &format!(
            "{note}<form method=\"post\" action=\"/login\" class=\"login\"{data}>{next_field}\
             <label for=\"token\">Human token</label>\
             <input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" required autofocus>\
             <button type=\"submit\">Sign in</button></form>\
             <p class=\"hint\">On a phone: open a sign-in link from <code>agentx tokens link --human NAME</code> \
             (or the inbox's \u{201c}Sign-in link\u{201d} button) in this browser; it brings you back here. \
             Or paste a token from <code>agentx tokens new --human NAME</code>, or use the link \
             <code>agentx serve</code> printed.</p>"
        ),
    )
}

#[derive(Deserialize)]
pub struct LoginQuery {
    once: Option<String>,
    next: Option<String>,
    why: Option<String>,
}

pub async fn login_page(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: axum::http::Uri,
    Query(q): Query<LoginQuery>,
) -> Response {
    let here = uri.path_and_query().map_or("/login", |p| p.as_str());
    if let Some(there) = to_inbox_host(&app, &headers, here) {
        return there;
    }
    let next = q.next.as_deref().and_then(crate::next::safe);
    let Some(code) = q.once else {
        let why = q
            .why
            .as_deref()
            .filter(|w| matches!(*w, "expired" | "unknown"));
        let mut r = axum::response::Html(login_view(None, why, next)).into_response();
        if let Some(n) = next {
            r.headers_mut()
                .append(header::SET_COOKIE, next_cookie(&app, n, 600));
        }
        return r;
    };
    // Never rate-limited (issue 48): a wrong code tells nothing of a right one, and nothing a
    // local process does keeps a person from signing in with the link they were given.
    // The start-up link of this process, else a link minted by `tokens link` or the inbox.
    let human = match app.login.redeem(&code) {
        Some(human) => Some(human),
        None => redeem_link(&app, code).await,
    };
    match human {
        Some(human) => {
            let kept = kept_next(&app, &headers);
            signed_in(&app, &human, None, next.or(kept.as_deref()), kept.is_some()).await
        }
        None => {
            crate::log::line("a sign-in link was refused (used, expired or wrong)");
            (
                StatusCode::UNAUTHORIZED,
                axum::response::Html(login_view(
                    Some("This sign-in link was already used or has expired."),
                    None,
                    next,
                )),
            )
                .into_response()
        }
    }
}

/// A link minted by `agentx tokens link` or the inbox's button, used (once) from the store.
async fn redeem_link(app: &Arc<App>, code: String) -> Option<String> {
    let ws = Arc::clone(&app.ws);
    tokio::task::spawn_blocking(move || {
        let now = agentx_clarify_store::clock::system_now_ms();
        crate::links::Links::new(ws)
            .redeem(&code, now)
            .ok()
            .flatten()
    })
    .await
    .ok()
    .flatten()
}

#[derive(Deserialize)]
pub struct LinkForm {
    csrf: Option<String>,
}

/// `POST /login/link`: a one-time sign-in link for the signed-in person, shown once — to open
/// the inbox on a phone from a link sent to themselves.
pub async fn mint_link(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Form(form): Form<LinkForm>,
) -> Response {
    let human = match caller(&app, &headers).await {
        Caller::Session(s) if csrf_ok(&s, &headers, form.csrf.as_deref()) => s.human,
        Caller::Human(name) => name,
        Caller::Session(_) => {
            return crate::security::refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "the page's CSRF token is missing or wrong",
            )
        }
        _ => return Redirect::to("/login").into_response(),
    };
    let (ws, who) = (Arc::clone(&app.ws), human.clone());
    let minted = tokio::task::spawn_blocking(move || {
        let now = agentx_clarify_store::clock::system_now_ms();
        crate::links::Links::new(ws).mint(&who, now)
    })
    .await;
    let minted = match minted {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::response::Html(html::bare(
                    "No sign-in link",
                    &format!(
                        "<p class=\"error\" role=\"alert\">{}</p>",
                        html::esc(&e.to_string())
                    ),
                )),
            )
                .into_response()
        }
        Err(_) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "the link was not made").into_response()
        }
    };
    // On the inbox's own name (on loopback): the link signs in where the cookie belongs.
    let link = crate::links::url(&app.inbox_url(), &minted.code);
    crate::log::line(&format!("a sign-in link was made for '{human}'"));
    axum::response::Html(html::bare(
        &format!("A sign-in link for {human}"),
        &format!(
            "<p>Open this link on your phone (send it to yourself): it signs in <strong>{}</strong> \
             once, until {} UTC. It is shown only now.</p>\
             <p><input class=\"link\" readonly value=\"{}\" aria-label=\"The sign-in link\"></p>\
             <p><a href=\"/\">Back to the inbox</a></p>",
            html::esc(&human),
            html::esc(
                &agentx_clarify_core::time::format_ms(minted.expires)
                    .get(..16)
                    .unwrap_or_default()
                    .replace('T', " ")
            ),
            html::esc(&link)
        ),
    ))
    .into_response()
}

#[derive(Deserialize)]
pub struct LoginForm {
    token: String,
    next: Option<String>,
}

pub async fn login_form(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    // A token typed on another name is not read: the sign-in happens on the inbox's own.
    if let Some(there) = to_inbox_host(&app, &headers, "/login") {
        return there;
    }
    let presented = form.token.trim().to_owned();
    let prefix = crate::sessions::prefix(&presented);
    if app.login.blocked(peer.ip(), &prefix) {
        return too_many();
    }
    let next = form.next.as_deref().and_then(crate::next::safe);
    let store = Arc::clone(&app);
    let found = tokio::task::spawn_blocking(move || {
        store
            .tokens
            .load()
            .ok()
            .and_then(|all| tokens::find(&all, &presented))
    })
    .await
    .ok()
    .flatten();
    match found {
        Some(t) if t.kind == Kind::Human && !is_reserved(&t.name) => {
            signed_in(&app, &t.name, Some(t.id), next, false).await
        }
        other => {
            if app.login.failed(peer.ip(), &prefix) {
                // Many failures from here: each answered slowly, none locking anyone out.
                tokio::time::sleep(crate::sessions::SLOW_FOR).await;
            }
            let why = if other.is_some() {
                "An agent token cannot sign in to the inbox."
            } else {
                "That token is not valid."
            };
            (
                StatusCode::UNAUTHORIZED,
                axum::response::Html(login_view(Some(why), None, next)),
            )
                .into_response()
        }
    }
}

#[derive(Deserialize)]
pub struct LogoutForm {
    csrf: Option<String>,
}

pub async fn logout(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Form(form): Form<LogoutForm>,
) -> Response {
    if let Caller::Session(s) = caller(&app, &headers).await {
        if !csrf_ok(&s, &headers, form.csrf.as_deref()) {
            return crate::security::refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "the page's CSRF token is missing or wrong",
            );
        }
        if let Some(c) = cookie_value(&app, &headers).map(str::to_owned) {
            let store = Arc::clone(&app);
            let _ = tokio::task::spawn_blocking(move || store.sessions.end(&c)).await;
        }
    }
    let mut r = Redirect::to("/login").into_response();
    r.headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&app, "", 0));
    r
}
