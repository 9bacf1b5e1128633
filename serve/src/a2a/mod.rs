//! The hub as an A2A 1.0 agent (docs/protocol.md §27): its agent card at
//! `/.well-known/agent-card.json` (anyone) and JSON-RPC at `/a2a` (agent bearer tokens only).
//! A clarification is an A2A task: `SendMessage` asks one as the token's agent (task id = the
//! clarification id), `GetTask` and `SubscribeToTask` report it, `CancelTask` abandons it. The
//! wire types are the official ones (`a2a-lf`, through `agentx_clarify_a2a::protocol`); the
//! metadata of a message is read into the `ask` input every surface decodes, every store call
//! is one typed call of the command layer, and its failures become JSON-RPC errors by one
//! table (`errors.rs`).

mod card;
mod errors;
mod read;
mod rpc;
mod stream;
mod task;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use crate::hub::App;

/// The A2A paths, merged into the server's router.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/.well-known/agent-card.json", get(card::card))
        .route("/a2a", post(rpc::call))
}
