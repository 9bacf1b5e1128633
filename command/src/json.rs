//! The one JSON decoder of commands: `call(store, op, input, now)` runs a command from a plain
//! JSON object and returns exactly its `--json` document. The Node store, the wasm workspace,
//! the MCP server and every vector runner call this; the CLI builds the same typed commands
//! from its arguments. Fields are decoded by the core's own helpers (`api::input`), so every
//! surface spells and checks them the same way.

use agentx_clarify_core::api::error_value;
use agentx_clarify_core::api::input::{
    action, flag, issue_number, list_filter, new_request, object, opt_string, scope_question,
    string, Obj,
};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::status::HookEvent;
use crate::store::Store;
use crate::{monitor, mutation, query, status};

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
];

/// Runs `op` on `store` and returns its `--json` document, `{"ok": true, …}` or
/// `{"ok": false, "error": {"code", "message"}, …}`. `now` is the shell's clock reading,
/// used unless the input gives its own `now` (epoch ms or RFC 3339 text).
pub fn call<S: Store>(store: &S, op: &str, input: &Value, now: i64) -> Value {
    let result = object(input).and_then(|m| run(store, op, m, now));
    result.unwrap_or_else(|e| failure(&e))
}

/// The failure document of an error.
pub fn failure(e: &ClarifyError) -> Value {
    json!({"ok": false, "error": error_value(e)})
}

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
            let ms = agentx_clarify_core::api::input::opt_integer(m, key)?
                .ok_or_else(|| bad(format!("`{key}` must be an integer (epoch ms)")))?;
            agentx_clarify_core::ops::check_now(ms)?;
            Ok(Some(ms))
        }
        Some(_) => Err(bad(format!(
            "`{key}` must be epoch milliseconds or RFC 3339 text"
        ))),
    }
}

fn run<S: Store>(store: &S, op: &str, m: &Obj, clock: i64) -> Result<Value, ClarifyError> {
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
            mutation::act(store, now()?, &id, &action)?.to_json()
        }
        "monitor" => {
            let config = store.load_config()?;
            let dry_run = flag(m, "dryRun")?;
            monitor::run_monitor(store, &config, now()?, dry_run, crate::Scope::Monitor)?.to_json()
        }
        "verify" => query::verify(store)?.to_json(),
        "list" => {
            let records = query::list(store, &list_filter(m)?)?;
            serde_json::to_value(query::list_json(&records)).map_err(|e| {
                ClarifyError::Internal {
                    message: e.to_string(),
                }
            })?
        }
        "show" => match (opt_string(m, "id")?, issue_number(m, "issue")?) {
            (Some(id), _) => {
                let (issue, record) = query::show_id(store, &id)?;
                json!({"ok": true, "clarification": record.to_output(issue)})
            }
            (None, Some(issue)) => {
                json!({"ok": true, "ledger": query::show_issue(store, issue)?.to_output_value()})
            }
            (None, None) => return Err(bad("`id` or `issue` is required")),
        },
        "stats" => json!({"ok": true, "stats": query::stats(store, time(m, "since")?)?}),
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
        "ready" => query::ready(store, now()?, flag(m, "includeEscalated")?)?.to_json(),
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
        other => {
            return Err(bad(format!(
                "unknown operation '{other}'; known: {}",
                OPERATIONS.join(", ")
            )))
        }
    })
}
