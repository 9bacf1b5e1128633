//! What every request leaves behind once answered (docs/protocol.md §23.2–§23.3): its count
//! and latency under its route's template (`/clarifications/{id}`, never the path: an id in
//! a label would make a series per record), and its log line when the log is JSON.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;

use crate::hub::App;

/// A path no route matched: one label for all of them (a scanner's paths never become series).
const UNMATCHED: &str = "unmatched";
/// The header a request's id comes in (from a proxy) and goes back out in.
const REQUEST_ID: &str = "x-request-id";

pub async fn observe(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let method = method_label(request.method());
    let id = crate::log::request_id(
        request
            .headers()
            .get(REQUEST_ID)
            .and_then(|v| v.to_str().ok()),
    );
    let mut response = next.run(request).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    app.metrics
        .request(&route, method, status, elapsed.as_secs_f64());
    crate::log::request(&id, &route, method, status, elapsed);
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, v);
    }
    response
}

/// The method as a label: the methods the routes answer, anything else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PUT => "PUT",
        _ => "other",
    }
}
