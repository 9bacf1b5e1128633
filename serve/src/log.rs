//! The server's log on stderr (docs/protocol.md §23.3): by default one text line per event
//! worth telling the person who started it; with `--log-format json` one JSON object per line
//! (`ts`, `level`, `msg`, and for each request `request_id`, `route`, `method`, `status`,
//! `ms`), for a log shipper. Nothing logged carries a secret: callers never pass a token,
//! cookie or code, and a request is logged by its route's template — never its path or query,
//! where a sign-in code travels (`/login?once=…`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;

static JSON: AtomicBool = AtomicBool::new(false);
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// Turns the JSON log on (`--log-format json`), before anything is logged.
pub fn set_json(on: bool) {
    JSON.store(on, Ordering::SeqCst);
}

fn now() -> String {
    agentx_clarify_core::time::format_ms(agentx_clarify_store::clock::system_now_ms())
}

/// One log line on stderr. Callers never pass a token, cookie or code.
pub fn line(text: &str) {
    if JSON.load(Ordering::SeqCst) {
        eprintln!("{}", json!({"ts": now(), "level": "info", "msg": text}));
    } else {
        eprintln!("{} agentx serve: {text}", now());
    }
}

/// A new request's id: the proxy's `X-Request-Id` when it is a plain token (letters, digits,
/// `-`, `_`, `.`; at most 64), else this process's own (`<pid>-<n>`), so one id follows a
/// request from the proxy's log to this one.
pub fn request_id(given: Option<&str>) -> String {
    match given {
        Some(id)
            if (1..=64).contains(&id.len())
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) =>
        {
            id.to_owned()
        }
        _ => format!(
            "{}-{}",
            std::process::id(),
            REQUESTS.fetch_add(1, Ordering::Relaxed) + 1
        ),
    }
}

/// One request answered, in the JSON log only (the text log stays the events a person reads).
pub fn request(id: &str, route: &str, method: &str, status: u16, elapsed: Duration) {
    if !JSON.load(Ordering::SeqCst) {
        return;
    }
    let level = if status >= 500 { "error" } else { "info" };
    eprintln!(
        "{}",
        json!({
            "ts": now(),
            "level": level,
            "msg": "request",
            "request_id": id,
            "route": route,
            "method": method,
            "status": status,
            "ms": (elapsed.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
        })
    );
}
