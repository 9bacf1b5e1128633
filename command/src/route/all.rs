//! `route --all [--jobs N]` and `monitor --route`: every pending or stale record whose target
//! has a runner and no live lease (and whose question is not waiting on one it asked back),
//! routed by `jobs` workers at once. Records another router holds are skipped silently; one
//! follow-up monitor runs at the end.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use agentx_clarify_core::routing::awaiting_reply;
use agentx_clarify_core::{ClarifyError, Config, Event};
use serde_json::{json, Value};

use super::{routable, route, Clock, Routed, Runner};
use crate::monitor::{monitor_after, MonitorRun};
use crate::store::Scope;
use crate::store::Store;

/// A record left out of a batch, and why.
pub type Skipped = (String, String);

/// What a batch of routings did.
#[derive(Debug, Default)]
pub struct RoutedAll {
    /// In the order of the ledgers (ascending issue, then ledger order).
    pub routed: Vec<Routed>,
    /// `(id, why)`: held by another router, answered meanwhile, or waiting on its reply.
    pub skipped: Vec<Skipped>,
    /// `(id, error)`: routings that could not run or write (agent errors are in `routed`).
    pub failed: Vec<(String, ClarifyError)>,
    pub monitor: MonitorRun,
    /// What failed after a decision was written (docs/protocol.md §20), each routing's and the monitor's.
    pub warnings: Vec<String>,
}

impl RoutedAll {
    /// How many routed agents failed (their records were escalated).
    pub fn agent_errors(&self) -> usize {
        self.routed.iter().filter(|r| r.error.is_some()).count()
    }

    /// The batch's error: `AGENT_ERROR` (the first failed agent's, with the count) when an
    /// agent failed, else the first failure.
    pub fn error(&self) -> Option<ClarifyError> {
        let failed = self.agent_errors();
        let first = self.routed.iter().find_map(|r| r.error.clone());
        if let Some(ClarifyError::AgentError { id, cause }) = first {
            let cause = if failed > 1 {
                format!(
                    "{cause}; {failed} of {} routed agents failed",
                    self.routed.len()
                )
            } else {
                cause
            };
            return Some(ClarifyError::AgentError { id, cause });
        }
        self.failed.first().map(|(_, e)| e.clone())
    }

    /// `agentx clarify route --all --json`.
    pub fn to_json(&self) -> Value {
        let routed: Vec<Value> = self
            .routed
            .iter()
            .map(|r| {
                let mut v = json!({
                    "id": r.id,
                    "outcome": r.outcome,
                    "log": r.run.get("log").cloned().unwrap_or(Value::Null),
                });
                if let (Value::Object(m), Some(a)) = (&mut v, &r.asked_back) {
                    m.insert("askedBack".into(), Value::from(a.id.as_str()));
                }
                if let (Value::Object(m), Some(e)) = (&mut v, &r.error) {
                    m.insert(
                        "error".into(),
                        agentx_clarify_core::envelope::error_value(e),
                    );
                }
                v
            })
            .collect();
        let events: Vec<&Event> = self
            .routed
            .iter()
            .flat_map(|r| r.events.iter())
            .chain(self.monitor.events.iter())
            .collect();
        let mut out = json!({
            "ok": self.error().is_none(),
            "routed": routed,
            "skipped": self.skipped.iter().map(|(id, why)| json!({"id": id, "reason": why})).collect::<Vec<_>>(),
            "errors": self.failed.iter().map(|(id, e)| json!({"id": id, "code": e.code(), "message": e.to_string()})).collect::<Vec<_>>(),
            "events": events,
            "monitor": self.monitor.report,
            "warnings": self.warnings,
        });
        if let (Value::Object(m), Some(e)) = (&mut out, self.error()) {
            m.insert(
                "error".into(),
                agentx_clarify_core::envelope::error_value(&e),
            );
        }
        out
    }
}

/// Routes every routable record of the workspace, `jobs` at a time.
pub fn route_all<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    clock: Clock<'_>,
    jobs: usize,
) -> Result<RoutedAll, ClarifyError> {
    route_some(store, runner, clock, jobs, None)
}

/// Routes those of `ids` that are routable (`monitor --route`: the records it retried).
pub fn route_ids<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    clock: Clock<'_>,
    jobs: usize,
    ids: &[String],
) -> Result<RoutedAll, ClarifyError> {
    if ids.is_empty() {
        return Ok(RoutedAll::default());
    }
    let only: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    route_some(store, runner, clock, jobs, Some(&only))
}

/// What `monitor --route` did: the monitor pass, and the routings of what it retried (`None`:
/// routing was not wanted).
#[derive(Debug, Default)]
pub struct MonitorRouted {
    pub run: MonitorRun,
    pub routed: Option<RoutedAll>,
}

impl MonitorRouted {
    /// The monitor's report, with what it routed under `routed` when it routed.
    pub fn to_json(&self) -> Value {
        let mut out = self.run.to_json();
        if let (Value::Object(o), Some(routed)) = (&mut out, &self.routed) {
            o.insert("routed".into(), routed.to_json());
        }
        out
    }
}

/// The monitor with routing (`agentx clarify monitor --route`, the server's worker): one pass
/// at `clock()`, then — when `route` says so (`None`: `[clarify] route_on_retry`) and it is
/// not a dry run — the records it retried, routed `jobs` at a time.
pub fn monitor_routed<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    clock: Clock<'_>,
    dry_run: bool,
    route: Option<bool>,
    jobs: usize,
) -> Result<MonitorRouted, ClarifyError> {
    let config = store.load_runner_config()?;
    let wanted = route.unwrap_or(config.route_on_retry) && !dry_run;
    let run = crate::monitor::run_monitor(store, &config, clock(), dry_run, Scope::Monitor)?;
    let routed = if wanted {
        Some(route_ids(store, runner, clock, jobs, &run.report.retried)?)
    } else {
        None
    };
    Ok(MonitorRouted { run, routed })
}

fn route_some<S: Store + Sync>(
    store: &S,
    runner: &(dyn Runner + Sync),
    clock: Clock<'_>,
    jobs: usize,
    only: Option<&BTreeSet<&str>>,
) -> Result<RoutedAll, ClarifyError> {
    let config = store.load_runner_config()?;
    let (ids, mut skipped) = candidates(store, &config, only)?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Routed, ClarifyError>)>> = Mutex::new(Vec::new());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(id) = ids.get(i) else { break };
        let result = route(store, runner, id, clock, false);
        results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((i, result));
    };
    let workers = jobs.clamp(1, ids.len().max(1));
    std::thread::scope(|scope| {
        // Where threads cannot start (wasm), this thread does all the work.
        for _ in 1..workers {
            if std::thread::Builder::new()
                .spawn_scoped(scope, work)
                .is_err()
            {
                break;
            }
        }
        work();
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    let mut all = RoutedAll::default();
    for (i, result) in results {
        let id = ids.get(i).cloned().unwrap_or_default();
        match result {
            Ok(routed) => all.routed.push(routed),
            Err(ClarifyError::RoutingInProgress { holder, .. }) => {
                skipped.push((id, format!("being routed by {holder}")));
            }
            Err(ClarifyError::InvalidTransition { status, .. }) => {
                skipped.push((id, format!("{status} meanwhile")));
            }
            Err(e) => all.failed.push((id, e)),
        }
    }
    all.skipped = skipped;
    all.warnings = all.routed.iter().flat_map(|r| r.warnings.clone()).collect();
    if !all.routed.is_empty() {
        all.monitor = monitor_after(store, &config, clock(), None, &mut all.warnings);
    }
    Ok(all)
}

/// The records to route, in ledger order, and the ones left out on purpose (a live lease
/// elsewhere, or a question asked back still open). Records without a runner are not
/// candidates at all.
fn candidates<S: Store>(
    store: &S,
    config: &Config,
    only: Option<&BTreeSet<&str>>,
) -> Result<(Vec<String>, Vec<Skipped>), ClarifyError> {
    let found = store.scan(Scope::All, |read| {
        let mut ids = Vec::new();
        let mut waiting = Vec::new();
        if let Ok(ledger) = &read.ledger {
            let awaiting = awaiting_reply(ledger);
            for r in &ledger.clarifications {
                let wanted = only.is_none_or(|o| o.contains(r.id.as_str()));
                if !wanted || routable(r).is_err() || config.agents.for_agent(&r.to).is_none() {
                    continue;
                }
                if awaiting.contains(&r.id.as_str()) {
                    waiting.push(r.id.clone());
                } else {
                    ids.push(r.id.clone());
                }
            }
        }
        (ids, waiting)
    })?;
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    for (found, waiting) in found {
        for id in waiting {
            skipped.push((id, String::from("waits on the question it asked back")));
        }
        for id in found {
            if store.lease_held(&id) {
                skipped.push((id, String::from("being routed elsewhere")));
            } else {
                ids.push(id);
            }
        }
    }
    Ok((ids, skipped))
}
