//! The mutating commands: `ask` and the operations on an existing record (`answer`,
//! `follow-up`, `resolve`, `escalate`, `abandon`). Each runs the same rhythm: validate, read
//! what the decision needs, decide and write the ledger in one update, then the statuses,
//! then the follow-up monitor, then the record as it now stands.

use agentx_clarify_core::agents::{apply_events, Statuses};
use agentx_clarify_core::config::RelatedMode;
use agentx_clarify_core::envelope::error_value;
use agentx_clarify_core::ops::{
    act_noted as ops_noted, decide as decide_op, request_owned, Attribution,
};
use agentx_clarify_core::search::reuse;
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::{
    request, Action, Applied, ClarifyError, Config, Event, NewRequest, Record,
};
use serde_json::{json, Map, Value};

use crate::monitor::{monitor_after_held, MonitorRun};
use crate::store::paths::{self, STATUS_FILE};
use crate::store::Store;

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
    /// A re-ask answered from the record that already holds the question (docs/protocol.md §22).
    pub reused: bool,
    /// An ask's records decided before in other issues (docs/protocol.md §36); `None` for
    /// every other command and with `[clarify] related = "off"`.
    pub related: Option<Vec<agentx_clarify_core::search::Hit>>,
    pub monitor: MonitorRun,
    /// Set when the write is itself a refusal (`MAX_ROUNDS_EXCEEDED`).
    pub error: Option<ClarifyError>,
    /// What failed after the ledger write succeeded (the statuses, the follow-up monitor):
    /// the command still succeeded (docs/protocol.md §20), so a caller never retries into a duplicate.
    pub warnings: Vec<String>,
}

impl Mutation {
    /// The command's `--json` shape (docs/protocol.md §11.1).
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
        // Only on a re-ask (docs/protocol.md §22): every other output is as before.
        if self.reused {
            out.insert("reused".into(), Value::Bool(true));
        }
        if let Some(related) = &self.related {
            out.insert("related".into(), json!(related));
        }
        out.insert("monitor".into(), json!(self.monitor.report));
        out.insert("warnings".into(), json!(self.warnings));
        Value::Object(out)
    }
}

/// Opens a clarification: validate, then decide and write under the issue's ledger update,
/// then statuses and the monitor. An idempotent replay writes nothing but still runs the
/// monitor.
pub fn ask<S: Store>(store: &S, now: i64, req: &NewRequest) -> Result<Mutation, ClarifyError> {
    ask_reusing(store, now, req, None)
}

/// [`ask`], and with `reuse` (a record's id) the new record is resolved at once with that
/// record's decision (docs/protocol.md §36); a record that is not resolved is refused before
/// anything is written.
pub fn ask_reusing<S: Store>(
    store: &S,
    now: i64,
    req: &NewRequest,
    reuse: Option<&str>,
) -> Result<Mutation, ClarifyError> {
    let cited = match reuse {
        Some(id) => {
            let (_, record) = crate::query::show_id(store, id)?;
            Some(reuse::cite(id, &record)?)
        }
        None => None,
    };
    let config = store.load_config()?;
    let issue = req.validate(&config)?;
    // A corrupt status file or an unusable key stops the command before anything is written.
    store.read_statuses()?;
    let signers = crate::store::keys::signers_for(store, &[&req.from])?;
    let workflows = store.load_workflows()?;
    // A refused request writes nothing, not even what a store needs to exclude other writers
    // (a lock file, a directory): with no ledger yet, decide once before the update.
    if !store.has_ledger(issue)? {
        request(None, req, &config, &workflows, now)?;
    }
    let applied = store.update_ledger(issue, &config, &req.from, |current| {
        let applied = request_owned(current, req, &config, &workflows, now, &signers)?;
        let applied = match &cited {
            Some(c) => reuse::resolve_with(applied, c, now, &signers),
            None => applied,
        };
        let write = (!applied.idempotent).then(|| applied.ledger.clone());
        Ok((write, applied))
    })?;
    let mut done = finish(store, &config, now, applied, &req.from, &signers)?;
    // A reuse has taken its decision: nothing is left to suggest.
    if done.error.is_none() && cited.is_none() && config.related == RelatedMode::Suggest {
        done.related = Some(crate::search::related(
            store,
            req,
            issue,
            &config,
            &mut done.warnings,
        ));
    }
    Ok(done)
}

/// Applies an operation to an existing record. `MAX_ROUNDS_EXCEEDED` writes the escalation and
/// comes back as a [`Mutation`] with `error` set.
pub fn act<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    action: &Action,
) -> Result<Mutation, ClarifyError> {
    act_as(store, now, id, action, None)
}

/// [`act`] by a person through a server (docs/protocol.md §23): the entry is `human`'s, with `by`/`via`.
pub fn act_as<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    action: &Action,
    by: Option<&Attribution>,
) -> Result<Mutation, ClarifyError> {
    act_noted(store, now, id, action, by, &Map::new())
}

/// [`act_as`] whose entry carries `noted` fields too (a resolution's `supersedes`).
pub fn act_noted<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    action: &Action,
    by: Option<&Attribution>,
    noted: &Map<String, Value>,
) -> Result<Mutation, ClarifyError> {
    let config = store.load_config()?;
    let parsed = action.validate(id, &config)?;
    store.read_statuses()?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    // No ledger, no update: a missing issue must not leave anything behind.
    let ledger = store.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let actor = actor_name(action);
    // The entry's author is the given actor, or (none given) one of the record's
    // participants or a human: the keys of all of them.
    let given = match action {
        Action::Answer { from, .. }
        | Action::FollowUp { from, .. }
        | Action::AnswerValue { from, .. } => Some(from.as_str()),
        Action::Resolve { from, .. }
        | Action::Escalate { from, .. }
        | Action::Abandon { from, .. }
        | Action::ResolveValue { from, .. } => from.as_deref(),
    };
    let record = ledger.find(id);
    let authors = match given {
        Some(from) => vec![from],
        None => vec![
            record.map_or("", |r| r.from.as_str()),
            record.map_or("", |r| r.to.as_str()),
            "human",
        ],
    };
    let signers = crate::store::keys::signers_for(store, &authors)?;
    let applied = store.update_ledger(parsed.issue, &config, &actor, |current| {
        let ledger = current.ok_or_else(not_found)?;
        let written = agentx_clarify_core::ops::Written {
            by,
            noted: noted.clone(),
        };
        let applied = ops_noted(&ledger, id, action, &config, now, &signers, written)?;
        Ok((Some(applied.ledger.clone()), applied))
    })?;
    finish(store, &config, now, applied, &actor, &signers)
}

/// A person's decision (docs/protocol.md §23): resolve an escalated record, or take any other open one
/// (an escalation `taken by <name>`) and resolve it, in one ledger update.
pub fn decide<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    message: Option<String>,
    value: Option<serde_json::Value>,
    by: &Attribution,
) -> Result<Mutation, ClarifyError> {
    let probe = Action::Resolve {
        from: None,
        message: message.clone(),
    };
    decided(store, now, id, &probe, |ledger, config, signers| {
        decide_op(
            ledger,
            id,
            agentx_clarify_core::ops::Verdict {
                message: message.clone(),
                value: value.clone(),
            },
            config,
            now,
            signers,
            by,
        )
    })
}

/// A person's abandonment (GitHub Mode's `/abandon`, docs/protocol.md §26): as [`decide`], an
/// open record that is not escalated is taken first, in the same ledger update.
pub fn decide_abandon<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    message: Option<String>,
    by: &Attribution,
) -> Result<Mutation, ClarifyError> {
    let probe = Action::Abandon {
        from: None,
        message: message.clone(),
    };
    decided(store, now, id, &probe, |ledger, config, signers| {
        agentx_clarify_core::ops::decide_abandon(
            ledger,
            id,
            message.clone(),
            config,
            now,
            signers,
            by,
        )
    })
}

/// The rhythm of a person's decision: `probe` checks the input, `apply` decides on the ledger
/// under its update (it may run again on a retry, so it is pure), `human` signs.
fn decided<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    probe: &Action,
    apply: impl Fn(&agentx_clarify_core::Ledger, &Config, &Signers) -> Result<Applied, ClarifyError>,
) -> Result<Mutation, ClarifyError> {
    let config = store.load_config()?;
    let parsed = probe.validate(id, &config)?;
    store.read_statuses()?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    if store.read_ledger(parsed.issue)?.is_none() {
        return Err(not_found());
    }
    let signers = crate::store::keys::signers_for(store, &["human"])?;
    let applied = store.update_ledger(parsed.issue, &config, "human", |current| {
        let ledger = current.ok_or_else(not_found)?;
        let applied = apply(&ledger, &config, &signers)?;
        Ok((Some(applied.ledger.clone()), applied))
    })?;
    finish(store, &config, now, applied, "human", &signers)
}

/// Who an action is written by, for lock files (the core decides the entry's author).
fn actor_name(action: &Action) -> String {
    match action {
        Action::Answer { from, .. }
        | Action::FollowUp { from, .. }
        | Action::AnswerValue { from, .. } => from.clone(),
        Action::Resolve { from, .. }
        | Action::Escalate { from, .. }
        | Action::Abandon { from, .. }
        | Action::ResolveValue { from, .. } => {
            from.clone().unwrap_or_else(|| String::from("agentx"))
        }
    }
}

/// After a ledger write of `issue`: the statuses take its events in their own update; a
/// failure is a warning (the write stands). Returns the statuses as written (`None`: no
/// events, or the update failed).
pub(crate) fn statuses_after<S: Store>(
    store: &S,
    config: &Config,
    actor: &str,
    issue: u32,
    events: &[Event],
    warnings: &mut Vec<String>,
) -> Option<Statuses> {
    if events.is_empty() {
        return None;
    }
    let updated = store.update_statuses(config, actor, |statuses| {
        apply_events(statuses, events);
        Ok(statuses.clone())
    });
    match updated {
        Ok(written) => Some(written),
        Err(e) => {
            warnings.push(format!(
                "{} was written, but {STATUS_FILE} was not updated: {e}",
                paths::ledger_name(issue)
            ));
            None
        }
    }
}

/// After a ledger write: the statuses (in their own update), then the monitor, then the
/// record as it now stands. The write has succeeded, so nothing here fails the command: what
/// goes wrong is a warning.
pub(crate) fn finish<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    applied: Applied,
    actor: &str,
    signers: &Signers,
) -> Result<Mutation, ClarifyError> {
    let mut warnings = Vec::new();
    let Applied {
        ledger,
        id,
        events: mut applied_events,
        idempotent,
        reused,
        error,
    } = applied;
    let issue = ledger.issue_number;
    let statuses = statuses_after(store, config, actor, issue, &applied_events, &mut warnings);
    // The record as this command wrote it; the ledger itself goes to the monitor.
    let written = ledger.find(&id).cloned();
    let monitor = monitor_after_held(store, config, now, ledger, signers, statuses, &mut warnings);
    // The follow-up monitor may have changed the record (escalated it, marked it stale): then
    // it is read back; otherwise it is as this command wrote it, and a ledger of hundreds of
    // records is not parsed once more for it.
    let reread = monitor.wrote.contains(&issue);
    let clarification = match reread.then(|| store.read_ledger(issue)) {
        None => written,
        Some(Ok(ledger)) => ledger.and_then(|l| l.find(&id).cloned()),
        Some(Err(e)) => {
            // The record as this command wrote it (the monitor's change, if any, is unseen).
            warnings.push(format!(
                "the record was written, but reading it back failed: {e}"
            ));
            written
        }
    };
    applied_events.extend(monitor.events.iter().cloned());
    Ok(Mutation {
        issue,
        id,
        clarification,
        events: applied_events,
        idempotent,
        reused,
        related: None,
        monitor,
        error,
        warnings,
    })
}
