//! Every path the server answers (docs/protocol.md §23), assembled from the route modules:
//! the top of the crate. Each later surface (MCP over HTTP §24, A2A §27) is one more router
//! merged here; the state they share is [`crate::hub::App`].

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::hub::App;

/// Every path of docs/protocol.md §23 this server answers, the security layer in front;
/// `extra` holds the routes the settings turn on (`/metrics` on this listener).
pub fn router(app: Arc<App>, extra: Router<Arc<App>>) -> Router {
    Router::new()
        .route("/", get(crate::pages::inbox))
        .route("/clarifications/{id}", get(crate::pages::thread))
        .route("/issues/{n}", get(crate::pages::issue))
        .route("/agents", get(crate::pages::agents))
        .route("/audit", get(crate::pages::audit))
        .route("/stats", get(crate::pages::stats))
        .route("/decisions", get(crate::pages::decisions))
        .route("/events", get(crate::events::stream))
        .route("/api/v1/call", post(crate::api::call))
        .route(
            "/login",
            get(crate::auth::login_page).post(crate::auth::login_form),
        )
        .route("/login/link", post(crate::auth::mint_link))
        .route("/logout", post(crate::auth::logout))
        .route(
            "/a/{token}",
            get(crate::answers::page).post(crate::answers::answer),
        )
        .route("/slack/interactions", post(crate::slack::interactions))
        .route("/healthz", get(healthz))
        .route("/readyz", get(crate::ready::readyz))
        .merge(crate::mcp_http::router(Arc::clone(&app)))
        .route("/assets/{file}", get(crate::assets::asset))
        .merge(crate::a2a::routes())
        .merge(extra)
        .fallback(crate::security::not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            crate::security::guard,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::security::MAX_BODY,
        ))
        .with_state(app)
}

async fn healthz() -> axum::Json<Value> {
    axum::Json(json!({"ok": true}))
}
