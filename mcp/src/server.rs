//! The MCP server of one agent: its identity (fixed at launch over stdio, the token's over
//! HTTP), the hub, the tools and the resource subscriptions.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CancelTaskParams, GetTaskParams, GetTaskResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler};

use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::resources::{self, Target, Watch};

/// The agent an HTTP request acts as, put in the request's extensions by the server in front
/// after it checked the bearer token (docs/protocol.md §24). Nothing the client sends can set it.
#[derive(Clone, Debug)]
pub struct Acting(pub Arc<str>);

/// The person who runs the acting agent's client, when its token names them (`agentx tokens
/// new --agent engineer --operator alice`, docs/protocol.md §37); set beside [`Acting`].
#[derive(Clone, Debug)]
pub struct Operator(pub Arc<str>);

#[derive(Clone)]
pub struct Server {
    pub(crate) hub: Hub,
    /// The acting agent of every tool call when fixed at launch (stdio); `None`: each
    /// request's [`Acting`] (HTTP), so the identity comes from the token, per request.
    pub(crate) agent: Option<Arc<str>>,
    /// Who runs the client of a server fixed at launch (stdio), when said.
    pub(crate) operator: Option<Arc<str>>,
    /// The default issue of `clarify_ask` and `clarify_show`.
    pub(crate) issue: Option<u32>,
    /// Fired when the client closes its input: waits return instead of holding the exit.
    pub(crate) input_closed: CancellationToken,
    watch: Arc<Watch>,
    /// Turns of the background routings (`[mcp] max_routes`, fixed by the first one).
    routes: Arc<std::sync::OnceLock<Arc<tokio::sync::Semaphore>>>,
    /// Records this session already asked its client's user about: at most once per record
    /// and session.
    elicited: Arc<Mutex<HashSet<String>>>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    /// A server acting as `agent` (already validated) on `hub`.
    pub fn new(hub: Hub, agent: &str, issue: Option<u32>) -> Self {
        let mut server = Server::per_request(hub);
        server.agent = Some(Arc::from(agent));
        server.issue = issue;
        server
    }

    /// The person who runs this (stdio) server's client: `agentx mcp --operator alice`.
    pub fn with_operator(mut self, operator: Option<&str>) -> Self {
        self.operator = operator.map(Arc::from);
        self
    }

    /// A server whose every call acts as the agent of its request ([`Acting`]): one per HTTP
    /// session, made by [`Server::session`].
    pub fn per_request(hub: Hub) -> Self {
        Server {
            hub,
            agent: None,
            operator: None,
            issue: None,
            input_closed: CancellationToken::new(),
            watch: Arc::default(),
            routes: Arc::default(),
            elicited: Arc::default(),
            tool_router: Self::router(),
        }
    }

    /// A new session of this server: its own subscriptions and elicitations, the same hub
    /// and the same turns of background routings (`[mcp] elicit` is read at each wait).
    pub fn session(&self) -> Self {
        Server {
            input_closed: CancellationToken::new(),
            watch: Arc::default(),
            elicited: Arc::default(),
            ..self.clone()
        }
    }

    /// The agent `ctx`'s call acts as: the launch's, or the one the HTTP server in front
    /// found for the request's token. `None` only for an HTTP request nobody vouched for.
    pub(crate) fn actor(&self, ctx: &RequestContext<RoleServer>) -> Option<Arc<str>> {
        if let Some(agent) = &self.agent {
            return Some(Arc::clone(agent));
        }
        #[cfg(feature = "http")]
        if let Some(parts) = ctx.extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<Acting>().map(|a| Arc::clone(&a.0));
        }
        let _ = ctx;
        None
    }

    /// The person at `ctx`'s client, when the launch (`agentx mcp --operator`) or the HTTP
    /// request's token names them: the only person elicitation asks about a record assigned
    /// to people, and whose name its decision then carries.
    pub(crate) fn operator(&self, ctx: &RequestContext<RoleServer>) -> Option<Arc<str>> {
        if self.agent.is_some() {
            return self.operator.clone();
        }
        #[cfg(feature = "http")]
        if let Some(parts) = ctx.extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<Operator>().map(|o| Arc::clone(&o.0));
        }
        let _ = ctx;
        None
    }

    /// The acting agent, or the refusal of a request nobody vouched for (never reached behind
    /// `agentx serve`'s token check).
    pub(crate) fn principal(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Arc<str>, ErrorData> {
        self.actor(ctx).ok_or_else(|| {
            ErrorData::invalid_request(
                "this request carries no agent: send the agent's bearer token",
                None,
            )
        })
    }

    /// Whose view of the records a read takes: the token's agent over HTTP (a network door,
    /// `agentx_clarify_command::seen`); over stdio the launch's user reads every file anyway.
    pub(crate) fn viewer(&self, ctx: &RequestContext<RoleServer>) -> Option<Arc<str>> {
        match self.agent {
            Some(_) => None,
            None => self.actor(ctx),
        }
    }

    /// Whether record `id` may be put to the client's user now (and marks it asked).
    pub(crate) fn first_elicitation(&self, id: &str) -> bool {
        self.elicited
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned())
    }

    /// The semaphore every background routing of this server waits on.
    pub(crate) fn routes(&self, max: u32) -> Arc<tokio::sync::Semaphore> {
        if let Some(shared) = self.hub.routes() {
            return shared;
        }
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
        let who = match &self.agent {
            Some(agent) => format!("the agent '{agent}'"),
            None => String::from("the agent your token names"),
        };
        format!(
            "AgentX Clarify hub. You are {who}{on}; every call acts as you. When \
             something you need is ambiguous and another agent owns it, ask with clarify_ask \
             instead of guessing, then clarify_wait for the answer (repeat while it times out; \
             when it returns asked-back, answer that question first). Check clarify_inbox for questions addressed to you and answer them with \
             clarify_answer."
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
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("agentx-clarify", env!("CARGO_PKG_VERSION"))
                    .with_title("AgentX Clarify"),
            )
            .with_instructions(self.instructions())
    }

    /// Every revision up to 2026-07-28 (docs/protocol.md §24): an `initialize`-era client
    /// (2025-06-18, 2025-11-25) keeps the session, `resources/subscribe` and mid-call
    /// elicitation; a 2026-07-28 client gets `server/discover`, per-request metadata and
    /// elicitation only by input-required results (rmcp refuses the rest for it).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    /// `subscriptions/listen` (2026-07-28): the resources this server serves, whatever their
    /// issue (one the agent is about to ask in has no record yet); others are left out.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| Target::parse(uri).is_ok())
            .cloned()
            .collect();
        Some(
            SubscriptionFilter::builder()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let agent = self.actor(context.request_context());
        crate::listen::follow(&self.hub, agent, context).await;
        Ok(())
    }

    /// `tasks/get` (docs/protocol.md §24): the record of the task, read from the ledger.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let agent = self.principal(&context)?;
        let operator = self.operator(&context);
        let caps = context.client_capabilities();
        let who = crate::mrtr::Asker {
            agent: &agent,
            operator: operator.as_deref(),
        };
        crate::tasks::get(&self.hub, &who, &request.task_id, caps.as_ref()).await
    }

    /// `tasks/update`: the person's answer to the task's form.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.principal(&context)?;
        let operator = self.operator(&context);
        let caps = context.client_capabilities();
        let (id, responses) = (request.task_id, request.input_responses);
        let who = crate::mrtr::Asker {
            agent: &agent,
            operator: operator.as_deref(),
        };
        crate::tasks::update(&self.hub, &who, &id, responses, caps.as_ref()).await
    }

    /// `tasks/cancel`: the asker abandons the record.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.principal(&context)?;
        crate::tasks::cancel(&self.hub, &agent, &request.task_id).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.hub, self.viewer(&context)).await
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
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(
            &self.hub,
            self.viewer(&context),
            self.actor(&context),
            &request.uri,
        )
        .await
        .map(ReadResourceResponse::from)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Any issue may be followed (one the agent is about to ask in has no record yet): an
        // update names the resource only, and reading it is narrowed as every read is.
        let target = Target::parse(&request.uri)?;
        let version = self.hub.version_of(target.issue()).await;
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
