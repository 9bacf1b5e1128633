//! The command layer's side of the operation table (`agentx_clarify_core::call::table`): one
//! method per operation, each turning its typed input into the command's own arguments and
//! returning the command's `--json` document. The table's dispatcher decodes an input and
//! calls its method; an operation of the table without a method does not compile.

use agentx_clarify_core::api::signals as api_signals;
use agentx_clarify_core::call::opt_issue;
use agentx_clarify_core::call::store::*;
use agentx_clarify_core::call::table::Operations;
use agentx_clarify_core::call::IssueArg;
use agentx_clarify_core::delegation::Action as Delegated;
use agentx_clarify_core::ops::{Action, Attribution};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use super::ok;
use crate::claim::LOCAL_VIA;
use crate::route::{self, Clock, Runner};
use crate::status::HookEvent;
use crate::store::{Scope, Store};
use crate::{delegate, keys, layer4, monitor, mutation, query, signals, status};

fn bad(message: impl Into<String>) -> ClarifyError {
    ClarifyError::input(message)
}

type Out = Result<Value, ClarifyError>;

/// A call's context: the store, the clock (read when each step happens), and the person
/// acting through a server, if one does. It starts no agent: `route` and routing through a
/// chat model need [`Routing`].
pub struct Call<'a, S> {
    pub store: &'a S,
    pub clock: Clock<'a>,
    pub by: Option<&'a Attribution>,
}

impl<S: Store> Call<'_, S> {
    fn now(&self) -> i64 {
        (self.clock)()
    }

    /// An action on a record, by `by` when a person acts. `action` is the input's reading.
    fn act(&self, id: &str, action: Result<Action, ClarifyError>) -> Out {
        let now = self.now();
        Ok(mutation::act_as(self.store, now, id, &action?, self.by)?.to_json())
    }

    fn hook(&self, event: HookEvent, agent: &str, issue: Option<&IssueArg>) -> Out {
        let issue = opt_issue(issue)?;
        Ok(status::hook(self.store, self.now(), event, agent, issue)?.to_json())
    }

    fn delegated(&self, id: &str, action: Result<Delegated, ClarifyError>) -> Out {
        let now = self.now();
        Ok(delegate::act(self.store, now, id, &action?)?.to_json())
    }
}

/// An operation that needs what this shell lacks: agents to route to.
fn not_here(name: &str) -> ClarifyError {
    bad(format!(
        "'{name}' routes to an agent: call it where agents run (the CLI, the Node addon's Workspace, agentx serve)"
    ))
}

impl<S: Store> Operations for Call<'_, S> {
    type Out = Value;
    type Error = ClarifyError;

    fn init(&self, _: Nothing) -> Out {
        Ok(json!({"ok": true, "created": self.store.init()?}))
    }

    fn ask(&self, a: Ask) -> Out {
        let reuse = a.reuse.clone();
        let req = a.into_request()?;
        Ok(mutation::ask_reusing(self.store, self.now(), &req, reuse.as_deref())?.to_json())
    }

    fn answer(&self, a: Answer) -> Out {
        let id = a.id.clone();
        self.act(&id, a.action())
    }

    fn follow_up(&self, f: FollowUp) -> Out {
        let id = f.id.clone();
        self.act(&id, Ok(f.action()))
    }

    fn resolve(&self, r: Resolve) -> Out {
        let id = r.id.clone();
        let supersedes = r.supersedes.clone().unwrap_or_default();
        if supersedes.is_empty() {
            return self.act(&id, Ok(r.action()));
        }
        let (now, action) = (self.now(), r.action());
        let done = crate::search::resolve_superseding(
            self.store,
            now,
            &id,
            &action,
            self.by,
            &supersedes,
        )?;
        Ok(done.to_json())
    }

    fn escalate(&self, c: Close) -> Out {
        let id = c.id.clone();
        self.act(&id, Ok(c.escalate()))
    }

    fn abandon(&self, c: Close) -> Out {
        let id = c.id.clone();
        self.act(&id, Ok(c.abandon()))
    }

    fn reopen(&self, c: Close) -> Out {
        let (from, message) = (c.from.as_deref(), c.message.as_deref());
        let now = self.now();
        Ok(crate::reopen::reopen_by(self.store, now, &c.id, from, message, self.by)?.to_json())
    }

    fn claim(&self, c: Claim) -> Out {
        let by = crate::claim::person(self.by, c.person.as_deref(), LOCAL_VIA)?;
        let taking = agentx_clarify_core::people::Taking::Claim;
        let message = c.message.as_deref();
        let now = self.now();
        Ok(crate::claim::take_by(self.store, now, &c.id, &by, taking, message)?.to_json())
    }

    fn handoff(&self, h: Handoff) -> Out {
        let by = crate::claim::person(self.by, h.person.as_deref(), LOCAL_VIA)?;
        let (now, message) = (self.now(), h.message.as_deref());
        let Some(id) = h.id.as_deref() else {
            let done = crate::claim::handoff_all(self.store, now, &by, &h.to, message)?;
            return Ok(done.to_json());
        };
        let taking = agentx_clarify_core::people::Taking::Handoff { to: &h.to };
        Ok(crate::claim::take_by(self.store, now, id, &by, taking, message)?.to_json())
    }

    fn approve(&self, a: Approve) -> Out {
        let by = crate::claim::person(self.by, a.person.as_deref(), LOCAL_VIA)?;
        let (now, message) = (self.now(), a.message.as_deref());
        let done =
            crate::claim::approve_by(self.store, now, &a.id, &by, message, a.value.as_ref())?;
        Ok(done.to_json())
    }

    // A person's decision runs only through the server, as that person (`super::call_as`):
    // the shells that act for no one (the wasm package among them) carry none of it.
    fn decide(&self, _: Decide) -> Out {
        Err(bad(
            "`decide` is a person's decision: it runs through the server, as them",
        ))
    }

    fn monitor(&self, m: Monitor) -> Out {
        let config = self.store.load_config()?;
        let dry_run = m.dry_run.unwrap_or(false);
        let run = monitor::run_monitor(self.store, &config, self.now(), dry_run, Scope::Monitor)?;
        Ok(run.to_json())
    }

    fn verify(&self, _: Nothing) -> Out {
        Ok(query::verify(self.store)?.to_json())
    }

    fn list(&self, l: List) -> Out {
        let listed = query::list(self.store, &l.filter()?)?;
        serde_json::to_value(listed.to_json()).map_err(|e| ClarifyError::Internal {
            message: e.to_string(),
        })
    }

    fn search(&self, s: Search) -> Out {
        let filter = s.filter()?;
        let query = agentx_clarify_core::search::Query {
            text: &s.query,
            field: s.field.as_deref(),
        };
        Ok(crate::search::search(self.store, &query, &filter)?.to_json())
    }

    fn show(&self, t: Target) -> Out {
        Ok(match t.named()? {
            Named::Id(id) => {
                let (issue, record) = query::show_id(self.store, &id)?;
                query::show_json(issue, &record)
            }
            Named::Issue(issue) => {
                let ledger = query::show_issue(self.store, issue)?;
                json!({"ok": true, "ledger": ledger.to_output_value()})
            }
        })
    }

    fn stats(&self, s: Stats) -> Out {
        let since = s.since.map(|t| t.0);
        let outcome = if s.people == Some(true) {
            query::stats_people(self.store, since)?
        } else {
            query::stats(self.store, since)?
        };
        Ok(outcome.to_json())
    }

    fn hook(&self, h: Hook) -> Out {
        let event = HookEvent::parse(&h.event).ok_or_else(|| {
            bad(format!(
                "unknown hook event '{}'; allowed: start, finish",
                h.event
            ))
        })?;
        Call::hook(self, event, &h.agent, h.issue.as_ref())
    }

    fn hook_start(&self, h: HookAgent) -> Out {
        Call::hook(self, HookEvent::Start, &h.agent, h.issue.as_ref())
    }

    fn hook_finish(&self, h: HookAgent) -> Out {
        Call::hook(self, HookEvent::Finish, &h.agent, h.issue.as_ref())
    }

    fn ready(&self, r: Ready) -> Out {
        let include_escalated = r.include_escalated.unwrap_or(true);
        if r.monitor == Some(false) {
            query::ready_view(self.store, include_escalated)
        } else {
            Ok(query::ready(self.store, self.now(), include_escalated)?.to_json())
        }
    }

    fn state(&self, s: State) -> Out {
        Ok(match (s.agent, s.status) {
            (Some(agent), Some(state)) => {
                let issue = opt_issue(s.issue.as_ref())?;
                status::state_set(self.store, self.now(), &agent, &state, issue)?.to_json()
            }
            (None, None) => status::state_get(self.store)?.to_json(),
            _ => return Err(bad("`agent` and `status` go together")),
        })
    }

    fn scope_preview(&self, s: ScopePreview) -> Out {
        let issue = opt_issue(s.issue_number.as_ref())?;
        let preview = query::scope_preview(self.store, &s.question(), issue)?;
        Ok(json!({"ok": true, "preview": preview}))
    }

    fn next_wakeup(&self, _: Nothing) -> Out {
        let wakeup = query::next_wakeup(self.store, self.now())?;
        Ok(json!({"ok": true, "wakeup": wakeup}))
    }

    fn wait_for_graph(&self, i: Issue) -> Out {
        let graphs = query::wait_for_graphs(self.store, opt_issue(i.issue.as_ref())?)?;
        Ok(json!({"ok": true, "graphs": graphs}))
    }

    fn migrate(&self, m: Migrate) -> Out {
        Ok(crate::migrate::migrate(self.store, m.dry_run.unwrap_or(false))?.to_json())
    }

    fn signals_parse(&self, t: Text) -> Out {
        Ok(ok(api_signals::parse_value(&t.text)))
    }

    fn signals_ingest(&self, i: Ingest) -> Out {
        let (context, text) = i.context()?;
        Ok(signals::ingest(self.store, self.now(), &context, &text)?.to_json())
    }

    fn resume_prompt(&self, i: Id) -> Out {
        let resume = signals::resume_prompt(self.store, &i.id)?;
        Ok(ok(api_signals::resume_value(&resume)))
    }

    fn delegate_request(&self, d: DelegateRequest) -> Out {
        let req = d.into_delegation()?;
        Ok(delegate::request(self.store, self.now(), &req)?.to_json())
    }

    fn delegate_accept(&self, a: DelegateAct) -> Out {
        self.delegated(&a.id, Ok(Delegated::accept(&a.from)))
    }

    fn delegate_complete(&self, c: DelegateComplete) -> Out {
        let id = c.id.clone();
        self.delegated(&id, c.action())
    }

    fn delegate_reject(&self, r: DelegateReject) -> Out {
        let id = r.id.clone();
        self.delegated(&id, r.action())
    }

    fn delegate_fail(&self, a: DelegateAct) -> Out {
        self.delegated(&a.id, Ok(Delegated::fail(&a.from, a.message)))
    }

    fn delegate_show(&self, t: Target) -> Out {
        Ok(match t.named()? {
            Named::Id(id) => {
                let (issue, d) = delegate::show(self.store, &id)?;
                json!({"ok": true, "delegation": d.to_output(issue)})
            }
            Named::Issue(issue) => {
                let ledger = delegate::show_issue(self.store, issue)?;
                json!({"ok": true, "ledger": ledger.to_value()})
            }
        })
    }

    fn delegate_list(&self, l: List) -> Out {
        let filter = delegate::DelegationFilter {
            issue: opt_issue(l.issue.as_ref())?,
            statuses: l.delegation_statuses()?,
            all: l.all.unwrap_or(false),
        };
        Ok(delegate::list(self.store, &filter)?.to_json())
    }

    fn check(&self, c: Check) -> Out {
        let (plan, args) = c.plan()?;
        Ok(layer4::check(self.store, self.now(), &plan, &args)?.to_json())
    }

    fn gate(&self, g: Gate) -> Out {
        let gate = layer4::gate(self.store, g.issue()?, g.operation.as_deref())?;
        Ok(layer4::gate_json(&gate))
    }

    fn audit(&self, t: Target) -> Out {
        let target = match t.named()? {
            Named::Id(id) => layer4::AuditTarget::Record(id),
            Named::Issue(issue) => layer4::AuditTarget::Issue(issue),
        };
        Ok(layer4::audit_json(&layer4::audit(self.store, &target)?))
    }

    fn keys_list(&self, _: Nothing) -> Out {
        Ok(keys::list_json(&keys::list_keys(self.store)?))
    }

    fn route(&self, _: Route) -> Out {
        Err(not_here("route"))
    }

    fn route_runner(&self, r: RouteRunner) -> Out {
        route::route_runner(self.store, &r.agent)
    }

    fn route_prompt(&self, p: RoutePrompt) -> Out {
        Ok(route::route_prompt(self.store, &p.id, p.persona.as_deref())?.to_json())
    }

    fn route_outcome(&self, o: RouteOutcome) -> Out {
        let output = o
            .output
            .ok_or_else(|| bad("`output` is required: the run to interpret"))?;
        let run = route::parse_run(&output)?;
        route::route_outcome(self.store, &o.id, &run, self.now())
    }

    // Routing through the shell's chat model (VS Code) runs where agents run: the wasm package
    // and the memory workspace carry no routing.
    fn route_chat_prompt(&self, _: RoutePrompt) -> Out {
        Err(not_here("routeChatPrompt"))
    }

    fn route_chat_reply(&self, _: RouteChatReply) -> Out {
        Err(not_here("routeChatReply"))
    }
}

/// The operations that route to an agent, for a shell that can start them: `route`,
/// `monitor` that routes what it retried, and routing through the shell's chat model.
/// Every other operation is [`Call`]'s.
pub struct Routing<'a, S> {
    pub call: Call<'a, S>,
    pub runner: &'a (dyn Runner + Sync),
}

impl<S: Store + Sync> Routing<'_, S> {
    /// Runs operation `name` (canonical) with `input`.
    pub fn run(&self, name: &str, input: &Value) -> Out {
        use agentx_clarify_core::call::decode;
        match name {
            "route" => self.route(decode(input)?),
            "monitor" => self.monitor(decode(input)?),
            "routeChatPrompt" => {
                let p: RoutePrompt = decode(input)?;
                route::chat_prompt(self.call.store, &p.id, p.persona.as_deref())
            }
            "routeChatReply" => self.chat_reply(decode(input)?),
            _ => agentx_clarify_core::call::table::dispatch_operation(&self.call, name, input),
        }
    }

    fn route(&self, r: Route) -> Out {
        let (store, clock) = (self.call.store, self.call.clock);
        if r.all == Some(true) {
            return Ok(route::route_all(store, self.runner, clock, jobs(r.jobs)?)?.to_json());
        }
        let id = r.id.ok_or_else(|| bad("`id` is required (a string)"))?;
        Ok(route::route(store, self.runner, &id, clock, true)?.to_json())
    }

    fn monitor(&self, m: Monitor) -> Out {
        let (store, clock) = (self.call.store, self.call.clock);
        let dry_run = m.dry_run.unwrap_or(false);
        let done =
            route::monitor_routed(store, self.runner, clock, dry_run, m.route, jobs(m.jobs)?)?;
        Ok(done.to_json())
    }

    fn chat_reply(&self, r: RouteChatReply) -> Out {
        let round = r
            .round
            .and_then(|n| u32::try_from(n.0).ok())
            .ok_or_else(|| bad("`round` is required: the round of the prompt (1 or more)"))?;
        let reply = match (r.reply, r.error) {
            (Some(text), None) => route::ChatReply::Text(text),
            (None, Some(cause)) => route::ChatReply::Failed(cause),
            _ => return Err(bad(
                "give exactly one of `reply` (the model's text) and `error` (why there is none)",
            )),
        };
        let (store, now) = (self.call.store, (self.call.clock)());
        let model = r.model.as_deref();
        Ok(route::chat_reply(store, &r.id, round, &reply, model, now)?.to_json())
    }
}
