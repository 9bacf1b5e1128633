//! The one JSON decoder of commands: `call(store, op, input, now)` runs a command from a plain
//! JSON object and returns exactly its `--json` document. The Node store, the wasm workspace,
//! the MCP server and every vector runner call this; the CLI builds the same typed commands
//! from its arguments. Fields are decoded by the core's own helpers (`input`), so every
//! surface spells and checks them the same way.

pub mod vector;

use agentx_clarify_core::input::{
    action, flag, issue_number, list_filter, new_request, object, opt_bool, opt_integer,
    opt_string, scope_question, string, Obj,
};
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::delegate;
use crate::keys;
use crate::layer4;
use crate::monitor;
use crate::mutation;
use crate::query;
use crate::route::{self, Clock, Runner};
use crate::signals;
use crate::status;
use crate::status::HookEvent;
use crate::store::Store;
use agentx_clarify_core::api::signals as api_signals;

/// Operations `call` understands (the vectors' names; `request` is also `ask`, and `hook`
/// with `event` is also `hookStart` / `hookFinish`).
pub const OPERATIONS: &[&str] = &[
    "init",
    "ask",
    "request",
    "answer",
    "followUp",
    "resolve",
    "escalate",
    "abandon",
    "reopen",
    "monitor",
    "verify",
    "list",
    "show",
    "stats",
    "hook",
    "hookStart",
    "hookFinish",
    "ready",
    "state",
    "scopePreview",
    "nextWakeup",
    "waitForGraph",
    "migrate",
    "signalsParse",
    "signalsIngest",
    "resumePrompt",
    "delegateRequest",
    "delegateAccept",
    "delegateComplete",
    "delegateReject",
    "delegateFail",
    "delegateShow",
    "delegateList",
    "check",
    "gate",
    "audit",
    "keysList",
];

/// Routing operations: [`call_route_view`] (`routePrompt`, `routeOutcome`: every surface) and
/// [`call_routed`] (`route`, and `monitor` with `route`: surfaces that start processes).
pub const ROUTE_OPERATIONS: &[&str] = &[
    "route",
    "routePrompt",
    "routeOutcome",
    "routeRunner",
    "routeChatPrompt",
    "routeChatReply",
];

/// Runs `op` on `store` and returns its `--json` document, `{"ok": true, …}` or
/// `{"ok": false, "error": {"code", "message"}, …}`. `now` is the shell's clock reading,
/// used unless the input gives its own `now` (epoch ms or RFC 3339 text).
pub fn call<S: Store>(store: &S, op: &str, input: &Value, now: i64) -> Value {
    let result = object(input).and_then(|m| run(store, op, m, now, None));
    result.unwrap_or_else(|e| failure(&e))
}

/// [`call`] for a person acting through a server (docs/protocol.md §23): the record operations write
/// `human`'s entries with `by`/`via`, and `decide {id, message?}` resolves (taking the record
/// first when it is not escalated). The server decides which operations a person may call.
pub fn call_as<S: Store>(store: &S, op: &str, input: &Value, now: i64, by: &Attribution) -> Value {
    let result = object(input).and_then(|m| match op {
        "decide" => {
            let at = time(m, "now")?.unwrap_or(now);
            let message = opt_string(m, "message")?;
            // A typed decision (docs/protocol.md §22): checked against the record's kind.
            let value = m.get("value").filter(|v| !v.is_null()).cloned();
            Ok(mutation::decide(store, at, &string(m, "id")?, message, value, by)?.to_json())
        }
        _ => run(store, op, m, now, Some(by)),
    });
    result.unwrap_or_else(|e| failure(&e))
}

pub use agentx_clarify_core::envelope::{failure, ok};

fn bad(message: impl Into<String>) -> ClarifyError {
    ClarifyError::input(message)
}

/// A time field: epoch ms or RFC 3339 text.
fn time(m: &Obj, key: &str) -> Result<Option<i64>, ClarifyError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => agentx_clarify_core::time::parse_instant(s)
            .map(Some)
            .map_err(|why| bad(format!("`{key}`: {why}"))),
        Some(Value::Number(_)) => {
            let ms = agentx_clarify_core::input::opt_integer(m, key)?
                .ok_or_else(|| bad(format!("`{key}` must be an integer (epoch ms)")))?;
            agentx_clarify_core::ops::check_now(ms)?;
            Ok(Some(ms))
        }
        Some(_) => Err(bad(format!(
            "`{key}` must be epoch milliseconds or RFC 3339 text"
        ))),
    }
}

fn run<S: Store>(
    store: &S,
    op: &str,
    m: &Obj,
    clock: i64,
    by: Option<&Attribution>,
) -> Result<Value, ClarifyError> {
    let now = || time(m, "now").map(|t| t.unwrap_or(clock));
    Ok(match op {
        "init" => json!({"ok": true, "created": store.init()?}),
        "ask" | "request" => {
            let req = new_request(m)?;
            mutation::ask(store, now()?, &req)?.to_json()
        }
        "answer" | "followUp" | "resolve" | "escalate" | "abandon" => {
            let id = string(m, "id")?;
            let action = action(op, m)?;
            mutation::act_as(store, now()?, &id, &action, by)?.to_json()
        }
        "reopen" => crate::reopen::reopen(
            store,
            now()?,
            &string(m, "id")?,
            opt_string(m, "from")?.as_deref(),
            opt_string(m, "message")?.as_deref(),
        )?
        .to_json(),
        "monitor" => {
            let config = store.load_config()?;
            let dry_run = flag(m, "dryRun")?;
            monitor::run_monitor(
                store,
                &config,
                now()?,
                dry_run,
                crate::store::Scope::Monitor,
            )?
            .to_json()
        }
        "verify" => query::verify(store)?.to_json(),
        "list" => {
            let listed = query::list(store, &list_filter(m)?)?;
            serde_json::to_value(listed.to_json()).map_err(|e| ClarifyError::Internal {
                message: e.to_string(),
            })?
        }
        "show" => match (opt_string(m, "id")?, issue_number(m, "issue")?) {
            (Some(id), _) => {
                let (issue, record) = query::show_id(store, &id)?;
                query::show_json(issue, &record)
            }
            (None, Some(issue)) => {
                json!({"ok": true, "ledger": query::show_issue(store, issue)?.to_output_value()})
            }
            (None, None) => return Err(bad("`id` or `issue` is required")),
        },
        "stats" => query::stats(store, time(m, "since")?)?.to_json(),
        "hook" | "hookStart" | "hookFinish" => {
            let event = match op {
                "hookStart" => HookEvent::Start,
                "hookFinish" => HookEvent::Finish,
                _ => {
                    let text = string(m, "event")?;
                    HookEvent::parse(&text).ok_or_else(|| {
                        bad(format!(
                            "unknown hook event '{text}'; allowed: start, finish"
                        ))
                    })?
                }
            };
            let agent = string(m, "agent")?;
            let issue = issue_number(m, "issue")?;
            status::hook(store, now()?, event, &agent, issue)?.to_json()
        }
        "ready" => {
            let include_escalated = opt_bool(m, "includeEscalated")?.unwrap_or(true);
            if opt_bool(m, "monitor")? == Some(false) {
                query::ready_view(store, include_escalated)?
            } else {
                query::ready(store, now()?, include_escalated)?.to_json()
            }
        }
        "state" => match (opt_string(m, "agent")?, opt_string(m, "status")?) {
            (Some(agent), Some(state)) => {
                let issue = issue_number(m, "issue")?;
                status::state_set(store, now()?, &agent, &state, issue)?.to_json()
            }
            (None, None) => status::state_get(store)?.to_json(),
            _ => return Err(bad("`agent` and `status` go together")),
        },
        "scopePreview" => {
            let question = scope_question(m)?;
            let issue = issue_number(m, "issueNumber")?;
            json!({"ok": true, "preview": query::scope_preview(store, &question, issue)?})
        }
        "nextWakeup" => json!({"ok": true, "wakeup": query::next_wakeup(store, now()?)?}),
        "waitForGraph" => {
            let graphs = query::wait_for_graphs(store, issue_number(m, "issue")?)?;
            json!({"ok": true, "graphs": graphs})
        }
        "migrate" => crate::migrate::migrate(store, flag(m, "dryRun")?)?.to_json(),
        "signalsParse" => ok(api_signals::parse_value(&string(m, "text")?)),
        "signalsIngest" => {
            let ctx = api_signals::ingest_context(m)?;
            let text = string(m, "text")?;
            signals::ingest(store, now()?, &ctx, &text)?.to_json()
        }
        "resumePrompt" => ok(api_signals::resume_value(&signals::resume_prompt(
            store,
            &string(m, "id")?,
        )?)),
        "delegateRequest" => {
            let req = api_signals::new_delegation(m)?;
            delegate::request(store, now()?, &req)?.to_json()
        }
        "delegateAccept" | "delegateComplete" | "delegateReject" | "delegateFail" => {
            let id = string(m, "id")?;
            let verb = op.trim_start_matches("delegate").to_ascii_lowercase();
            let action = api_signals::delegation_action(&verb, m)?;
            delegate::act(store, now()?, &id, &action)?.to_json()
        }
        "delegateShow" => match (opt_string(m, "id")?, issue_number(m, "issue")?) {
            (Some(id), _) => {
                let (issue, d) = delegate::show(store, &id)?;
                json!({"ok": true, "delegation": d.to_output(issue)})
            }
            (None, Some(issue)) => {
                json!({"ok": true, "ledger": delegate::show_issue(store, issue)?.to_value()})
            }
            (None, None) => return Err(bad("`id` or `issue` is required")),
        },
        "delegateList" => {
            let filter = delegate::DelegationFilter {
                issue: issue_number(m, "issue")?,
                statuses: api_signals::delegation_statuses(m)?,
                all: flag(m, "all")?,
            };
            delegate::list(store, &filter)?.to_json()
        }
        "check" => {
            let plan = m.get("plan").ok_or_else(|| {
                bad("`plan` is required: Layer 4's {session_id?, agent_id?, gaps}")
            })?;
            let plan = agentx_clarify_core::layer4::Plan::parse(plan)?;
            let args = check_args(m, &plan)?;
            layer4::check(store, now()?, &plan, &args)?.to_json()
        }
        "gate" => {
            let issue = issue_number(m, "issue")?.ok_or_else(|| bad("`issue` is required"))?;
            let operation = opt_string(m, "operation")?;
            layer4::gate_json(&layer4::gate(store, issue, operation.as_deref())?)
        }
        "audit" => {
            let target = match (opt_string(m, "id")?, issue_number(m, "issue")?) {
                (Some(id), _) => layer4::AuditTarget::Record(id),
                (None, Some(issue)) => layer4::AuditTarget::Issue(issue),
                (None, None) => return Err(bad("`id` or `issue` is required")),
            };
            layer4::audit_json(&layer4::audit(store, &target)?)
        }
        "keysList" => keys::list_json(&keys::list_keys(store)?),
        other => {
            return Err(bad(format!(
                "unknown operation '{other}'; known: {}, {}",
                OPERATIONS.join(", "),
                ROUTE_OPERATIONS.join(", ")
            )))
        }
    })
}

/// `check`'s arguments: `issue`, `from`, `to?`, `workflow?`, `step?`, and `newSessionId` (a
/// UUID v4 the shell drew) unless the plan names its session.
fn check_args(
    m: &Obj,
    plan: &agentx_clarify_core::layer4::Plan,
) -> Result<agentx_clarify_core::layer4::CheckArgs, ClarifyError> {
    let issue = issue_number(m, "issue")?.ok_or_else(|| bad("`issue` is required"))?;
    let new_session_id = opt_string(m, "newSessionId")?.unwrap_or_default();
    if plan.session_id.is_none() && new_session_id.is_empty() {
        return Err(bad(
            "the plan has no `session_id`: give it one, or give `newSessionId` (a UUID v4)",
        ));
    }
    Ok(agentx_clarify_core::layer4::CheckArgs {
        issue_number: u64::from(issue),
        from: string(m, "from")?,
        to: opt_string(m, "to")?,
        workflow: opt_string(m, "workflow")?,
        step: opt_string(m, "step")?,
        new_session_id,
    })
}

/// The routing operations that start no process, or `None` for any other `op`:
/// `routeRunner {agent}` (the runner that answers for `agent`, or `NO_RUNNER`),
/// `routePrompt {id, persona?}` (the prompt and the runner `route` would use; `persona`
/// replaces the persona file's text) and `routeOutcome {id, output}` (what routing would do
/// with that run output, nothing written).
pub fn call_route_view<S: Store + crate::store::Store>(
    store: &S,
    op: &str,
    input: &Value,
    now: i64,
) -> Option<Value> {
    if !matches!(op, "routePrompt" | "routeOutcome" | "routeRunner") {
        return None;
    }
    let result = object(input).and_then(|m| match op {
        "routeRunner" => route::route_runner(store, &string(m, "agent")?),
        "routePrompt" => {
            let persona = opt_string(m, "persona")?;
            Ok(route::route_prompt(store, &string(m, "id")?, persona.as_deref())?.to_json())
        }
        _ => {
            let id = string(m, "id")?;
            let output = m
                .get("output")
                .ok_or_else(|| bad("`output` is required: the run to interpret"))?;
            let run = route::parse_run(output)?;
            let now = time(m, "now")?.unwrap_or(now);
            route::route_outcome(store, &id, &run, now)
        }
    });
    Some(result.unwrap_or_else(|e| failure(&e)))
}

/// [`call`] for a shell that can start agents: also `route {id}` / `route {all: true,
/// jobs?}`, and `monitor {route?}` (routes what the monitor retried; the default is
/// `[clarify] route_on_retry`). `clock` is read when each step happens (a run takes time);
/// an input `now` fixes it.
pub fn call_routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    op: &str,
    input: &Value,
    clock: Clock<'_>,
) -> Value {
    let result = object(input).and_then(|m| {
        let fixed = time(m, "now")?;
        let fixed_clock = move || fixed.unwrap_or(0);
        let clock: Clock<'_> = if fixed.is_some() { &fixed_clock } else { clock };
        routed(store, runner, op, m, input, clock)
    });
    result.unwrap_or_else(|e| failure(&e))
}

fn routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    op: &str,
    m: &Obj,
    input: &Value,
    clock: Clock<'_>,
) -> Result<Value, ClarifyError> {
    match op {
        "route" if flag(m, "all")? => {
            let jobs = jobs(m)?;
            Ok(route::route_all(store, runner, clock, jobs)?.to_json())
        }
        "route" => Ok(route::route(store, runner, &string(m, "id")?, clock, true)?.to_json()),
        // Routing through the shell's chat model (VS Code): the prompt, then the reply.
        "routeChatPrompt" => route::chat_prompt(
            store,
            &string(m, "id")?,
            opt_string(m, "persona")?.as_deref(),
        ),
        "routeChatReply" => {
            let round = opt_integer(m, "round")?
                .and_then(|r| u32::try_from(r).ok())
                .ok_or_else(|| bad("`round` is required: the round of the prompt (1 or more)"))?;
            let reply = match (opt_string(m, "reply")?, opt_string(m, "error")?) {
                (Some(text), None) => route::ChatReply::Text(text),
                (None, Some(cause)) => route::ChatReply::Failed(cause),
                _ => return Err(bad("give exactly one of `reply` (the model's text) and `error` (why there is none)")),
            };
            let model = opt_string(m, "model")?;
            let id = string(m, "id")?;
            Ok(route::chat_reply(store, &id, round, &reply, model.as_deref(), clock())?.to_json())
        }
        "monitor" => {
            let done = route::monitor_routed(
                store,
                runner,
                clock,
                flag(m, "dryRun")?,
                opt_bool(m, "route")?,
                jobs(m)?,
            )?;
            let mut out = done.run.to_json();
            if let (Value::Object(o), Some(routed)) = (&mut out, done.routed) {
                o.insert("routed".into(), routed.to_json());
            }
            Ok(out)
        }
        _ => Ok(call_route_view(store, op, input, clock())
            .unwrap_or_else(|| call(store, op, input, clock()))),
    }
}

/// `jobs`: how many routings run at once (1–64, default 1).
fn jobs(m: &Obj) -> Result<usize, ClarifyError> {
    match opt_integer(m, "jobs")? {
        None => Ok(1),
        Some(n) if (1..=64).contains(&n) => Ok(usize::try_from(n).unwrap_or(1)),
        Some(n) => Err(bad(format!("`jobs` {n} is out of range: expected 1 to 64"))),
    }
}
