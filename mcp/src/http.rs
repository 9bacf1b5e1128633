//! MCP over streamable HTTP (docs/protocol.md §24): rmcp's server transport, one [`Server`] per session,
//! every call acting as the agent of its request ([`crate::Acting`], set by the HTTP server in
//! front after it checked the bearer token). Authentication, `Origin` and the binding of a
//! session to its token are that server's (`agentx serve`); this module only builds the
//! service it mounts.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::server::Server;

/// The service behind `/mcp`.
pub type Service = StreamableHttpService<Server, LocalSessionManager>;

/// The sessions of a `/mcp` service, shared with the server in front, which caps and expires
/// them ([`close`]).
pub type Sessions = Arc<LocalSessionManager>;

/// How long rmcp keeps a session that exchanges no message: only a backstop (the server in
/// front expires idle sessions much sooner, and knows which are in use), so it outlasts the
/// longest silence of a session in use — an elicitation form waits up to 10 minutes for its
/// person.
pub const SILENT_FOR: Duration = Duration::from_secs(crate::elicit::FORM_FOR.as_secs() + 60);

/// The session store of a `/mcp` service (rmcp's, ending a session after [`SILENT_FOR`]).
pub fn sessions() -> Sessions {
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(SILENT_FOR);
    Arc::new(manager)
}

/// Ends session `id` (its worker, its streams, its memory); one already gone is no error.
pub async fn close(sessions: &Sessions, id: &str) {
    let _ = sessions.close_session(&Arc::from(id)).await;
}

/// The `/mcp` service on `hub`: sessions (resource notifications and elicitation need a
/// stream back to the client) kept in `sessions`, `Host` limited to `hosts` (the server
/// checks it too), bodies to `max_body` bytes; ends every session when `stop` fires.
pub fn service(
    hub: Hub,
    hosts: Vec<String>,
    max_body: usize,
    stop: CancellationToken,
    sessions: Sessions,
) -> Service {
    let template = Server::per_request(hub);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_allowed_hosts(hosts)
        // The server in front checks `Origin` against its own origin and `[serve]
        // allowed_origins` (rmcp's check knows neither).
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(stop);
    StreamableHttpService::new(move || Ok(template.session()), sessions, config)
}
