//! Runs a typed call: one arm per operation of the core's table (the `match` is exhaustive,
//! so an operation of the table that no arm runs does not compile). Each arm converts its
//! input into the command's own arguments and returns the command's `--json` document.

use agentx_clarify_core::api::signals as api_signals;
use agentx_clarify_core::call::opt_issue;
use agentx_clarify_core::call::store::{self as input, jobs, Named};
use agentx_clarify_core::call::table::Operation as O;
use agentx_clarify_core::ops::{Action, Attribution};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use super::ok;
use crate::route::{self, Clock, Runner};
use crate::status::HookEvent;
use crate::store::{Scope, Store};
use crate::{delegate, keys, layer4, monitor, mutation, query, signals, status};

fn bad(message: impl Into<String>) -> ClarifyError {
    ClarifyError::input(message)
}

/// Runs `call` on `store` at `clock`, as `by` when a person acts through the server. The
/// operations that start agents (`route`, `monitor` with routing) need a runner:
/// [`routed`].
pub fn run<S: Store>(
    store: &S,
    call: O,
    clock: Clock<'_>,
    by: Option<&Attribution>,
) -> Result<Value, ClarifyError> {
    let now = clock;
    Ok(match call {
        O::Init(_) => json!({"ok": true, "created": store.init()?}),
        O::Ask(a) => mutation::ask(store, now(), &a.into_request()?)?.to_json(),
        O::Answer(a) => act(store, now(), a.id.clone(), a.action(), by)?,
        O::FollowUp(f) => act(store, now(), f.id.clone(), Ok(f.action()), by)?,
        O::Resolve(r) => act(store, now(), r.id.clone(), Ok(r.action()), by)?,
        O::Escalate(c) => act(store, now(), c.id.clone(), Ok(c.escalate()), by)?,
        O::Abandon(c) => act(store, now(), c.id.clone(), Ok(c.abandon()), by)?,
        O::Reopen(c) => {
            let (from, message) = (c.from.as_deref(), c.message.as_deref());
            crate::reopen::reopen(store, now(), &c.id, from, message)?.to_json()
        }
        O::Decide(d) => {
            let by = by.ok_or_else(|| {
                bad("`decide` is a person's decision: it runs through the server, as them")
            })?;
            mutation::decide(store, now(), &d.id, d.message, d.value, by)?.to_json()
        }
        O::Monitor(m) => {
            let config = store.load_config()?;
            let dry_run = m.dry_run.unwrap_or(false);
            monitor::run_monitor(store, &config, now(), dry_run, Scope::Monitor)?.to_json()
        }
        O::Verify(_) => query::verify(store)?.to_json(),
        O::List(l) => {
            let listed = query::list(store, &l.filter()?)?;
            serde_json::to_value(listed.to_json()).map_err(|e| ClarifyError::Internal {
                message: e.to_string(),
            })?
        }
        O::Show(t) => show(store, t)?,
        O::Stats(s) => query::stats(store, s.since.map(|t| t.0))?.to_json(),
        O::Hook(h) => {
            let event = HookEvent::parse(&h.event).ok_or_else(|| {
                bad(format!(
                    "unknown hook event '{}'; allowed: start, finish",
                    h.event
                ))
            })?;
            hook(store, now(), event, h.agent, h.issue)?
        }
        O::HookStart(h) => hook(store, now(), HookEvent::Start, h.agent, h.issue)?,
        O::HookFinish(h) => hook(store, now(), HookEvent::Finish, h.agent, h.issue)?,
        O::Ready(r) => {
            let include_escalated = r.include_escalated.unwrap_or(true);
            if r.monitor == Some(false) {
                query::ready_view(store, include_escalated)?
            } else {
                query::ready(store, now(), include_escalated)?.to_json()
            }
        }
        O::State(s) => state(store, now(), s)?,
        O::ScopePreview(s) => {
            let issue = opt_issue(s.issue_number.as_ref())?;
            let preview = query::scope_preview(store, &s.question(), issue)?;
            json!({"ok": true, "preview": preview})
        }
        O::NextWakeup(_) => json!({"ok": true, "wakeup": query::next_wakeup(store, now())?}),
        O::WaitForGraph(i) => {
            let graphs = query::wait_for_graphs(store, opt_issue(i.issue.as_ref())?)?;
            json!({"ok": true, "graphs": graphs})
        }
        O::Migrate(m) => crate::migrate::migrate(store, m.dry_run.unwrap_or(false))?.to_json(),
        O::SignalsParse(t) => ok(api_signals::parse_value(&t.text)),
        O::SignalsIngest(i) => {
            let (context, text) = i.context()?;
            signals::ingest(store, now(), &context, &text)?.to_json()
        }
        O::ResumePrompt(i) => {
            ok(api_signals::resume_value(&signals::resume_prompt(store, &i.id)?))
        }
        call @ (O::DelegateRequest(_)
        | O::DelegateAccept(_)
        | O::DelegateComplete(_)
        | O::DelegateReject(_)
        | O::DelegateFail(_)
        | O::DelegateShow(_)
        | O::DelegateList(_)) => delegation(store, now(), call)?,
        O::Check(c) => {
            let (plan, args) = c.plan()?;
            layer4::check(store, now(), &plan, &args)?.to_json()
        }
        O::Gate(g) => layer4::gate_json(&layer4::gate(store, g.issue()?, g.operation.as_deref())?),
        O::Audit(t) => {
            let target = match t.named()? {
                Named::Id(id) => layer4::AuditTarget::Record(id),
                Named::Issue(issue) => layer4::AuditTarget::Issue(issue),
            };
            layer4::audit_json(&layer4::audit(store, &target)?)
        }
        O::KeysList(_) => keys::list_json(&keys::list_keys(store)?),
        call @ (O::RouteRunner(_) | O::RoutePrompt(_) | O::RouteOutcome(_)) => {
            route_view(store, clock, call)?
        }
        // Routing, through a runner or the shell's chat model: where agents run (the wasm
        // package and the memory workspace carry no routing).
        call @ (O::Route(_) | O::RouteChatPrompt(_) | O::RouteChatReply(_)) => {
            return Err(not_here(&call))
        }
    })
}

/// An action on a record, by `by` when a person acts. `action` is the input's reading.
fn act<S: Store>(
    store: &S,
    now: i64,
    id: String,
    action: Result<Action, ClarifyError>,
    by: Option<&Attribution>,
) -> Result<Value, ClarifyError> {
    Ok(mutation::act_as(store, now, &id, &action?, by)?.to_json())
}

fn show<S: Store>(store: &S, target: input::Target) -> Result<Value, ClarifyError> {
    Ok(match target.named()? {
        Named::Id(id) => {
            let (issue, record) = query::show_id(store, &id)?;
            json!({"ok": true, "clarification": record.to_output(issue)})
        }
        Named::Issue(issue) => {
            json!({"ok": true, "ledger": query::show_issue(store, issue)?.to_output_value()})
        }
    })
}

fn hook<S: Store>(
    store: &S,
    now: i64,
    event: HookEvent,
    agent: String,
    issue: Option<agentx_clarify_core::call::IssueArg>,
) -> Result<Value, ClarifyError> {
    let issue = opt_issue(issue.as_ref())?;
    Ok(status::hook(store, now, event, &agent, issue)?.to_json())
}

fn state<S: Store>(store: &S, now: i64, s: input::State) -> Result<Value, ClarifyError> {
    Ok(match (s.agent, s.status) {
        (Some(agent), Some(state)) => {
            let issue = opt_issue(s.issue.as_ref())?;
            status::state_set(store, now, &agent, &state, issue)?.to_json()
        }
        (None, None) => status::state_get(store)?.to_json(),
        _ => return Err(bad("`agent` and `status` go together")),
    })
}

/// The delegation operations (docs/protocol.md §18).
fn delegation<S: Store>(store: &S, now: i64, call: O) -> Result<Value, ClarifyError> {
    use agentx_clarify_core::delegation::Action as D;
    let (id, action) = match call {
        O::DelegateRequest(d) => {
            return Ok(delegate::request(store, now, &d.into_delegation()?)?.to_json())
        }
        O::DelegateShow(t) => {
            return Ok(match t.named()? {
                Named::Id(id) => {
                    let (issue, d) = delegate::show(store, &id)?;
                    json!({"ok": true, "delegation": d.to_output(issue)})
                }
                Named::Issue(issue) => {
                    json!({"ok": true, "ledger": delegate::show_issue(store, issue)?.to_value()})
                }
            })
        }
        O::DelegateList(l) => {
            let filter = delegate::DelegationFilter {
                issue: opt_issue(l.issue.as_ref())?,
                statuses: l.delegation_statuses()?,
                all: l.all.unwrap_or(false),
            };
            return Ok(delegate::list(store, &filter)?.to_json());
        }
        O::DelegateAccept(a) => (a.id, D::accept(&a.from)),
        O::DelegateFail(a) => (a.id, D::fail(&a.from, a.message)),
        O::DelegateReject(r) => (r.id.clone(), r.action()?),
        O::DelegateComplete(c) => (c.id.clone(), c.action()?),
        other => return Err(not_here(&other)),
    };
    Ok(delegate::act(store, now, &id, &action)?.to_json())
}

/// The routing operations that start no process: the runner of an agent, the prompt and
/// what a run's output would do.
fn route_view<S: Store>(store: &S, clock: Clock<'_>, call: O) -> Result<Value, ClarifyError> {
    match call {
        O::RouteRunner(r) => route::route_runner(store, &r.agent),
        O::RoutePrompt(p) => Ok(route::route_prompt(store, &p.id, p.persona.as_deref())?.to_json()),
        O::RouteOutcome(o) => {
            let output = o
                .output
                .ok_or_else(|| bad("`output` is required: the run to interpret"))?;
            let run = route::parse_run(&output)?;
            route::route_outcome(store, &o.id, &run, clock())
        }
        other => Err(not_here(&other)),
    }
}

/// Routing through the shell's chat model (VS Code): the prompt, then the reply.
fn chat<S: Store>(store: &S, clock: Clock<'_>, call: O) -> Result<Value, ClarifyError> {
    match call {
        O::RouteChatPrompt(p) => route::chat_prompt(store, &p.id, p.persona.as_deref()),
        O::RouteChatReply(r) => {
            let round = r
                .round
                .and_then(|n| u32::try_from(n.0).ok())
                .ok_or_else(|| bad("`round` is required: the round of the prompt (1 or more)"))?;
            let reply = match (r.reply, r.error) {
                (Some(text), None) => route::ChatReply::Text(text),
                (None, Some(cause)) => route::ChatReply::Failed(cause),
                _ => {
                    return Err(bad(
                        "give exactly one of `reply` (the model's text) and `error` (why there is none)",
                    ))
                }
            };
            let model = r.model.as_deref();
            Ok(route::chat_reply(store, &r.id, round, &reply, model, clock())?.to_json())
        }
        other => Err(not_here(&other)),
    }
}

/// An operation that needs what this shell lacks (a runner: `route`).
fn not_here(call: &O) -> ClarifyError {
    bad(format!(
        "'{}' routes to an agent: call it where agents run (the CLI, the Node addon's Workspace, agentx serve)",
        call.name()
    ))
}

/// [`run`] for a shell that can start agents: `route` and `monitor` with routing.
pub(super) fn routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    call: O,
    clock: Clock<'_>,
) -> Result<Value, ClarifyError> {
    match call {
        O::Route(r) if r.all == Some(true) => {
            Ok(route::route_all(store, runner, clock, jobs(r.jobs)?)?.to_json())
        }
        O::Route(r) => {
            let id = r.id.ok_or_else(|| bad("`id` is required (a string)"))?;
            Ok(route::route(store, runner, &id, clock, true)?.to_json())
        }
        call @ (O::RouteChatPrompt(_) | O::RouteChatReply(_)) => chat(store, clock, call),
        O::Monitor(m) => {
            let config = store.load_runner_config()?;
            let dry_run = m.dry_run.unwrap_or(false);
            let wanted = m.route.unwrap_or(config.route_on_retry) && !dry_run;
            let run = monitor::run_monitor(store, &config, clock(), dry_run, Scope::Monitor)?;
            let mut out = run.to_json();
            if wanted {
                let jobs = jobs(m.jobs)?;
                let routed = route::route_ids(store, runner, clock, jobs, &run.report.retried)?;
                if let Value::Object(o) = &mut out {
                    o.insert("routed".into(), routed.to_json());
                }
            }
            Ok(out)
        }
        other => run(store, other, clock, None),
    }
}
