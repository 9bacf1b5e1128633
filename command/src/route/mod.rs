//! Routing (docs/protocol.md §14.2): the hub runs the target agent of a pending record and brings its
//! answer back. Written once here, generic over the store (ledgers, leases, run logs) and
//! over the [`Runner`] that starts processes — the shells pass the `runner` crate's; this
//! crate starts nothing and builds for wasm32.
//!
//! Steps of [`route`]: read the record (pending or stale) and its runner; take the routing
//! lease; build the prompt; run — **no ledger lock is held meanwhile**; interpret the output;
//! under the ledger's update, re-read and decide (the core's `routing::decide`); release the
//! lease; statuses, follow-up monitor, run log.

mod all;
mod chat;
mod log;
mod views;

use agentx_clarify_core::names::{ClarificationId, AGENT_X};
use agentx_clarify_core::ops::{allowed_ops, who_may, Applied, Op};
use agentx_clarify_core::routing::{
    build_prompt, decide, interpret, replies, Decision, Interpretation, Invocation, Outcome,
    PromptInput, RunOf, RunResult,
};
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::{ClarifyError, Config, Event, EventType, Ledger, Record, Workflows};
use serde_json::{json, Map, Value};

use crate::monitor::{monitor_after, MonitorRun};
use crate::mutation::finish;
use crate::store::leases::{LeaseGuard, LeaseTake};
use crate::store::Store;

pub use all::{monitor_routed, route_all, route_ids, MonitorRouted, RoutedAll};
pub use chat::{chat_prompt, chat_reply, ChatReply};
pub use views::{parse_run, route_outcome, route_prompt, route_runner, PromptView};

/// Starts the agent CLI of one invocation (the shells: the `runner` crate's process runner).
pub trait Runner {
    /// Runs `invocation` with `prompt` bound and returns how it ended. Never fails: a program
    /// that cannot be started is a result with `spawn_error`, an agent error for the caller.
    fn run(&self, invocation: &Invocation, prompt: &str) -> RunResult;

    /// [`Runner::run`] for one record: a runner that can pass the record along (an A2A
    /// agent gets its id and issue as message metadata, docs/protocol.md §27) overrides this.
    fn run_for(&self, invocation: &Invocation, prompt: &str, _record: &RunFor<'_>) -> RunResult {
        self.run(invocation, prompt)
    }

    /// Why `invocation`'s program cannot be started (not found, not executable), checked
    /// before anything is written: a configuration mistake must not burn the question
    /// (`RUNNER_UNAVAILABLE`). `None`: it looks startable (a runner that cannot tell says so).
    fn unavailable(&self, _invocation: &Invocation) -> Option<String> {
        None
    }

    /// Checks, before anything is written, what only the shell can see (docs/protocol.md §31: the
    /// runner's working directory exists inside the workspace): a settings mistake is
    /// `CONFIG_INVALID` for the caller, never an agent error escalating the record.
    fn check(&self, _invocation: &Invocation) -> Result<(), ClarifyError> {
        Ok(())
    }
}

/// The record a run is for.
#[derive(Clone, Copy, Debug)]
pub struct RunFor<'r> {
    pub issue: u32,
    pub id: &'r str,
    pub round: u32,
}

/// A reading of the clock (epoch ms), taken when each step happens: a run takes time.
pub type Clock<'c> = &'c (dyn Fn() -> i64 + Sync);

/// Extra time a lease lives beyond the runner's timeout (docs/protocol.md §14.2 step 2).
pub const LEASE_MARGIN_MS: u64 = 30_000;

/// What one routing did.
#[derive(Clone, Debug)]
pub struct Routed {
    pub issue: u32,
    pub id: String,
    pub outcome: Outcome,
    /// The record as it now stands.
    pub clarification: Option<Record>,
    /// The question the agent asked back (a new record), as it now stands.
    pub asked_back: Option<Record>,
    /// `clarification-routed`, the decision's events, then the monitor's.
    pub events: Vec<Event>,
    /// The run (no stdout/stderr: those are in the run log).
    pub run: Value,
    pub monitor: MonitorRun,
    /// `AGENT_ERROR` when the agent failed (the record was escalated).
    pub error: Option<ClarifyError>,
    /// What failed after the decision was written (docs/protocol.md §20): the routing still succeeded.
    pub warnings: Vec<String>,
}

impl Routed {
    /// `agentx clarify route --json`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("ok".into(), Value::Bool(self.error.is_none()));
        if let Some(e) = &self.error {
            out.insert(
                "error".into(),
                agentx_clarify_core::envelope::error_value(e),
            );
        }
        out.insert("outcome".into(), json!(self.outcome));
        out.insert(
            "clarification".into(),
            record_json(self.issue, self.clarification.as_ref()),
        );
        if self.asked_back.is_some() {
            out.insert(
                "askedBack".into(),
                record_json(self.issue, self.asked_back.as_ref()),
            );
        }
        out.insert("events".into(), json!(self.events));
        out.insert("run".into(), self.run.clone());
        out.insert("monitor".into(), json!(self.monitor.report));
        out.insert("warnings".into(), json!(self.warnings));
        Value::Object(out)
    }
}

fn record_json(issue: u32, record: Option<&Record>) -> Value {
    record.map_or(Value::Null, |r| r.to_output(issue))
}

/// A record ready to route: what [`check`] found.
struct Target {
    issue: u32,
    ledger: Ledger,
    invocation: Invocation,
}

/// Step 1 and the runner: the record must be pending or stale (answerable: a legacy record
/// without a thread is not), and its target needs a runner. `persona` replaces the persona
/// file's text when given (`route --persona`, the `routePrompt` op).
fn check<S: Store>(
    store: &S,
    config: &Config,
    id: &str,
    persona: Option<&str>,
) -> Result<Target, ClarifyError> {
    let (issue, ledger) = ledger_of(store, id)?;
    let record = find(&ledger, id)?;
    routable(record)?;
    let target = record.to.clone();
    let spec = config
        .agents
        .for_agent(&target)
        .ok_or_else(|| ClarifyError::NoRunner {
            agent: target.clone(),
        })?;
    let persona_text = match persona {
        Some(text) => Some(text.to_owned()),
        None => {
            let file = spec.persona_file(&target);
            let text = store.read_persona(&file.path)?;
            if text.is_none() && file.required {
                return Err(ClarifyError::ConfigInvalid {
                    file: crate::store::paths::CONFIG.trim_end_matches('/').to_owned(),
                    location: None,
                    message: format!(
                        "the persona file '{}' of the runner of '{target}' does not exist",
                        file.path
                    ),
                });
            }
            text
        }
    };
    let invocation = Invocation::new(spec, &target, persona_text.as_deref());
    Ok(Target {
        issue,
        ledger,
        invocation,
    })
}

/// The issue of record `id` and its ledger (`NOT_FOUND` without one).
fn ledger_of<S: Store>(store: &S, id: &str) -> Result<(u32, Ledger), ClarifyError> {
    let issue = ClarificationId::parse(id)?.issue;
    let ledger = store
        .read_ledger(issue)?
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    Ok((issue, ledger))
}

/// Record `id` of `ledger` (`NOT_FOUND` without it).
fn find<'l>(ledger: &'l Ledger, id: &str) -> Result<&'l Record, ClarifyError> {
    ledger
        .find(id)
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })
}

/// Routable now: the target may answer it (pending or stale, with a thread).
fn routable(record: &Record) -> Result<(), ClarifyError> {
    let status = record.current_status();
    let legacy = record.is_legacy_empty();
    if who_may(status, Op::Answer, legacy).is_some() {
        return Ok(());
    }
    Err(ClarifyError::InvalidTransition {
        op: String::from("route"),
        id: record.id.clone(),
        status: status.as_str().to_owned(),
        allowed: allowed_ops(status, legacy),
    })
}

/// The prompt of `id` on `ledger` for `invocation`.
fn prompt_for(
    ledger: &Ledger,
    record: &Record,
    invocation: &Invocation,
    config: &Config,
) -> String {
    let asked = replies(ledger, &record.id);
    build_prompt(&PromptInput {
        record,
        issue: ledger.issue_number,
        workflow: ledger.workflow.as_deref(),
        persona: invocation.prompt_persona.as_deref(),
        max_answer_chars: config.max_body_chars,
        replies: &asked,
    })
}

/// Routes record `id` once (docs/protocol.md §14.2 steps 1–7). A live lease held elsewhere is
/// `ROUTING_IN_PROGRESS`; an agent error comes back as a [`Routed`] with `error` set (the
/// escalation is written). With `follow_up` false the monitor is left to the caller
/// (`route --all` runs it once at the end).
pub fn route<S: Store>(
    store: &S,
    runner: &dyn Runner,
    id: &str,
    clock: Clock<'_>,
    follow_up: bool,
) -> Result<Routed, ClarifyError> {
    let config = store.load_runner_config()?;
    // A corrupt status file stops the command before anything runs.
    store.read_statuses()?;
    let workflows = store.load_workflows()?;
    let target = check(store, &config, id, None)?;
    runner.check(&target.invocation)?;
    if let Some(why) = runner.unavailable(&target.invocation) {
        return Err(ClarifyError::RunnerUnavailable {
            agent: target.invocation.agent.clone(),
            why,
        });
    }
    // What routing writes is the target's (an answer, a question asked back) or the hub's
    // (an escalation): only those keys are parsed, as for any write.
    let target_agent = find(&target.ledger, id)?.to.clone();
    let signers = crate::store::keys::signers_for(store, &[target_agent.as_str()])?;
    let ttl = u64::from(target.invocation.timeout_seconds) * 1000 + LEASE_MARGIN_MS;
    let lease = lease_for(store, id, ttl)?;
    // Read again under the lease: a router that finished just before we took it may have
    // answered the record.
    let ledger = store
        .read_ledger(target.issue)?
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let record = ledger
        .find(id)
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    routable(record)?;
    let round = record.folded_round();
    let invocation = &target.invocation;
    let prompt = prompt_for(&ledger, record, invocation, &config);

    let started = clock();
    let run_for = RunFor {
        issue: target.issue,
        id,
        round,
    };
    let result = runner.run_for(invocation, &prompt, &run_for);
    let reading = agentx_clarify_core::routing::fit_to_kind(
        interpret(&result, &invocation.output, config.max_body_chars),
        record,
    );
    let now = clock().max(started);
    let (mut events, cause) = run_events(target.issue, record, &reading, started, now);
    let rules = Rules {
        config: &config,
        workflows: &workflows,
        signers: &signers,
    };
    let decided = decide_locked(store, rules, id, round, &reading, now);
    lease.release();
    let logged = log::write(
        store,
        &log::RunLog {
            issue: target.issue,
            id,
            round,
            invocation,
            prompt: &prompt,
            result: &result,
            reading: &reading,
            outcome: decided
                .as_ref()
                .map(|d| d.outcome)
                .map_err(|e| e.to_string()),
        },
    );
    let decision = decided?;
    let summary = log::summary(invocation, &result, &reading, &logged);

    // The decision is written: from here on, what fails is a warning, not the routing's failure.
    let mut warnings = Vec::new();
    let (monitor, mut written) = follow_through(
        store,
        rules,
        now,
        decision.applied,
        follow_up,
        target.issue,
        &mut warnings,
    )?;
    events.append(&mut written);
    let after = read_back(store, target.issue, &mut warnings);
    let find = |id: &str| after.as_ref().and_then(|l| l.find(id)).cloned();
    Ok(Routed {
        issue: target.issue,
        id: id.to_owned(),
        outcome: decision.outcome,
        clarification: find(id),
        asked_back: decision.asked.as_deref().and_then(find),
        events,
        run: summary,
        monitor,
        error: agent_error(id, decision.outcome, cause),
        warnings,
    })
}

/// Takes record `id`'s routing lease for `ttl` ms; one held elsewhere is
/// `ROUTING_IN_PROGRESS` naming its holder.
fn lease_for<'s, S: Store>(
    store: &'s S,
    id: &str,
    ttl: u64,
) -> Result<LeaseGuard<'s, S>, ClarifyError> {
    match store.take_lease(id, ttl)? {
        LeaseTake::Taken(lease) => Ok(LeaseGuard::new(store, lease)),
        LeaseTake::Held { holder } => Err(ClarifyError::RoutingInProgress {
            id: id.to_owned(),
            holder,
        }),
    }
}

/// After the decision is written: the monitor's follow-up (when asked) or just the agents'
/// statuses, with the events they add. What fails here is a warning, not the routing's
/// failure.
fn follow_through<S: Store>(
    store: &S,
    rules: Rules<'_>,
    now: i64,
    applied: Option<Applied>,
    follow_up: bool,
    issue: u32,
    warnings: &mut Vec<String>,
) -> Result<(MonitorRun, Vec<Event>), ClarifyError> {
    let config = rules.config;
    Ok(match applied {
        Some(applied) if follow_up => {
            let m = finish(store, config, now, applied, AGENT_X, rules.signers)?;
            warnings.extend(m.warnings);
            (m.monitor, m.events)
        }
        Some(applied) => {
            let events = applied.events.clone();
            if let Err(e) = apply_statuses(store, config, &events) {
                warnings.push(format!(
                    "the routing was written, but the agents' statuses were not updated: {e}"
                ));
            }
            (MonitorRun::default(), events)
        }
        None if follow_up => {
            let m = monitor_after(store, config, now, Some(issue), warnings);
            let events = m.events.clone();
            (m, events)
        }
        None => (MonitorRun::default(), Vec::new()),
    })
}

/// The ledger as routing left it; a failed read is a warning (the routing is written).
fn read_back<S: Store>(store: &S, issue: u32, warnings: &mut Vec<String>) -> Option<Ledger> {
    match store.read_ledger(issue) {
        Ok(after) => after,
        Err(e) => {
            warnings.push(format!(
                "the routing was written, but reading it back failed: {e}"
            ));
            None
        }
    }
}

/// `clarification-routed` (at `started`) and, when the run is an agent error,
/// `clarification-route-failed` (at `now`), with the error's cause.
fn run_events(
    issue: u32,
    record: &Record,
    reading: &Interpretation,
    started: i64,
    now: i64,
) -> (Vec<Event>, Option<String>) {
    let mut events = vec![Event::routing(
        EventType::Routed,
        issue,
        record,
        started,
        None,
    )];
    let cause = match reading {
        Interpretation::AgentError { cause } => Some(cause.clone()),
        _ => None,
    };
    if let Some(cause) = &cause {
        events.push(Event::routing(
            EventType::RouteFailed,
            issue,
            record,
            now,
            Some(cause.clone()),
        ));
    }
    (events, cause)
}

/// Step 6: under the ledger's update, re-read and decide (nothing written when superseded).
fn decide_locked<S: Store>(
    store: &S,
    rules: Rules<'_>,
    id: &str,
    round: u32,
    reading: &Interpretation,
    now: i64,
) -> Result<Decision, ClarifyError> {
    let issue = ClarificationId::parse(id)?.issue;
    store.update_ledger(issue, rules.config, AGENT_X, |current| {
        let d = decide(
            current.as_ref(),
            RunOf {
                id,
                round,
                run: reading,
            },
            rules.config,
            rules.workflows,
            now,
            rules.signers,
        )?;
        let write = d.applied.as_ref().map(|a| a.ledger.clone());
        Ok((write, d))
    })
}

/// What a routing decision is taken under: the settings, the workflows and the keys that sign.
#[derive(Clone, Copy)]
pub(crate) struct Rules<'a> {
    pub config: &'a Config,
    pub workflows: &'a Workflows,
    pub signers: &'a Signers,
}

/// `AGENT_ERROR` when the agent failed and the record was escalated for it.
fn agent_error(id: &str, outcome: Outcome, cause: Option<String>) -> Option<ClarifyError> {
    (outcome == Outcome::Escalated)
        .then_some(cause)
        .flatten()
        .map(|cause| ClarifyError::AgentError {
            id: id.to_owned(),
            cause,
        })
}

/// The statuses take a write's events (as after any command).
fn apply_statuses<S: Store>(
    store: &S,
    config: &Config,
    events: &[Event],
) -> Result<(), ClarifyError> {
    if events.is_empty() {
        return Ok(());
    }
    store.update_statuses(config, AGENT_X, |statuses| {
        agentx_clarify_core::agents::apply_events(statuses, events);
        Ok(())
    })
}
