//! The MCP server of one agent: its identity (fixed at launch), the hub, the tools and the
//! resource subscriptions.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler};

use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::resources::{self, Target, Watch};

#[derive(Clone)]
pub struct Server {
    pub(crate) hub: Hub,
    /// The acting agent of every tool call.
    pub(crate) agent: Arc<str>,
    /// The default issue of `clarify_ask` and `clarify_show`.
    pub(crate) issue: Option<u32>,
    /// Fired when the client closes its input: waits return instead of holding the exit.
    pub(crate) input_closed: CancellationToken,
    watch: Arc<Watch>,
    /// Turns of the background routings (`[mcp] max_routes`, fixed by the first one).
    routes: Arc<std::sync::OnceLock<Arc<tokio::sync::Semaphore>>>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    /// A server acting as `agent` (already validated) on `hub`.
    pub fn new(hub: Hub, agent: &str, issue: Option<u32>) -> Self {
        Server {
            hub,
            agent: Arc::from(agent),
            issue,
            input_closed: CancellationToken::new(),
            watch: Arc::default(),
            routes: Arc::default(),
            tool_router: Self::router(),
        }
    }

    /// The semaphore every background routing of this server waits on.
    pub(crate) fn routes(&self, max: u32) -> Arc<tokio::sync::Semaphore> {
        self.routes
            .get_or_init(|| {
                let permits = usize::try_from(max.max(1)).unwrap_or(1);
                Arc::new(tokio::sync::Semaphore::new(permits))
            })
            .clone()
    }

    fn instructions(&self) -> String {
        let on = self
            .issue
            .map_or_else(String::new, |n| format!(", working on issue #{n}"));
        format!(
            "AgentX Clarify hub. You are the agent '{}'{on}; every call acts as you. When \
             something you need is ambiguous and another agent owns it, ask with clarify_ask \
             instead of guessing, then clarify_wait for the answer (repeat while it times out). \
             Check clarify_inbox for questions addressed to you and answer them with \
             clarify_answer.",
            self.agent
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("agentx-clarify", env!("CARGO_PKG_VERSION"))
                    .with_title("AgentX Clarify"),
            )
            .with_instructions(self.instructions())
    }

    /// Up to 2025-11-25: the revisions with `resources/subscribe`, which this server
    /// implements (2026-07-28 replaces it with `subscriptions/listen`).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.hub).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.hub, &request.uri)
            .await
            .map(ReadResourceResponse::from)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = Target::parse(&request.uri)?;
        let version = self.hub.version(target.issue()).await;
        self.watch.subscribe(
            request.uri,
            (target.issue(), version),
            self.hub.clone(),
            context.peer,
        );
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watch.unsubscribe(&request.uri);
        Ok(())
    }
}
