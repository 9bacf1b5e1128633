//! `/mcp` (docs/protocol.md §24): the MCP server of `agentx mcp`, over streamable HTTP, for agents on any
//! machine. The tools, resources and elicitation are the stdio server's (crate
//! `agentx-clarify-mcp`, one implementation); this module puts the server's rules in front
//! ([`gate`]): the bearer token names the acting agent of every request, sessions belong to
//! the token that opened them, `Origin` is checked. Resource updates and waits wake on the
//! server's change feed ([`crate::feed`]). The hub is built on the server's workspace handle
//! exactly as `agentx mcp` builds its own (`Hub::new`): the same store calls and the same
//! runner, so a question to a `preset = "a2a"` agent is routed here as over stdio.

mod gate;

use std::sync::Arc;

use agentx_clarify_mcp::Hub;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::hub::App;

/// The `/mcp` route, its gate in front.
pub fn router(app: Arc<App>) -> Router<Arc<App>> {
    let hub = Hub::new(Arc::clone(&app.ws)).with_feed(feed(&app));
    let stop = CancellationToken::new();
    {
        let mut shutdown = app.shutdown.subscribe();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _ = shutdown.wait_for(|down| *down).await;
            stop.cancel();
        });
    }
    let service =
        agentx_clarify_mcp::http::service(hub, app.hosts.clone(), crate::security::MAX_BODY, stop);
    let state = Arc::new(gate::Gate::new(Arc::clone(&app)));
    Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(state, gate::check))
}

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
