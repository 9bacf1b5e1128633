//! The tools of docs/protocol.md §15. Each decodes its input, adds the server's agent as the actor (no
//! input can name another), calls the store through the hub, and answers with the store's
//! `--json` envelope as structured content and a short text.

use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_core::config::ElicitPolicy;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use serde_json::{json, Value};

use agentx_clarify_core::listing::ListFilter;
use agentx_clarify_core::Action;

use crate::input::{self, decode, schema, MAX_WAIT_SECONDS};
use crate::reply;
use crate::server::Server;
use crate::wait::{self, Awaited, Elicitor, Progress, Stop};

/// Decodes `$args` as `$ty`, or returns the `INVALID_INPUT` refusal from the tool.
macro_rules! args {
    ($args:expr, $ty:ty) => {
        match decode::<$ty>($args) {
            Ok(v) => v,
            // docs/protocol.md §31: an error quotes at most 200 characters of its input (an unknown
            // field's name is the client's text).
            Err(why) => return reply::invalid(&crate::lines::quote(&why)),
        }
    };
}

/// The agent the call acts as (the launch's over stdio, the token's over HTTP), or the
/// refusal of a call nobody vouched for (never reached behind `agentx serve`'s token check).
macro_rules! actor {
    ($self:expr, $ctx:expr) => {
        match $self.actor(&$ctx) {
            Some(agent) => agent,
            None => {
                return reply::refusal(
                    "UNAUTHORIZED",
                    "this call carries no agent: send the agent's bearer token",
                )
            }
        }
    };
}

#[tool_router(vis = "pub(crate)")]
impl Server {
    #[tool(
        description = "Ask another agent a question instead of guessing. Use it whenever a requirement, design decision, name or value you need is ambiguous, missing or contradictory and another agent (the architect, the product manager, …) owns the answer: do not invent it. Returns at once with the new record (id CLR-<issue>-<seq>, status pending); then call clarify_wait with that id to get the answer. Workflows decide whom you may ask: a refusal (SCOPE_VIOLATION) lists the allowed agents.",
        input_schema = schema::<input::Ask>()
    )]
    async fn clarify_ask(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = ctx
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let (asked, task) = self.ask(args, &ctx, declared).await;
        match (task, self.actor(&ctx)) {
            (true, Some(agent)) => crate::tasks::created(&self.hub, &agent, asked).await,
            _ => Ok(asked.into()),
        }
    }

    #[tool(
        description = "The text to resume work with once a clarification you asked is settled: the questions and answers of every round, the resolution (or the human's decision), and what to do next. Read it before you continue.",
        input_schema = schema::<input::Id>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_resume_prompt(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = args!(args, input::Id);
        let input = json!({ "id": &a.id });
        let resume = self
            .hub
            .with_store("resumePrompt", move |store, _| {
                agentx_clarify_command::signals::resume_prompt(store, &a.id)
            })
            .await;
        let out = match resume {
            Ok(r) => agentx_clarify_core::envelope::ok(
                agentx_clarify_core::api::signals::resume_value(&r),
            ),
            Err(e) => agentx_clarify_core::envelope::failure(&e),
        };
        let out = self
            .hub
            .seen_by(self.viewer(&ctx), "resumePrompt", input, out)
            .await;
        reply::envelope(out, |v| {
            v.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
    }

    #[tool(
        description = "Wait for the answer to a clarification (or any change of its status). Returns when the record is answered, resolved, escalated or abandoned, with its status and the answer text (with until: \"decision\", an escalated record is waited on until a human decides; after a person decided, `decision` says who and what, and `answer` is its text); or after timeoutSeconds (at most 50) with timedOut: true, in which case call it again. It returns at once with outcome \"asked-back\" when a question waits on you (the other agent asked you back, or asks you something on the same issue): answer that question first (clarify_answer with its id, in askedBack), then wait again — the other agent waits on you. After an answer: clarify_resolve if it settles the question, clarify_follow_up if something is still open.",
        input_schema = schema::<input::Wait>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_wait(
        &self,
        args: JsonObject,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let w = match decode::<input::Wait>(args) {
            Ok(w) => w,
            Err(why) => return Ok(reply::invalid(&crate::lines::quote(&why)).into()),
        };
        let seconds = w.timeout_seconds.unwrap_or(MAX_WAIT_SECONDS);
        if !(0.0..=MAX_WAIT_SECONDS).contains(&seconds) {
            return Ok(reply::invalid(&format!(
                "`timeoutSeconds` {seconds} is out of range: expected 0 to {MAX_WAIT_SECONDS}"
            ))
            .into());
        }
        let progress = ctx.meta.get_progress_token().map(|token| Progress {
            token,
            peer: ctx.peer.clone(),
        });
        let timeout = Duration::from_secs_f64(seconds);
        // A record the agent may not read is not one it may wait on (issue 48).
        if let Some(viewer) = self.viewer(&ctx) {
            let seen = self
                .hub
                .call_seen_by(Some(viewer), "show", json!({ "id": &w.id }))
                .await;
            if seen.get("ok") != Some(&Value::Bool(true)) {
                return Ok(reply::envelope(seen, |_| String::new()).into());
            }
        }
        let waiter = self.actor(&ctx);
        let operator = self.operator(&ctx);
        // `[mcp] elicit` (docs/protocol.md §24), read at each wait: an edit applies at once.
        let policy = self.hub.elicit_setting();
        // 2026-07-28: the form is this call's input-required result, and its answer the
        // retry's (`crate::mrtr`); a state is judged whatever the policy says now.
        if let (Some(agent), true) = (&waiter, crate::elicit::modern(&ctx)) {
            if let Some(state) = state {
                let who = crate::mrtr::Asker {
                    agent,
                    operator: operator.as_deref(),
                };
                crate::mrtr::answer(&self.hub, &who, &w.id, state, responses).await?;
            } else if policy == ElicitPolicy::Requester
                && crate::mrtr::forms_declared(ctx.client_capabilities().as_ref())
            {
                let who = crate::mrtr::Asker {
                    agent,
                    operator: operator.as_deref(),
                };
                if let Some(form) = crate::mrtr::offer(&self.hub, &who, &w.id).await {
                    return Ok(form.into());
                }
            }
        }
        let elicitor = match &waiter {
            Some(agent)
                if policy == ElicitPolicy::Requester
                    && !crate::elicit::modern(&ctx)
                    && crate::elicit::supported(&ctx.peer) =>
            {
                Some(Elicitor {
                    peer: ctx.peer.clone(),
                    agent: Arc::clone(agent),
                    operator: operator.clone(),
                    server: self,
                })
            }
            _ => None,
        };
        let stop = Stop {
            request: ctx.ct,
            input_closed: self.input_closed.clone(),
        };
        let awaited = Awaited {
            id: w.id,
            until: w.until.unwrap_or_default(),
            timeout,
            waiter,
        };
        Ok(wait::wait(&self.hub, awaited, progress, stop, elicitor)
            .await
            .into())
    }

    #[tool(
        description = "Questions other agents asked you that wait for your answer (pending or stale). Check it when you start or finish a piece of work and answer each with clarify_answer: the asker may be blocked until you do.",
        input_schema = schema::<input::Nothing>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_inbox(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let _ = args!(args, input::Nothing);
        let listed = match crate::resources::inbox(&self.hub, agent).await {
            Ok(v) => v,
            Err(e) => return reply::failure(&e),
        };
        reply::envelope(listed, |v| {
            let records = clarifications(v);
            let mut text = reply::list_text(records, "no clarification waits for your answer");
            for r in records {
                if let Some(q) = reply::latest_body(r, &["question"]) {
                    let id = r.get("id").and_then(Value::as_str).unwrap_or_default();
                    text.push_str(&format!("\n\n{id} asks:\n{q}"));
                }
            }
            text.push_str(&reply::notes(v));
            text
        })
    }

    #[tool(
        description = "Answer a clarification addressed to you (see clarify_inbox). Decide and say why when it matters; if you cannot decide, say what is missing or escalate. Only the agent the question is addressed to may answer. When the question has an answerKind, give `value` (true/false for confirm, an option value for choice, an array of them for multi_choice); a value that fits no option is refused with INVALID_ANSWER listing the allowed values.",
        input_schema = schema::<input::Answer>()
    )]
    async fn clarify_answer(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let a = args!(args, input::Answer);
        let id = a.id.clone();
        match a.action(&agent) {
            Ok(action) => self.act(id, action).await,
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        description = "Ask the next round of a clarification you asked, after it was answered, when the answer left something open. Rounds are limited by the workflow; past the limit the record is escalated to a human (MAX_ROUNDS_EXCEEDED).",
        input_schema = schema::<input::FollowUp>()
    )]
    async fn clarify_follow_up(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let f = args!(args, input::FollowUp);
        let action = Action::FollowUp {
            from: agent.to_string(),
            question: f.question,
        };
        self.act(f.id, action).await
    }

    #[tool(
        description = "Close a clarification you asked once its answer settles the question. The optional message records the decision in one line; for a question with an answer kind, `value` records the decision as one of its options (or true/false). `supersedes` names resolved records whose decisions this one replaces.",
        input_schema = schema::<input::Resolve>()
    )]
    async fn clarify_resolve(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let mut r = args!(args, input::Resolve);
        let id = r.id.clone();
        let supersedes = r.supersedes.take().unwrap_or_default();
        if supersedes.is_empty() {
            return self.act(id, r.action(&agent)).await;
        }
        let action = r.action(&agent);
        let done = self
            .hub
            .with_store("resolve", move |store, now| {
                agentx_clarify_command::search::resolve_superseding(
                    store,
                    now,
                    &id,
                    &action,
                    None,
                    &supersedes,
                )
            })
            .await;
        match done {
            Ok(m) => reply::envelope(m.to_json(), reply::mutation_text),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        description = "Hand a clarification to a human when the agents cannot settle it: conflicting requirements, a product, policy or security decision, or no answer in time. The record then waits for a human. The message says what the human must decide.",
        input_schema = schema::<input::Close>()
    )]
    async fn clarify_escalate(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let c = args!(args, input::Close);
        let action = Action::Escalate {
            from: Some(agent.to_string()),
            message: c.message,
        };
        self.act(c.id, action).await
    }

    #[tool(
        description = "Withdraw a clarification you asked that is no longer needed (you found the answer, the work was dropped). The message says why.",
        input_schema = schema::<input::Close>()
    )]
    async fn clarify_abandon(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let c = args!(args, input::Close);
        let action = Action::Abandon {
            from: Some(agent.to_string()),
            message: c.message,
        };
        self.act(c.id, action).await
    }

    #[tool(
        description = "Read one clarification's whole thread (by id), or every clarification of an issue (by issue; default: this server's issue).",
        input_schema = schema::<input::Show>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_show(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let s = args!(args, input::Show);
        let body = match (&s.id, s.issue.or(self.issue)) {
            (Some(id), _) => json!({ "id": id }),
            (None, Some(issue)) => json!({ "issue": issue }),
            (None, None) => return reply::invalid("`id` or `issue` is required"),
        };
        let shown = match (s.id, s.issue.or(self.issue)) {
            (Some(id), _) => {
                self.hub
                    .with_store("show", move |store, _| {
                        let (issue, record) = agentx_clarify_command::show_id(store, &id)?;
                        Ok(agentx_clarify_command::query::show_json(issue, &record))
                    })
                    .await
            }
            (None, Some(issue)) => {
                self.hub
                    .with_store("show", move |store, _| {
                        let ledger = agentx_clarify_command::show_issue(store, issue)?;
                        Ok(json!({ "ok": true, "ledger": ledger.output() }))
                    })
                    .await
            }
            (None, None) => return reply::invalid("`id` or `issue` is required"),
        };
        let shown = match shown {
            Ok(v) => v,
            Err(e) => agentx_clarify_core::envelope::failure(&e),
        };
        let shown = self
            .hub
            .seen_by(self.viewer(&ctx), "show", body, shown)
            .await;
        reply::envelope(shown, reply::show_text)
    }

    #[tool(
        description = "List clarifications: by default the open ones (pending, stale, answered, escalated) of every issue. Filter by issue and statuses; all: true includes resolved and abandoned ones.",
        input_schema = schema::<input::List>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_list(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let l = args!(args, input::List);
        let statuses: Option<Vec<&str>> = l
            .status
            .as_ref()
            .map(|s| s.iter().map(|s| s.as_str()).collect());
        let body = json!({ "issue": l.issue, "status": statuses, "all": l.all });
        let filter = ListFilter {
            issue: l.issue,
            statuses: l.status.unwrap_or_default(),
            all: l.all.unwrap_or(false),
        };
        let listed = self
            .hub
            .with_store("list", move |store, _| {
                Ok(listed_json(&agentx_clarify_command::list(store, &filter)?))
            })
            .await;
        let listed = match listed {
            Ok(v) => v,
            Err(e) => agentx_clarify_core::envelope::failure(&e),
        };
        let listed = self
            .hub
            .seen_by(self.viewer(&ctx), "list", body, listed)
            .await;
        reply::envelope(listed, |v| {
            reply::list_text(clarifications(v), "no clarification matches") + &reply::notes(v)
        })
    }

    #[tool(
        description = "Look before you ask: search every clarification already asked, answered and decided (question, topic, field, context, answers, decisions), best match first (same field, then words in common, then newest). Call it before clarify_ask: a resolved hit carries its decision (who decided, what, when); if it answers your question, use it instead of asking again. Filter by issue, status (e.g. [\"resolved\"]), field, askedBy (who asked), askedOf (who was asked); limit 1-100 (default 10).",
        input_schema = schema::<input::Search>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_search(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let s = args!(args, input::Search);
        let body = json!({ "query": &s.query, "issue": s.issue });
        let found = self
            .hub
            .with_store("search", move |store, _| {
                let (query, filter) = s.typed()?;
                let query = agentx_clarify_core::search::Query {
                    text: &query,
                    field: filter.field.as_deref(),
                };
                let found = agentx_clarify_command::search::search(store, &query, &filter)?;
                Ok(found.to_json())
            })
            .await;
        let found = self
            .hub
            .seen_by(self.viewer(&ctx), "search", body, enveloped(found))
            .await;
        reply::envelope(found, |v| reply::hits_text(v) + &reply::notes(v))
    }

    #[tool(
        description = "Which issues are blocked by open blocking clarifications (and on whom), and which are ready. Runs the follow-up monitor first.",
        input_schema = schema::<input::Nothing>()
    )]
    async fn clarify_ready(&self, args: JsonObject) -> CallToolResult {
        let _ = args!(args, input::Nothing);
        let ready = self
            .hub
            .with_store("ready", |store, now| {
                agentx_clarify_command::query::ready(store, now, true).map(|r| r.to_json())
            })
            .await;
        reply::envelope(enveloped(ready), reply::ready_text)
    }

    #[tool(
        description = "Refuse, don't guess: before you generate, list every field you would otherwise have to guess as a gap (BLOCK: you must not proceed without it; WARN: you may, stating your assumption) and check the plan. Each gap becomes a question to its owner, idempotent per session and gap; the answer says needs_clarification or ready_to_proceed, with each gap's status and answer. Call it again with the same plan (keep its session_id) after answers arrive: ready_to_proceed means no BLOCK gap is open.",
        input_schema = schema::<input::Check>()
    )]
    async fn clarify_check(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let agent = actor!(self, ctx);
        let c = args!(args, input::Check);
        let Some(issue) = c.issue.or(self.issue) else {
            return reply::invalid("`issue` is required: this server was started without --issue");
        };
        let args = agentx_clarify_core::layer4::CheckArgs {
            issue_number: u64::from(issue),
            from: agent.to_string(),
            to: c.to,
            workflow: c.workflow,
            step: c.step,
            new_session_id: String::new(),
        };
        let checked = self
            .hub
            .with_store("check", move |store, now| {
                let plan = layer4_plan(&c.plan)?;
                let args = with_session(&plan, args)?;
                agentx_clarify_command::layer4::check(store, now, &plan, &args).map(|o| o.to_json())
            })
            .await;
        reply::envelope(enveloped(checked), reply::check_text)
    }

    #[tool(
        description = "The audit record of a clarification (by id) or of an issue (default: this server's issue): every ask/answer round with its timestamps and ed25519 signatures, whether everything is resolved, and whether the hash chains and signatures verify. A refusal (SIGNATURE_INVALID, LEDGER_INCONSISTENT) lists the problems.",
        input_schema = schema::<input::Audit>(),
        annotations(read_only_hint = true)
    )]
    async fn clarify_audit(
        &self,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let a = args!(args, input::Audit);
        use agentx_clarify_command::layer4::{audit, audit_json, AuditTarget};
        let (target, input) = match (a.id, a.issue.or(self.issue)) {
            (Some(id), _) => (AuditTarget::Record(id.clone()), json!({ "id": id })),
            (None, Some(issue)) => (AuditTarget::Issue(issue), json!({ "issue": issue })),
            (None, None) => return reply::invalid("`id` or `issue` is required"),
        };
        let audited = self
            .hub
            .with_store("audit", move |store, _| {
                audit(store, &target).map(|a| audit_json(&a))
            })
            .await;
        let audited = self
            .hub
            .seen_by(self.viewer(&ctx), "audit", input, enveloped(audited))
            .await;
        reply::envelope(audited, reply::audit_text)
    }

    #[tool(
        description = "Run the follow-up monitor: marks overdue questions stale, retries them, escalates stuck threads and deadlocks, abandons orphans. dryRun: true reports what it would do without writing.",
        input_schema = schema::<input::Monitor>()
    )]
    async fn clarify_monitor(&self, args: JsonObject) -> CallToolResult {
        let m = args!(args, input::Monitor);
        let dry = m.dry_run.unwrap_or(false);
        let out = self
            .hub
            .with_routing("monitor", move |store, runner| {
                let clock = agentx_clarify_store::clock::system_now_ms;
                agentx_clarify_command::route::monitor_routed(store, runner, &clock, dry, None, 1)
                    .map(|done| done.to_json())
            })
            .await;
        reply::envelope(enveloped(out), |v| reply::monitor_text(v, dry))
    }
}

impl Server {
    pub(crate) fn router() -> ToolRouter<Self> {
        Self::tool_router()
    }

    /// `clarify_ask`'s work: the record asked (and its routing started when asked for).
    /// With `wait: "task"` (docs/protocol.md §24), also whether to answer with a task: refused
    /// before anything is written when the client did not declare it can take one.
    async fn ask(
        &self,
        args: JsonObject,
        ctx: &RequestContext<RoleServer>,
        tasks_declared: bool,
    ) -> (CallToolResult, bool) {
        let a = match decode::<input::Ask>(args) {
            Ok(a) => a,
            Err(why) => return (reply::invalid(&crate::lines::quote(&why)), false),
        };
        let task = a.wait == Some(input::AskWait::Task);
        if task && !tasks_declared {
            let why = "`wait: \"task\"` needs a client that declares the \
                       io.modelcontextprotocol/tasks extension: ask without it, then clarify_wait";
            return (reply::invalid(why), false);
        }
        (self.asked(a, ctx).await, task)
    }

    async fn asked(&self, a: input::Ask, ctx: &RequestContext<RoleServer>) -> CallToolResult {
        let agent = actor!(self, *ctx);
        let Some(issue) = a.issue.or(self.issue) else {
            return reply::invalid("`issue` is required: this server was started without --issue");
        };
        let route = a.route.unwrap_or(false);
        let mut max_routes = agentx_clarify_core::config::DEFAULT_MCP_MAX_ROUTES;
        if route {
            // Refuse before writing anything: a question nobody would route is not asked.
            let agent = a.to.clone();
            let runners = self
                .hub
                .with_store("routeRunner", move |store, _| {
                    agentx_clarify_command::route::route_runner(store, &agent)
                })
                .await;
            let runners = enveloped(runners);
            if runners.get("ok") != Some(&Value::Bool(true)) {
                return reply::envelope(runners, |_| String::new());
            }
            if let Some(n) = runners.get("mcpMaxRoutes").and_then(Value::as_u64) {
                max_routes = u32::try_from(n).unwrap_or(max_routes);
            }
        }
        let reuse = a.reuse.clone();
        let request = a.request(issue, &agent);
        let asked = self
            .hub
            .with_store("ask", move |store, now| {
                agentx_clarify_command::mutation::ask_reusing(
                    store,
                    now,
                    &request,
                    reuse.as_deref(),
                )
            })
            .await;
        let asked = match asked {
            Ok(m) => m.to_json(),
            Err(e) => return reply::failure(&e),
        };
        // `related` names records of other issues: over HTTP, only those the agent may see.
        let asked = self
            .hub
            .seen_by(self.viewer(ctx), "ask", json!({}), asked)
            .await;
        if !route || asked.get("ok") != Some(&Value::Bool(true)) {
            return reply::envelope(asked, |v| reply::mutation_text(v) + &reply::related_text(v));
        }
        let id = asked
            .pointer("/clarification/id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        // The routing outlives this call: the agent waits with clarify_wait.
        let hub = self.hub.clone();
        let route_id = id.clone();
        // docs/protocol.md §31: at most `[mcp] max_routes` agent runs at once (each may be a paid model
        // session); the others wait their turn in order (tokio's semaphore is fair).
        let routes = self.routes(max_routes);
        tokio::spawn(async move {
            let _turn = routes.acquire_owned().await;
            let id = route_id.clone();
            let routed = hub
                .with_routing("route", move |store, runner| {
                    let clock = agentx_clarify_store::clock::system_now_ms;
                    agentx_clarify_command::route(store, runner, &id, &clock, true)
                })
                .await;
            if let Err(why) = routed {
                tracing::warn!("routing {route_id}: {why}");
            }
        });
        reply::envelope(asked, |v| {
            format!(
                "{}\n\nThe hub is running the target agent now: call clarify_wait with id {id} for its answer.",
                reply::mutation_text(v)
            )
        })
    }

    /// An operation on record `id` by this server's agent (the actor is in `action`): the
    /// command layer's `act`, its mutation as the tool's payload.
    async fn act(&self, id: String, action: Action) -> CallToolResult {
        let done = self
            .hub
            .with_store("act", move |store, now| {
                agentx_clarify_command::act(store, now, &id, &action)
            })
            .await;
        match done {
            Ok(m) => reply::envelope(m.to_json(), reply::mutation_text),
            Err(e) => reply::failure(&e),
        }
    }
}

/// `list`'s payload (the command layer's `--json` shape).
fn listed_json(listed: &agentx_clarify_command::Listed) -> Value {
    serde_json::to_value(listed.to_json()).unwrap_or(Value::Null)
}

fn clarifications(v: &Value) -> &[Value] {
    v.get("clarifications")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A typed call's result as the envelope the tool's payload is (`{"ok": false, "error"}` for
/// a refusal).
fn enveloped(done: Result<Value, agentx_clarify_core::ClarifyError>) -> Value {
    done.unwrap_or_else(|e| agentx_clarify_core::envelope::failure(&e))
}

/// The tool's typed plan as Layer 4's (which checks each gap as every surface does).
fn layer4_plan(
    plan: &input::Plan,
) -> Result<agentx_clarify_core::layer4::Plan, agentx_clarify_core::ClarifyError> {
    let value =
        serde_json::to_value(plan).map_err(|e| agentx_clarify_core::ClarifyError::Internal {
            message: e.to_string(),
        })?;
    agentx_clarify_core::layer4::Plan::parse(&value)
}

/// `args` with a new session id when the plan names none (the core draws no randomness).
fn with_session(
    plan: &agentx_clarify_core::layer4::Plan,
    mut args: agentx_clarify_core::layer4::CheckArgs,
) -> Result<agentx_clarify_core::layer4::CheckArgs, agentx_clarify_core::ClarifyError> {
    if plan.session_id.is_none() {
        args.new_session_id = agentx_clarify_store::new_uuid_v4()?;
    }
    Ok(args)
}
