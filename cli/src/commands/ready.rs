//! `agentx ready`: the monitor, then one line per issue with a ledger.

use agentx_clarify_core::views::{ready as ready_view, ReadyIssue};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use super::{run_monitor_keeping_ledgers, MonitorRun};
use crate::store::Workspace;

#[derive(Clone, Debug)]
pub struct ReadyOutcome {
    pub issues: Vec<ReadyIssue>,
    pub monitor: MonitorRun,
}

impl ReadyOutcome {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "issues": self.issues, "monitor": self.monitor.report})
    }
}

/// `include_escalated`: see `views::ready`.
pub fn ready(
    ws: &Workspace,
    now: i64,
    include_escalated: bool,
) -> Result<ReadyOutcome, ClarifyError> {
    let config = ws.load_config()?;
    let (monitor, ledgers) = run_monitor_keeping_ledgers(ws, &config, now)?;
    Ok(ReadyOutcome {
        issues: ready_view(&ledgers, include_escalated),
        monitor,
    })
}
