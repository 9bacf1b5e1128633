//! The JSON facade: one entry point, [`call`], that every surface uses (the Node addon and
//! the wasm package export one function per name; the CLI and tests call the typed API this
//! is built on). It owns the spelling of every field; see `docs/api.md` for the shapes.
//!
//! `call` never panics and never fails: it returns `{"ok": true, …}` or
//! `{"ok": false, "error": {"code", "message"}, …}`.

mod audit;
pub mod signals;

/// The input reader lives below the facade ([`crate::input`]) so domain modules can decode
/// objects without importing `api`; it stays reachable here as `api::input`.
pub use crate::input;

use serde_json::{json, Map, Value};

use crate::agents::{apply_events, set_status, Statuses};
use crate::error::ClarifyError;
use crate::events::Event;
use crate::input::Obj;
use crate::ledger::Status;
use crate::listing;
use crate::monitor::{monitor, Report};
use crate::ops::{act, request, Action, Applied};
use crate::render::{self, Style};

/// Every function `call` understands, in the order of `docs/api.md`.
pub const FUNCTIONS: &[&str] = &[
    "request",
    "answer",
    "followUp",
    "resolve",
    "escalate",
    "abandon",
    "monitor",
    "verify",
    "audit",
    "stats",
    "list",
    "show",
    "ready",
    "setStatus",
    "parseWorkflow",
    "parseConfig",
    "defaultWorkflows",
    "renderMarkdown",
    "renderText",
    "transitions",
    "errorCodes",
    "version",
    // Subagent signals and delegation (`signals::FUNCTIONS`, docs/protocol.md §17–§18).
    "signalsParse",
    "extractJson",
    "signalsIngest",
    "resumePrompt",
    "delegationMetrics",
];

/// A failure, with whatever was written anyway (`MAX_ROUNDS_EXCEEDED`). Boxed: failures are
/// rare and `Result<Value, Failure>` stays small.
struct Failure(Box<(ClarifyError, Map<String, Value>)>);

impl From<ClarifyError> for Failure {
    fn from(error: ClarifyError) -> Self {
        Failure(Box::new((error, Map::new())))
    }
}

/// Calls function `name` with one JSON object and returns the envelope.
pub fn call(name: &str, input: &Value) -> Value {
    match dispatch(name, input) {
        Ok(Value::Object(mut map)) => {
            let mut out = Map::new();
            out.insert("ok".into(), Value::Bool(true));
            out.append(&mut map);
            Value::Object(out)
        }
        Ok(other) => json!({"ok": true, "value": other}),
        Err(Failure(failure)) => {
            let (error, mut written) = *failure;
            let mut out = Map::new();
            out.insert("ok".into(), Value::Bool(false));
            out.insert("error".into(), error_value(&error));
            out.append(&mut written);
            Value::Object(out)
        }
    }
}

pub use crate::envelope::error_value;

fn dispatch(name: &str, input: &Value) -> Result<Value, Failure> {
    let map = input::object(input)?;
    match name {
        "request" => {
            let config = input::config(map)?;
            let req = input::new_request(map)?;
            let now = input::now(map)?;
            // The CLI's order: input, then the status file, then the ledger.
            let issue = req.validate(&config)?;
            let statuses = input::statuses(map)?;
            let ledger = input::opt_ledger(map, issue)?;
            let workflows = input::workflows(map)?;
            applied_value(
                request(ledger.as_ref(), &req, &config, &workflows, now)?,
                statuses,
            )
        }
        "answer" | "followUp" | "resolve" | "escalate" | "abandon" => {
            existing(map, |m| input::action(name, m))
        }
        "monitor" => Ok(monitor_call(map)?),
        "verify" => {
            let found = audit::verify(map)?;
            Ok(json!({ "problems": found.problems, "warnings": found.warnings }))
        }
        "audit" => Ok(audit::audit_value(map)?),
        "stats" => {
            let (ledgers, _) = input::workspace(map)?;
            let (delegations, _) = signals::delegation_ledgers(map)?;
            let stats = crate::stats::stats_with_delegations(
                &ledgers,
                &delegations,
                &signals::manifests(map)?,
                input::opt_integer(map, "since")?,
            );
            Ok(json!({ "stats": stats }))
        }
        "list" => {
            let (ledgers, _) = input::workspace(map)?;
            let filter = input::list_filter(map)?;
            let records = listing::list(&ledgers, &filter);
            Ok(json!({ "clarifications": listing::list_values(&records) }))
        }
        "show" => Ok(show(map)?),
        "ready" => {
            let (ledgers, _) = input::workspace(map)?;
            let escalated = input::opt_bool(map, "includeEscalated")?.unwrap_or(true);
            Ok(json!({ "issues": listing::ready(&ledgers, escalated) }))
        }
        "setStatus" => {
            let mut statuses = input::statuses(map)?;
            let issue = input::issue(map, "issue")?;
            let (agent, warning) = set_status(
                &mut statuses,
                &input::string(map, "agent")?,
                &input::string(map, "status")?,
                issue,
                input::now(map)?,
            )?;
            Ok(json!({ "statuses": statuses, "agent": agent, "warning": warning }))
        }
        "parseWorkflow" => {
            let file =
                input::opt_string(map, "file")?.unwrap_or_else(|| String::from("workflow.toml"));
            let w = crate::workflow::Workflow::parse(&file, &input::string(map, "text")?)?;
            Ok(json!({ "workflow": w }))
        }
        "parseConfig" => {
            let file =
                input::opt_string(map, "file")?.unwrap_or_else(|| String::from("config.toml"));
            let c = crate::config::Config::parse(&file, &input::string(map, "text")?)?;
            Ok(json!({ "config": c }))
        }
        "defaultWorkflows" => {
            let workflows: Map<String, Value> = crate::defaults::DEFAULT_WORKFLOWS
                .iter()
                .map(|(name, text)| ((*name).to_owned(), Value::from(*text)))
                .collect();
            Ok(json!({ "workflows": workflows, "config": crate::defaults::CONFIG_TOML }))
        }
        "renderMarkdown" => Ok(json!({ "text": render_view(map, None)? })),
        "renderText" => {
            let color = input::flag(map, "color")?;
            Ok(json!({ "text": render_view(map, Some(Style { color }))? }))
        }
        "transitions" => Ok(json!({ "transitions": transitions() })),
        "errorCodes" => Ok(json!({ "codes": error_codes() })),
        "version" => Ok(json!({ "version": crate::VERSION })),
        _ if signals::FUNCTIONS.contains(&name) => Ok(signals::dispatch(name, map)?),
        other => Err(ClarifyError::input(format!(
            "unknown function '{other}'; known: {}",
            FUNCTIONS.join(", ")
        ))
        .into()),
    }
}

/// Runs an operation on an existing record, with the CLI's order of checks: settings, input,
/// the status file, then the ledger the id names (absent → `NOT_FOUND`).
fn existing(
    map: &Obj,
    action: impl FnOnce(&Obj) -> Result<Action, ClarifyError>,
) -> Result<Value, Failure> {
    let config = input::config(map)?;
    let id = input::string(map, "id")?;
    let action = action(map)?;
    let now = input::now(map)?;
    let parsed = action.validate(&id, &config)?;
    let statuses = input::statuses(map)?;
    let ledger =
        input::opt_ledger(map, parsed.issue)?.ok_or(ClarifyError::NotFound { id: id.clone() })?;
    applied_value(act(&ledger, &id, &action, &config, now)?, statuses)
}

fn applied_value(applied: Applied, mut statuses: Statuses) -> Result<Value, Failure> {
    apply_events(&mut statuses, &applied.events);
    let issue = applied.ledger.issue_number;
    let clarification = applied
        .ledger
        .find(&applied.id)
        .map_or(Value::Null, |r| r.to_output(issue));
    let mut fields = Map::new();
    fields.insert("ledger".into(), applied.ledger.to_value());
    fields.insert("clarification".into(), clarification);
    fields.insert("events".into(), events_value(&applied.events));
    fields.insert("statuses".into(), json!(statuses));
    match applied.error {
        Some(error) => Err(Failure(Box::new((error, fields)))),
        None => {
            fields.insert("idempotent".into(), Value::Bool(applied.idempotent));
            // Only on a re-ask (docs/protocol.md §22), as the command layer's output.
            if applied.reused {
                fields.insert("reused".into(), Value::Bool(true));
            }
            Ok(Value::Object(fields))
        }
    }
}

fn events_value(events: &[Event]) -> Value {
    serde_json::to_value(events).unwrap_or(Value::Array(Vec::new()))
}

fn monitor_call(map: &Obj) -> Result<Value, ClarifyError> {
    let (ledgers, errors) = input::workspace(map)?;
    let config = input::config(map)?;
    let mut statuses = input::statuses(map)?;
    let now = input::now(map)?;
    let outcome = monitor(ledgers, errors, &statuses, &config, now);
    apply_events(&mut statuses, &outcome.events);
    let ledgers: Vec<Value> = outcome
        .ledgers
        .iter()
        .map(crate::Ledger::to_value)
        .collect();
    Ok(json!({
        "ledgers": ledgers,
        "changed": outcome.changed,
        "report": outcome.report,
        "events": events_value(&outcome.events),
        "statuses": statuses,
    }))
}

/// `show` reads only the ledger the id (or issue) names, as the CLI does: a corrupt one is
/// `LEDGER_CORRUPT`, a missing one `NOT_FOUND`.
fn show(map: &Obj) -> Result<Value, ClarifyError> {
    let id = input::opt_string(map, "id")?;
    let issue = match &id {
        Some(id) => crate::names::ClarificationId::parse(id)?.issue,
        None => input::issue_number(map, "issue")?
            .ok_or_else(|| ClarifyError::input("`id` or `issue` is required"))?,
    };
    let ledger = input::workspace_ledger(map, issue)?;
    match id {
        Some(id) => {
            let record = ledger
                .as_ref()
                .and_then(|l| l.find(&id))
                .ok_or(ClarifyError::NotFound { id: id.clone() })?;
            Ok(json!({ "clarification": record.to_output(issue) }))
        }
        None => {
            let ledger = ledger.ok_or(ClarifyError::NoLedger { issue })?;
            Ok(json!({ "ledger": ledger.to_output_value() }))
        }
    }
}

/// The state machine's table (docs/protocol.md §4) for front ends that offer only the operations a record
/// admits: `{op: {status: who}}`, e.g. `resolve: {answered: "requester", escalated: "human"}`.
fn transitions() -> Map<String, Value> {
    use crate::ops::{who_may, Op};
    Op::ALL
        .into_iter()
        .map(|op| {
            let statuses: Map<String, Value> = Status::ALL
                .into_iter()
                .filter_map(|status| {
                    who_may(status, op, false)
                        .map(|who| (status.as_str().to_owned(), Value::from(who.as_str())))
                })
                .collect();
            (op.api_name().to_owned(), Value::Object(statuses))
        })
        .collect()
}

/// Every stable code with its class, so front ends decide by class without a copy of the list.
fn error_codes() -> Vec<Value> {
    crate::error::ErrorCode::ALL
        .iter()
        .map(|c| json!({"code": c.as_str(), "class": c.class().as_str()}))
        .collect()
}

/// Renders a view as markdown (`style` None) or terminal text.
fn render_view(map: &Obj, style: Option<Style>) -> Result<String, ClarifyError> {
    let view = input::string(map, "view")?;
    let one = || -> Result<(u32, crate::Record), ClarifyError> {
        let v = map
            .get("clarification")
            .ok_or_else(|| ClarifyError::input("`clarification` is required"))?;
        input::clarification(v)
    };
    Ok(match view.as_str() {
        "thread" => {
            let (issue, r) = one()?;
            match style {
                None => render::markdown_thread(issue, &r),
                Some(s) => render::text_thread(issue, &r, s),
            }
        }
        "round" => {
            let (issue, r) = one()?;
            let last = r.folded_round();
            let round = input::opt_integer(map, "round")?
                .map_or(last, |n| u32::try_from(n).unwrap_or(last));
            match style {
                None => render::markdown_round(&r, round),
                Some(s) => render::text_round(issue, &r, round, s),
            }
        }
        "escalation" => {
            let (issue, r) = one()?;
            match style {
                None => render::markdown_escalation(issue, &r),
                Some(s) => render::text_escalation(issue, &r, s),
            }
        }
        "list" => {
            let items = match map.get("clarifications") {
                Some(Value::Array(items)) => items,
                _ => return Err(ClarifyError::input("`clarifications` must be an array")),
            };
            let records = items
                .iter()
                .map(input::clarification)
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<(u32, &crate::Record)> = records.iter().map(|(i, r)| (*i, r)).collect();
            match style {
                None => render::markdown_list(&refs),
                Some(s) => render::text_list(&refs, s),
            }
        }
        "report" => {
            let v = map
                .get("report")
                .ok_or_else(|| ClarifyError::input("`report` is required"))?;
            let report = Report::from_json(v)
                .ok_or_else(|| ClarifyError::input("`report` is not a monitor report"))?;
            match style {
                None => render::markdown_report(&report),
                Some(s) => render::text_report(&report, s),
            }
        }
        other => {
            return Err(ClarifyError::input(format!(
                "unknown view '{other}'; allowed: thread, round, escalation, list, report"
            )))
        }
    })
}

#[cfg(test)]
mod tests;
