//! `/mcp` (docs/protocol.md §24): the MCP server of `agentx mcp`, over streamable HTTP, for agents on any
//! machine. The tools, resources and elicitation are the stdio server's (crate
//! `agentx-clarify-mcp`, one implementation); this module puts the server's rules in front
//! ([`gate`]): the bearer token names the acting agent of every request, sessions belong to
//! the token that opened them and are capped per token and expired when idle
//! ([`sessions`]), `Origin` is checked. Resource updates and waits wake on the server's change
//! feed ([`crate::feed`]). The hub is built on the server's workspace handle exactly as
//! `agentx mcp` builds its own (`Hub::new`): the same store calls and the same runner, so a
//! question to a `preset = "a2a"` agent is routed here as over stdio.

mod gate;
mod sessions;

use std::sync::Arc;

use agentx_clarify_mcp::Hub;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::hub::App;

/// The `/mcp` route, its gate in front.
pub fn router(app: Arc<App>) -> Router<Arc<App>> {
    let hub = Hub::new(Arc::clone(&app.ws))
        .with_feed(feed(&app))
        .with_routes(Arc::clone(&app.routes));
    let stop = CancellationToken::new();
    {
        let mut shutdown = app.shutdown.subscribe();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _ = shutdown.wait_for(|down| *down).await;
            stop.cancel();
        });
    }
    let sessions = agentx_clarify_mcp::http::sessions();
    let service = agentx_clarify_mcp::http::service(
        hub,
        app.hosts.clone(),
        crate::security::MAX_BODY,
        stop,
        Arc::clone(&sessions),
    );
    let state = Arc::new(gate::Gate::new(Arc::clone(&app), sessions));
    expire_idle(&app, Arc::clone(&state));
    Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(state, gate::check))
}

/// Ends the sessions idle for `sessions::IDLE_FOR`, looking every [`SWEEP_EVERY`]; stops on
/// shutdown (rmcp's own expiry is only the backstop: `agentx_clarify_mcp::http::SILENT_FOR`).
fn expire_idle(app: &Arc<App>, gate: Arc<gate::Gate>) {
    let mut shutdown = app.shutdown.subscribe();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SWEEP_EVERY) => {}
                _ = shutdown.changed() => return,
            }
            gate.close(gate.book.expired(std::time::Instant::now()));
        }
    });
}

/// How often idle sessions are looked for.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(15);

/// The server's change feed as the MCP hub hears it: the issues of each change.
fn feed(app: &Arc<App>) -> agentx_clarify_mcp::Feed {
    let (tx, _) = tokio::sync::broadcast::channel(256);
    let out = tx.clone();
    let mut changes = app.changes.subscribe();
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match changes.recv().await {
                // A change of the statuses file alone concerns no ledger.
                Ok(change) if change.issues.is_empty() => {}
                Ok(change) => {
                    let _ = out.send(change.issues);
                }
                // Lost some: every listener looks again.
                Err(RecvError::Lagged(_)) => {
                    let _ = out.send(Vec::new());
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
    tx
}
