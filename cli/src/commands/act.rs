//! `agentx clarify answer | follow-up | resolve | escalate | abandon`.

use agentx_clarify_core::{Action, ClarifyError};

use super::{finish, Mutation};
use crate::store::Workspace;

/// Applies an operation to an existing record. `MAX_ROUNDS_EXCEEDED` writes the escalation and
/// comes back as a [`Mutation`] with `error` set.
pub fn act(ws: &Workspace, now: i64, id: &str, action: &Action) -> Result<Mutation, ClarifyError> {
    let config = ws.load_config()?;
    let parsed = action.validate(id, &config)?;
    ws.read_statuses()?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    // No ledger, no lock: a missing issue must not leave files behind.
    ws.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let actor = actor_name(action);
    let applied = ws.update_ledger(parsed.issue, &config, &actor, |current| {
        let ledger = current.ok_or_else(not_found)?;
        let applied = agentx_clarify_core::act(&ledger, id, action, &config, now)?;
        Ok((Some(applied.ledger.clone()), applied))
    })?;
    finish(ws, &config, now, applied, &actor)
}

fn actor_name(action: &Action) -> String {
    match action {
        Action::Answer { from, .. } | Action::FollowUp { from, .. } => from.clone(),
        Action::Resolve { from, .. }
        | Action::Escalate { from, .. }
        | Action::Abandon { from, .. } => from.clone().unwrap_or_else(|| String::from("agentx")),
    }
}
