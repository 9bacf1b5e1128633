//! The page's files, compiled into the binary (no CDN: the inbox works offline). The markdown
//! converter is the playground's (one safe converter for both: it escapes every text and
//! emits no links or attributes).

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");
const MARKDOWN_JS: &str = include_str!("../../bindings-wasm/playground/markdown.js");

pub async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "markdown.js" => (MARKDOWN_JS, "text/javascript; charset=utf-8"),
        "app.css" => (APP_CSS, "text/css; charset=utf-8"),
        _ => return crate::security::not_found().await,
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
