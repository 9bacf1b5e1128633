//! MCP over streamable HTTP (docs/protocol.md §24): rmcp's server transport, one [`Server`] per session,
//! every call acting as the agent of its request ([`crate::Acting`], set by the HTTP server in
//! front after it checked the bearer token). Authentication, `Origin` and the binding of a
//! session to its token are that server's (`agentx serve`); this module only builds the
//! service it mounts.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::server::Server;

/// The service behind `/mcp`.
pub type Service = StreamableHttpService<Server, LocalSessionManager>;

/// The `/mcp` service on `hub`: sessions (resource notifications and elicitations need a
/// stream back to the client), `Host` limited to `hosts` (the server checks it too), bodies
/// to `max_body` bytes; ends every session when `stop` fires.
pub fn service(hub: Hub, hosts: Vec<String>, max_body: usize, stop: CancellationToken) -> Service {
    let template = Server::per_request(hub);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_allowed_hosts(hosts)
        // The server in front checks `Origin` against its own origin and `[serve]
        // allowed_origins` (rmcp's check knows neither).
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(stop);
    StreamableHttpService::new(
        move || Ok(template.session()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
