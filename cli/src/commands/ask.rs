//! `agentx clarify ask`.

use agentx_clarify_core::{request, ClarifyError, NewRequest};

use super::{finish, Mutation};
use crate::store::Workspace;

/// Opens a clarification: validate, lock the issue's ledger, decide, write, then statuses and
/// the monitor. An idempotent replay writes nothing but still runs the monitor.
pub fn ask(ws: &Workspace, now: i64, req: &NewRequest) -> Result<Mutation, ClarifyError> {
    let config = ws.load_config()?;
    let issue = req.validate(&config)?;
    // A corrupt status file stops the command before anything is written.
    ws.read_statuses()?;
    let workflows = ws.load_workflows()?;
    // A refused request writes nothing, not even the state directories the lock needs: while
    // they do not exist there is no ledger, so the decision can be taken before creating them.
    if !ws.clarifications_dir().is_dir() {
        request(None, req, &config, &workflows, now)?;
    }
    let applied = ws.update_ledger(issue, &config, &req.from, |current| {
        let applied = request(current.as_ref(), req, &config, &workflows, now)?;
        let write = (!applied.idempotent).then(|| applied.ledger.clone());
        Ok((write, applied))
    })?;
    finish(ws, &config, now, applied, &req.from)
}
