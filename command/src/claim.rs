//! `claim` and `handoff` (docs/protocol.md §37): a person takes an escalated record, or
//! hands it — or every record they hold, at the end of a shift — to another. The core
//! decides (`people::take`); this reads and writes the one ledger under its lock, then the
//! statuses and the monitor, as every mutating command does.

use agentx_clarify_core::config::Config;
use agentx_clarify_core::names::{ClarificationId, HUMAN};
use agentx_clarify_core::ops::Applied;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::people::{approve_decision, holder, take, PersonCall, Taking};
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::{ClarifyError, Ledger};
use serde_json::{json, Value};

use crate::mutation::{finish, Mutation};
use crate::store::Store;

/// The `via` of a person who names themselves (`--as`, `as`) on a door that signs nobody
/// in — the CLI, the Node addon, the wasm package: the same on each, so one vector writes
/// the same ledger through all of them, and the audit tells a self-named person from one a
/// server signed in (`web`, `github`, …).
pub const LOCAL_VIA: &str = "local";

/// Who acts: the person a server signed in (`by`), or the one a local door names (`as`,
/// with `via`). A server's person cannot act as someone else.
pub fn person(
    by: Option<&Attribution>,
    named: Option<&str>,
    via: &str,
) -> Result<Attribution, ClarifyError> {
    match (by, named) {
        (Some(a), Some(n)) if a.by != n => Err(ClarifyError::input(format!(
            "signed in as '{}', so `as` cannot name '{n}': a person acts as themselves",
            a.by
        ))),
        (Some(a), _) => Ok(a.clone()),
        (None, Some(n)) => Ok(Attribution {
            by: n.to_owned(),
            via: via.to_owned(),
            reference: None,
        }),
        (None, None) => Err(ClarifyError::input(
            "say who takes it: --as PERSON (the name .agentx/people.toml gives them)",
        )),
    }
}

/// `by` takes (`Taking::Claim`) or hands over (`Taking::Handoff`) escalated record `id`.
pub fn take_by<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    by: &Attribution,
    taking: Taking<'_>,
    message: Option<&str>,
) -> Result<Mutation, ClarifyError> {
    persons_write(store, now, id, |ledger, config, signers| {
        let call = PersonCall {
            id,
            by,
            config,
            now,
            signers,
        };
        take(ledger, call, taking, message)
    })
}

/// `by` approves a decision on escalated record `id` (docs/protocol.md §37): `message` and
/// `value` propose one; neither takes up the first proposed as written.
pub fn approve_by<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    by: &Attribution,
    message: Option<&str>,
    value: Option<&Value>,
) -> Result<Mutation, ClarifyError> {
    persons_write(store, now, id, |ledger, config, signers| {
        let call = PersonCall {
            id,
            by,
            config,
            now,
            signers,
        };
        approve_decision(ledger, call, message, value)
    })
}

/// A person's write on record `id` as `human`: the core's `decide` on the ledger as it is
/// under its lock (an idempotent answer writes nothing), then the statuses and the monitor.
fn persons_write<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    decide: impl Fn(&Ledger, &Config, &Signers) -> Result<Applied, ClarifyError>,
) -> Result<Mutation, ClarifyError> {
    let config = store.load_config()?;
    let parsed = ClarificationId::parse(id)?;
    store.read_statuses()?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    store.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let signers = crate::store::keys::signers_for(store, &[HUMAN])?;
    let applied = store.update_ledger(parsed.issue, &config, HUMAN, |current| {
        let ledger = current.ok_or_else(not_found)?;
        let applied = decide(&ledger, &config, &signers)?;
        let write = (!applied.idempotent).then(|| applied.ledger.clone());
        Ok((write, applied))
    })?;
    finish(store, &config, now, applied, HUMAN, &signers)
}

/// Applies a ladder step that has come (docs/protocol.md §37, `then`): its people are
/// assigned to the escalation too, under the ledger's lock on what it holds now. True when it
/// wrote (nothing when the record moved on meanwhile).
pub fn ladder_assign<S: Store>(
    store: &S,
    now: i64,
    due: &agentx_clarify_core::people::LadderDue,
) -> Result<bool, ClarifyError> {
    use agentx_clarify_core::names::MONITOR;
    let config = store.load_config()?;
    let signers = crate::store::keys::signers_for(store, &[MONITOR])?;
    let applied = store.update_ledger(due.issue, &config, MONITOR, |current| {
        let Some(ledger) = current else {
            return Err(ClarifyError::NotFound { id: due.id.clone() });
        };
        let applied =
            agentx_clarify_core::people::assign_more(&ledger, due, &config, now, &signers)?;
        let write = (!applied.idempotent).then(|| applied.ledger.clone());
        Ok((write, applied))
    })?;
    Ok(!applied.idempotent)
}

/// What a shift's handoff did: the records handed over, in id order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandedOff {
    pub ids: Vec<String>,
    pub to: String,
    pub warnings: Vec<String>,
}

impl HandedOff {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "handedOff": self.ids, "to": self.to, "warnings": self.warnings})
    }
}

/// Every escalated record `by` holds goes to `to` (`agentx clarify handoff --all --from
/// alice --to bob`). A ledger that cannot be read is a warning: the rest still go.
pub fn handoff_all<S: Store>(
    store: &S,
    now: i64,
    by: &Attribution,
    to: &str,
    message: Option<&str>,
) -> Result<HandedOff, ClarifyError> {
    let (ledgers, errors) = crate::query::read_all(store)?;
    let mut done = HandedOff {
        to: to.to_owned(),
        warnings: errors
            .iter()
            .map(|e| format!("{}: {}", e.file, e.message))
            .collect(),
        ..HandedOff::default()
    };
    let held = ledgers
        .iter()
        .flat_map(|l| &l.clarifications)
        .filter(|r| holder(r).is_some_and(|h| h.person == by.by));
    let ids: Vec<String> = held.map(|r| r.id.clone()).collect();
    for id in ids {
        let mutation = take_by(store, now, &id, by, Taking::Handoff { to }, message)?;
        done.warnings.extend(mutation.warnings);
        done.ids.push(id);
    }
    Ok(done)
}
