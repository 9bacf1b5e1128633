//! One module per command. Each runs the CLI's fixed rhythm — resolve paths, lock, read, decide
//! (in the pure core), write atomically, unlock — and returns a typed outcome whose `to_json()`
//! is the command's `--json` shape (SPEC §11.1). The Node binding calls the same functions, so
//! both surfaces lock, write and report identically.

mod act;
mod ask;
mod hook;
mod init;
mod monitor;
mod query;
mod ready;
mod verify;

pub use act::act;
pub use ask::ask;
pub use hook::{hook, state_get, state_set, HookEvent, HookOutcome, StateOutcome};
pub use init::init;
pub use monitor::{run_monitor, run_monitor_keeping_ledgers, MonitorRun};
pub use query::{list, show_id, show_issue, stats};
pub use ready::{ready, ReadyOutcome};
pub use verify::{verify, VerifyOutcome};

use agentx_clarify_core::agents::apply_events;
use agentx_clarify_core::api::error_value;
use agentx_clarify_core::{ClarifyError, Config, Event, Record};
use serde_json::{json, Map, Value};

use crate::store::Workspace;

/// What a mutating command did.
#[derive(Clone, Debug)]
pub struct Mutation {
    pub issue: u32,
    pub id: String,
    /// The record as stored after the operation and the monitor that followed it.
    pub clarification: Option<Record>,
    /// The operation's events, then the monitor's.
    pub events: Vec<Event>,
    pub idempotent: bool,
    pub monitor: MonitorRun,
    /// Set when the write is itself a refusal (`MAX_ROUNDS_EXCEEDED`).
    pub error: Option<ClarifyError>,
}

impl Mutation {
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("ok".into(), Value::Bool(self.error.is_none()));
        if let Some(e) = &self.error {
            out.insert("error".into(), error_value(e));
        }
        out.insert(
            "clarification".into(),
            self.clarification
                .as_ref()
                .map_or(Value::Null, |r| r.to_output(self.issue)),
        );
        out.insert("events".into(), json!(self.events));
        if self.error.is_none() {
            out.insert("idempotent".into(), Value::Bool(self.idempotent));
        }
        out.insert("monitor".into(), json!(self.monitor.report));
        Value::Object(out)
    }
}

/// The monitor run that follows a command (SPEC §7): its failures are reported in its
/// `errors`, never turned into the command's failure — the command's own write stands.
pub(crate) fn monitor_after(ws: &Workspace, config: &Config, now: i64) -> MonitorRun {
    run_monitor(ws, config, now, false).unwrap_or_else(|e| {
        let mut run = MonitorRun::default();
        run.report
            .errors
            .push(agentx_clarify_core::monitor::ReportError::new(
                ".agentx/state/clarifications",
                &e,
            ));
        run
    })
}

/// After a ledger write: the statuses (under their own lock), then the monitor, then the
/// record as it now stands.
fn finish(
    ws: &Workspace,
    config: &Config,
    now: i64,
    applied: agentx_clarify_core::Applied,
    actor: &str,
) -> Result<Mutation, ClarifyError> {
    if !applied.events.is_empty() {
        ws.update_statuses(config, actor, |statuses| {
            apply_events(statuses, &applied.events);
            Ok(())
        })?;
    }
    let monitor = monitor_after(ws, config, now);
    let issue = applied.ledger.issue_number;
    let clarification = ws
        .read_ledger(issue)?
        .and_then(|l| l.find(&applied.id).cloned());
    let mut events = applied.events;
    events.extend(monitor.events.iter().cloned());
    Ok(Mutation {
        issue,
        id: applied.id,
        clarification,
        events,
        idempotent: applied.idempotent,
        monitor,
        error: applied.error,
    })
}
