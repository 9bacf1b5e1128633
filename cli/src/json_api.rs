//! The store's JSON facade: the CLI's commands over plain JSON objects, returning exactly the
//! CLI's `--json` output. The Node binding exposes it as `Workspace` methods; everything here
//! is conversion — the commands decide.

use agentx_clarify_core::api::error_value;
// Fields are decoded by the core API's own helpers: the same fields, the same messages.
use agentx_clarify_core::api::input::{
    flag, issue, issue_number as opt_issue, list_filter, opt_bool, opt_string as opt_str,
    string as req_str, string_list, Obj,
};
use agentx_clarify_core::{ClarifyError, NewRequest};
use serde_json::{json, Map, Value};

use crate::clock::system_now_ms;
use crate::commands::{self, HookEvent};
use crate::store::Workspace;

/// Operations `call` understands.
pub const OPERATIONS: &[&str] = &[
    "init",
    "ask",
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
    "hookStart",
    "hookFinish",
    "ready",
    "state",
];

fn bad(message: impl Into<String>) -> ClarifyError {
    ClarifyError::input(message)
}

/// `now` (epoch ms, or RFC 3339 text) when given, else the system clock: the one reading.
fn now(m: &Obj) -> Result<i64, ClarifyError> {
    match m.get("now") {
        None | Some(Value::Null) => Ok(system_now_ms()),
        Some(Value::String(s)) => crate::clock::parse_now(s).map_err(bad),
        Some(Value::Number(n)) => {
            let ms = n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64));
            let ms = ms.ok_or_else(|| bad("`now` must be an integer (epoch ms)"))?;
            agentx_clarify_core::ops::check_now(ms)?;
            Ok(ms)
        }
        Some(_) => Err(bad("`now` must be epoch milliseconds or RFC 3339 text")),
    }
}

/// Runs `op` on the workspace at `ws` and returns the CLI's `--json` document.
pub fn call(ws: &Workspace, op: &str, input: &Value) -> Value {
    let empty = Map::new();
    let m = match input {
        Value::Object(m) => m,
        Value::Null => &empty,
        _ => return failure(&bad("the argument must be an object")),
    };
    run(ws, op, m).unwrap_or_else(|e| failure(&e))
}

fn failure(e: &ClarifyError) -> Value {
    json!({"ok": false, "error": error_value(e)})
}

fn run(ws: &Workspace, op: &str, m: &Obj) -> Result<Value, ClarifyError> {
    Ok(match op {
        "init" => json!({"ok": true, "created": commands::init(ws)?}),
        "ask" => {
            // Range checked with the other fields, in the core's order (as the pure API does).
            let issue = issue(m, "issueNumber")?.ok_or_else(|| bad("`issueNumber` is required"))?;
            let suggestions = string_list(m, "suggestions")?;
            let blocking = opt_bool(m, "blocking")?.unwrap_or(true);
            let req = NewRequest {
                issue_number: issue,
                from: req_str(m, "from")?,
                to: req_str(m, "to")?,
                topic: req_str(m, "topic")?,
                question: req_str(m, "question")?,
                blocking,
                workflow: opt_str(m, "workflow")?,
                step: opt_str(m, "step")?,
                field: opt_str(m, "field")?,
                suggestions,
                idempotency_key: opt_str(m, "idempotencyKey")?,
            };
            commands::ask(ws, now(m)?, &req)?.to_json()
        }
        "answer" | "followUp" | "resolve" | "escalate" | "abandon" => {
            let id = req_str(m, "id")?;
            let action = agentx_clarify_core::api::input::action(op, m)?;
            commands::act(ws, now(m)?, &id, &action)?.to_json()
        }
        "monitor" => {
            let config = ws.load_config()?;
            commands::run_monitor(ws, &config, now(m)?, flag(m, "dryRun")?)?.to_json()
        }
        "verify" => commands::verify(ws)?.to_json(),
        "list" => {
            let records = commands::list(ws, &list_filter(m)?)?;
            let values: Vec<Value> = records.iter().map(|(i, r)| r.to_output(*i)).collect();
            json!({"ok": true, "clarifications": values})
        }
        "show" => match (opt_str(m, "id")?, opt_issue(m, "issue")?) {
            (Some(id), _) => {
                let (issue, record) = commands::show_id(ws, &id)?;
                json!({"ok": true, "clarification": record.to_output(issue)})
            }
            (None, Some(issue)) => {
                json!({"ok": true, "ledger": commands::show_issue(ws, issue)?.to_value()})
            }
            (None, None) => return Err(bad("`id` or `issue` is required")),
        },
        "stats" => {
            let since = opt_str(m, "since")?
                .map(|s| crate::clock::parse_now(&s).map_err(bad))
                .transpose()?;
            json!({"ok": true, "stats": commands::stats(ws, since)?})
        }
        "hookStart" | "hookFinish" => {
            let event = if op == "hookStart" {
                HookEvent::Start
            } else {
                HookEvent::Finish
            };
            let outcome = commands::hook(
                ws,
                now(m)?,
                event,
                &req_str(m, "agent")?,
                opt_issue(m, "issue")?,
            )?;
            let mut v = outcome.to_json();
            if let (Some(w), Value::Object(map)) = (&outcome.warning, &mut v) {
                map.insert("warning".into(), Value::from(w.as_str()));
            }
            v
        }
        "ready" => commands::ready(ws, now(m)?, flag(m, "includeEscalated")?)?.to_json(),
        "state" => {
            let outcome = match (opt_str(m, "agent")?, opt_str(m, "status")?) {
                (Some(agent), Some(status)) => {
                    commands::state_set(ws, now(m)?, &agent, &status, opt_issue(m, "issue")?)?
                }
                (None, None) => commands::state_get(ws)?,
                _ => return Err(bad("`agent` and `status` go together")),
            };
            let mut v = outcome.to_json();
            if let (Some(w), Value::Object(map)) = (&outcome.warning, &mut v) {
                map.insert("warning".into(), Value::from(w.as_str()));
            }
            v
        }
        other => {
            return Err(bad(format!(
                "unknown operation '{other}'; known: {}",
                OPERATIONS.join(", ")
            )))
        }
    })
}
