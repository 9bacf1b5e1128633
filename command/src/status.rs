//! `hook start|finish` and `state`: facts from outside about an agent. They are recorded even
//! when the status table does not allow the transition (with a warning).

use agentx_clarify_core::agents::{set_status, AgentStatus, Statuses, DONE, WORKING};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Map, Value};

use crate::monitor::{monitor_after, MonitorRun};
use crate::store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    Start,
    Finish,
}

impl HookEvent {
    pub fn parse(text: &str) -> Option<HookEvent> {
        match text {
            "start" => Some(HookEvent::Start),
            "finish" => Some(HookEvent::Finish),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct HookOutcome {
    pub agent: String,
    pub written: AgentStatus,
    pub warning: Option<String>,
    pub monitor: MonitorRun,
    /// What failed after the status was written (the follow-up monitor): the hook still
    /// succeeded (docs/protocol.md §20).
    pub warnings: Vec<String>,
}

impl HookOutcome {
    pub fn to_json(&self) -> Value {
        with_warning(
            json!({"ok": true, "agent": self.written, "monitor": self.monitor.report,
                "events": self.monitor.events, "warnings": self.warnings}),
            self.warning.as_deref(),
        )
    }
}

#[derive(Clone, Debug)]
pub struct StateOutcome {
    pub statuses: Statuses,
    pub warning: Option<String>,
}

impl StateOutcome {
    pub fn to_json(&self) -> Value {
        with_warning(
            json!({"ok": true, "statuses": self.statuses}),
            self.warning.as_deref(),
        )
    }
}

/// A status-table warning goes beside the result (the CLI also prints it on stderr).
fn with_warning(mut v: Value, warning: Option<&str>) -> Value {
    if let (Some(w), Value::Object(map)) = (warning, &mut v) {
        let map: &mut Map<String, Value> = map;
        map.insert("warning".into(), Value::from(w));
    }
    v
}

/// `hook start` sets `working`, `hook finish` sets `done`; then the monitor runs.
pub fn hook<S: Store>(
    store: &S,
    now: i64,
    event: HookEvent,
    agent: &str,
    issue: Option<u32>,
) -> Result<HookOutcome, ClarifyError> {
    let config = store.load_config()?;
    let status = match event {
        HookEvent::Start => WORKING,
        HookEvent::Finish => DONE,
    };
    agentx_clarify_core::names::check_agent(agent)?;
    let (written, warning) = store.update_statuses(&config, agent, |s| {
        set_status(s, agent, status, issue.map(u64::from), now)
    })?;
    let mut warnings = Vec::new();
    let monitor = monitor_after(store, &config, now, None, &mut warnings);
    Ok(HookOutcome {
        agent: agent.to_owned(),
        written,
        warning,
        monitor,
        warnings,
    })
}

/// `agentx state --agent A --status S [--issue N]`.
pub fn state_set<S: Store>(
    store: &S,
    now: i64,
    agent: &str,
    status: &str,
    issue: Option<u32>,
) -> Result<StateOutcome, ClarifyError> {
    let config = store.load_config()?;
    agentx_clarify_core::names::check_agent(agent)?;
    store.update_statuses(&config, agent, |s| {
        let (_, warning) = set_status(s, agent, status, issue.map(u64::from), now)?;
        Ok(StateOutcome {
            statuses: s.clone(),
            warning,
        })
    })
}

/// `agentx state` with no arguments.
pub fn state_get<S: Store>(store: &S) -> Result<StateOutcome, ClarifyError> {
    Ok(StateOutcome {
        statuses: store.read_statuses()?,
        warning: None,
    })
}

/// The warning for an agent that no workflow step runs (a typo in `--agent`, `AGENTX_AGENT`
/// or `tokens new --agent`): it cannot ask anyone, and nobody's inbox shows it. `None` when
/// a step runs it, or the workflows cannot be read (the command that needs them says why).
/// Said the same way by `agentx mcp` at launch and by `agentx tokens new` for `/mcp`.
pub fn no_step_warning<S: crate::store::Files>(store: &S, agent: &str) -> Option<String> {
    let workflows = store.load_workflows().ok()?;
    let names: Vec<String> = workflows.names().map(str::to_owned).collect();
    let mut agents: Vec<String> = Vec::new();
    for name in &names {
        if let Some(Ok(w)) = workflows.get(name) {
            agents.extend(w.steps.iter().map(|s| s.agent.clone()));
        }
    }
    if agents.iter().any(|a| a == agent) {
        return None;
    }
    agents.sort();
    agents.dedup();
    Some(format!(
        "agent '{agent}' has no step in any workflow ({}), so it cannot ask anyone; agents with a step: {}",
        names.join(", "),
        agents.join(", ")
    ))
}
