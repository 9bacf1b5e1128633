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
use crate::call::pure;
use crate::call::store::{
    self, Ask, Close, FollowUp, Ingest, List, Nothing, Resolve, Target, Text,
};
use crate::call::table::{dispatch_function, Functions, Pair};
use crate::call::IssueArg;
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::Status;
use crate::listing;
use crate::monitor::{monitor, Report};
use crate::ops::{act, request, Action, Applied};
use crate::render::{self, Style};

/// Every function `call` understands, in the order of `docs/api.md` (the table's,
/// [`crate::call::table::FUNCTIONS`]).
pub use crate::call::table::FUNCTION_NAMES as FUNCTIONS;

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
    dispatch_function(&Facade, name, input)
}

/// The pure facade: one method per function of the table.
struct Facade;

impl Functions for Facade {
    type Out = Value;
    type Error = Failure;

    fn request(&self, Pair(on, ask): Pair<pure::OnNew, Ask>) -> Result<Value, Failure> {
        let config = input::config(on.config.as_ref())?;
        let req = ask.into_request()?;
        let now = pure::now(on.now)?;
        // The CLI's order: input, then the status file, then the ledger.
        let issue = req.validate(&config)?;
        let statuses = input::statuses(on.statuses.as_ref())?;
        let ledger = input::opt_ledger(on.ledger.as_ref(), issue)?;
        let workflows = input::workflows(on.workflows.as_ref())?;
        applied_value(
            request(ledger.as_ref(), &req, &config, &workflows, now)?,
            statuses,
        )
    }

    fn answer(&self, Pair(on, a): Pair<pure::OnRecord, store::Answer>) -> Result<Value, Failure> {
        existing(on, a.id.clone(), a.action())
    }

    fn follow_up(&self, Pair(on, f): Pair<pure::OnRecord, FollowUp>) -> Result<Value, Failure> {
        existing(on, f.id.clone(), Ok(f.action()))
    }

    fn resolve(&self, Pair(on, r): Pair<pure::OnRecord, Resolve>) -> Result<Value, Failure> {
        existing(on, r.id.clone(), Ok(r.action()))
    }

    fn escalate(&self, Pair(on, c): Pair<pure::OnRecord, Close>) -> Result<Value, Failure> {
        existing(on, c.id.clone(), Ok(c.escalate()))
    }

    fn abandon(&self, Pair(on, c): Pair<pure::OnRecord, Close>) -> Result<Value, Failure> {
        existing(on, c.id.clone(), Ok(c.abandon()))
    }

    fn monitor(&self, m: pure::Monitor) -> Result<Value, Failure> {
        Ok(monitor_call(m)?)
    }

    fn verify(&self, v: pure::Verify) -> Result<Value, Failure> {
        let found = audit::verify(&v)?;
        Ok(json!({ "problems": found.problems, "warnings": found.warnings }))
    }

    fn audit(&self, a: pure::Audit) -> Result<Value, Failure> {
        Ok(audit::audit_value(a)?)
    }

    fn stats(&self, m: pure::Metrics) -> Result<Value, Failure> {
        let (ledgers, _) = input::workspace(m.ledgers.as_ref(), m.files.as_ref())?;
        let (delegations, _) = signals::delegation_ledgers(m.delegations.as_ref())?;
        let stats = crate::stats::stats_with_delegations(
            &ledgers,
            &delegations,
            &signals::manifests(m.manifests.as_ref())?,
            m.since.map(|s| s.0),
        );
        Ok(json!({ "stats": stats }))
    }

    fn list(&self, Pair(on, l): Pair<pure::Ledgers, List>) -> Result<Value, Failure> {
        let (ledgers, _) = input::workspace(on.ledgers.as_ref(), on.files.as_ref())?;
        let records = listing::list(&ledgers, &l.filter()?);
        Ok(json!({ "clarifications": listing::list_values(&records) }))
    }

    fn show(&self, Pair(on, target): Pair<pure::Ledgers, Target>) -> Result<Value, Failure> {
        Ok(show(&on, target)?)
    }

    fn ready(&self, r: pure::Ready) -> Result<Value, Failure> {
        let (ledgers, _) = input::workspace(r.ledgers.as_ref(), r.files.as_ref())?;
        let escalated = r.include_escalated.unwrap_or(true);
        Ok(json!({ "issues": listing::ready(&ledgers, escalated) }))
    }

    fn set_status(&self, s: pure::SetStatus) -> Result<Value, Failure> {
        let mut statuses = input::statuses(s.statuses.as_ref())?;
        let issue = s.issue.as_ref().map(IssueArg::number).transpose()?;
        let (agent, warning) =
            set_status(&mut statuses, &s.agent, &s.status, issue, pure::now(s.now)?)?;
        Ok(json!({ "statuses": statuses, "agent": agent, "warning": warning }))
    }

    fn parse_workflow(&self, p: pure::Parse) -> Result<Value, Failure> {
        let file = p.file.unwrap_or_else(|| String::from("workflow.toml"));
        Ok(json!({ "workflow": crate::workflow::Workflow::parse(&file, &p.text)? }))
    }

    fn people_list(&self, p: pure::PeopleList) -> Result<Value, Failure> {
        let file = p
            .file
            .unwrap_or_else(|| String::from(crate::people::PEOPLE_FILE));
        let now = pure::now(p.now)?;
        let people = crate::people::People::parse(&file, &p.text, &[])?;
        Ok(crate::people::view(&people, now))
    }

    fn people_deciders(&self, p: pure::PeopleDeciders) -> Result<Value, Failure> {
        let file = p
            .file
            .unwrap_or_else(|| String::from(crate::people::PEOPLE_FILE));
        let now = pure::now(p.now)?;
        if let Some(bad) = p
            .deciders
            .iter()
            .find(|d| !crate::people::is_decider_spec(d))
        {
            return Err(ClarifyError::input(format!(
                "deciders: '{}' is neither a person's name nor role:<role>",
                crate::error::shown(bad)
            ))
            .into());
        }
        let people = crate::people::People::parse(&file, &p.text, &[])?;
        Ok(json!({ "deciders": people.deciders_named(&p.deciders, now) }))
    }

    fn parse_config(&self, p: pure::Parse) -> Result<Value, Failure> {
        let file = p.file.unwrap_or_else(|| String::from("config.toml"));
        Ok(json!({ "config": crate::config::Config::parse(&file, &p.text)? }))
    }

    fn default_workflows(&self, _: Nothing) -> Result<Value, Failure> {
        let workflows: Map<String, Value> = crate::defaults::DEFAULT_WORKFLOWS
            .iter()
            .map(|(name, text)| ((*name).to_owned(), Value::from(*text)))
            .collect();
        Ok(json!({ "workflows": workflows, "config": crate::defaults::CONFIG_TOML }))
    }

    fn render_markdown(&self, r: pure::Render) -> Result<Value, Failure> {
        Ok(json!({ "text": render_view(r, None)? }))
    }

    fn render_text(&self, Pair(c, r): Pair<pure::Color, pure::Render>) -> Result<Value, Failure> {
        let color = c.color.unwrap_or(false);
        Ok(json!({ "text": render_view(r, Some(Style { color }))? }))
    }

    fn transitions(&self, _: Nothing) -> Result<Value, Failure> {
        Ok(json!({ "transitions": transitions() }))
    }

    fn error_codes(&self, _: Nothing) -> Result<Value, Failure> {
        Ok(json!({ "codes": error_codes() }))
    }

    fn version(&self, _: Nothing) -> Result<Value, Failure> {
        Ok(json!({ "version": crate::VERSION }))
    }

    fn signals_parse(&self, t: Text) -> Result<Value, Failure> {
        Ok(signals::parse_value(&t.text))
    }

    fn extract_json(&self, t: Text) -> Result<Value, Failure> {
        Ok(json!({ "extracted": crate::signals::extract(&t.text) }))
    }

    fn signals_ingest(&self, Pair(on, i): Pair<pure::OnIngest, Ingest>) -> Result<Value, Failure> {
        Ok(signals::ingest(on, i)?)
    }

    fn resume_prompt(&self, r: pure::Resume) -> Result<Value, Failure> {
        Ok(signals::resume(r)?)
    }

    fn delegation_metrics(&self, m: pure::Metrics) -> Result<Value, Failure> {
        Ok(signals::metrics(&m)?)
    }
}

/// Runs an operation on an existing record, with the CLI's order of checks: settings, input,
/// the status file, then the ledger the id names (absent → `NOT_FOUND`). `action` is the
/// input's reading, refused only after the settings.
fn existing(
    on: pure::OnRecord,
    id: String,
    action: Result<Action, ClarifyError>,
) -> Result<Value, Failure> {
    let config = input::config(on.config.as_ref())?;
    let action = action?;
    let now = pure::now(on.now)?;
    let parsed = action.validate(&id, &config)?;
    let statuses = input::statuses(on.statuses.as_ref())?;
    let ledger = input::opt_ledger(on.ledger.as_ref(), parsed.issue)?
        .ok_or(ClarifyError::NotFound { id: id.clone() })?;
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

fn monitor_call(m: pure::Monitor) -> Result<Value, ClarifyError> {
    let (ledgers, errors) = input::workspace(m.ledgers.as_ref(), m.files.as_ref())?;
    let config = input::config(m.config.as_ref())?;
    let mut statuses = input::statuses(m.statuses.as_ref())?;
    let now = pure::now(m.now)?;
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
fn show(on: &pure::Ledgers, target: Target) -> Result<Value, ClarifyError> {
    let id = target.id;
    let issue = match &id {
        Some(id) => crate::names::ClarificationId::parse(id)?.issue,
        None => crate::call::opt_issue(target.issue.as_ref())?
            .ok_or_else(|| ClarifyError::input("`id` or `issue` is required"))?,
    };
    let ledger = input::workspace_ledger(on.ledgers.as_ref(), on.files.as_ref(), issue)?;
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
fn render_view(view: pure::Render, style: Option<Style>) -> Result<String, ClarifyError> {
    let one = || -> Result<(u32, crate::Record), ClarifyError> {
        let v = view
            .clarification
            .as_ref()
            .ok_or_else(|| ClarifyError::input("`clarification` is required"))?;
        input::clarification(v)
    };
    Ok(match view.view.as_str() {
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
            let round = view
                .round
                .map_or(last, |n| u32::try_from(n.0).unwrap_or(last));
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
            let items = match &view.clarifications {
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
            let v = view
                .report
                .as_ref()
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
