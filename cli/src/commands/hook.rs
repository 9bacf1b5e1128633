//! `agentx hook start|finish` and `agentx state`: facts from outside about an agent. They are
//! recorded even when the status table does not allow the transition (with a warning).

use agentx_clarify_core::agents::{set_status, AgentStatus, Statuses, DONE, WORKING};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use super::MonitorRun;
use crate::store::Workspace;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    Start,
    Finish,
}

#[derive(Clone, Debug)]
pub struct HookOutcome {
    pub agent: String,
    pub written: AgentStatus,
    pub warning: Option<String>,
    pub monitor: MonitorRun,
}

impl HookOutcome {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "agent": self.written, "monitor": self.monitor.report, "events": self.monitor.events})
    }
}

#[derive(Clone, Debug)]
pub struct StateOutcome {
    pub statuses: Statuses,
    pub warning: Option<String>,
}

impl StateOutcome {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "statuses": self.statuses})
    }
}

/// `hook start` sets `working`, `hook finish` sets `done`; then the monitor runs.
pub fn hook(
    ws: &Workspace,
    now: i64,
    event: HookEvent,
    agent: &str,
    issue: Option<u32>,
) -> Result<HookOutcome, ClarifyError> {
    let config = ws.load_config()?;
    let status = match event {
        HookEvent::Start => WORKING,
        HookEvent::Finish => DONE,
    };
    agentx_clarify_core::names::check_agent(agent)?;
    let (written, warning) = ws.update_statuses(&config, agent, |s| {
        set_status(s, agent, status, issue.map(u64::from), now)
    })?;
    let monitor = super::monitor_after(ws, &config, now);
    Ok(HookOutcome {
        agent: agent.to_owned(),
        written,
        warning,
        monitor,
    })
}

/// `agentx state --agent A --status S [--issue N]`.
pub fn state_set(
    ws: &Workspace,
    now: i64,
    agent: &str,
    status: &str,
    issue: Option<u32>,
) -> Result<StateOutcome, ClarifyError> {
    let config = ws.load_config()?;
    agentx_clarify_core::names::check_agent(agent)?;
    ws.update_statuses(&config, agent, |s| {
        let (_, warning) = set_status(s, agent, status, issue.map(u64::from), now)?;
        Ok(StateOutcome {
            statuses: s.clone(),
            warning,
        })
    })
}

/// `agentx state` with no arguments.
pub fn state_get(ws: &Workspace) -> Result<StateOutcome, ClarifyError> {
    Ok(StateOutcome {
        statuses: ws.read_statuses()?,
        warning: None,
    })
}
