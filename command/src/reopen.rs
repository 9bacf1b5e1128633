//! `clarify reopen <id> [-m TEXT]` (actor `human` only): an escalated record goes back to its
//! target, pending in the same round with its SLA clock restarted (docs/protocol.md, "Sending a
//! question back"). The shells route it again when asked (`--route`); this is also what an
//! inbox's "route again" does.

use agentx_clarify_core::names::HUMAN;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::people::check_decider;
use agentx_clarify_core::ClarifyError;

use crate::mutation::{finish, Mutation};
use crate::store::Store;

/// Reopens escalated record `id` as `from` (default `human`), then the statuses and the
/// follow-up monitor, as after any mutating command.
pub fn reopen<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    from: Option<&str>,
    message: Option<&str>,
) -> Result<Mutation, ClarifyError> {
    reopen_by(store, now, id, from, message, None)
}

/// [`reopen`] by a person a door knows (`by`): when the record names its deciders, only one
/// of them may send it back (docs/protocol.md §37).
pub fn reopen_by<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    from: Option<&str>,
    message: Option<&str>,
    by: Option<&Attribution>,
) -> Result<Mutation, ClarifyError> {
    let config = store.load_config()?;
    let parsed = agentx_clarify_core::names::ClarificationId::parse(id)?;
    if let Some(m) = message {
        agentx_clarify_core::names::check_text("message", m, config.max_body_chars as usize)?;
    }
    store.read_statuses()?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    // No ledger, no update: a missing issue must not leave anything behind.
    store.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let actor = from.unwrap_or(agentx_clarify_core::names::HUMAN);
    let signers = crate::store::keys::signers_for(store, &[actor])?;
    let applied = store.update_ledger(parsed.issue, &config, actor, |current| {
        let ledger = current.ok_or_else(not_found)?;
        if let Some(record) = ledger.find(id).filter(|_| actor == HUMAN) {
            check_decider(record, by.map(|a| a.by.as_str()), "reopen")?;
        }
        let applied =
            agentx_clarify_core::ops::reopen(&ledger, id, from, message, &config, now, &signers)?;
        Ok((Some(applied.ledger.clone()), applied))
    })?;
    finish(store, &config, now, applied, actor, &signers)
}
