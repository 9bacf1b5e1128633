//! How PostgreSQL keeps each kind of ledger (`agentx_clarify_command::store::ledgers`): the one
//! read–decide–write path (`state.rs`) is written once over [`PgKind`], which names what
//! differs between the kinds here. A clarification ledger is kept as rows — its head in
//! `agentx.documents`, one row per record in `agentx.records` (`ledgers.rs`), so a write moves
//! only the records that changed and this process caches what it wrote — while a delegation
//! ledger, small and rarely written, is kept whole; and each kind has its own queries for a
//! pass.

use std::borrow::Cow;

use agentx_clarify_command::store::ledgers::{
    read_by, read_bytes, Clarifications, Delegations, LedgerKind, Read,
};
use agentx_clarify_command::{paths, Scope};
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::delegations::{ALL_DELEGATIONS, DUE_DELEGATIONS, MARKED_DELEGATIONS};
use crate::ledgers::Stored;
use crate::update::{Held, Write};
use crate::{PgStore, ALL, FOLLOW_UP, FOLLOW_UP_EXCEPT, MARKED};

/// A kind of ledger as PostgreSQL keeps it.
pub(crate) trait PgKind: LedgerKind {
    /// Kept as rows, one per record: this process's cache holds what it wrote and read.
    const ROWS: bool;

    /// The ledger a stored document holds, as the file store would parse its file.
    fn from_stored(stored: &Stored, issue: u32) -> Result<Self::Ledger, ClarifyError>;

    /// The ledger a locked document holds.
    fn from_held(held: &Held, issue: u32) -> Result<Self::Ledger, ClarifyError>;

    /// How a decided ledger is written.
    fn write(ledger: Self::Ledger) -> Write;

    /// The pass over the ledgers of this kind that `scope` names.
    fn scan<R: Send>(
        store: &PgStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<Self::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError>;
}

impl PgKind for Clarifications {
    const ROWS: bool = true;

    fn from_stored(stored: &Stored, issue: u32) -> Result<Ledger, ClarifyError> {
        stored.ledger(&paths::ledger_name(issue), issue)
    }

    fn from_held(held: &Held, issue: u32) -> Result<Ledger, ClarifyError> {
        held.ledger(&paths::ledger_name(issue), issue)
            .map(Cow::into_owned)
    }

    fn write(ledger: Ledger) -> Write {
        Write::Ledger(ledger)
    }

    fn scan<R: Send>(
        store: &PgStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        let read = |n: u64, _: &str, stored: &Stored| {
            visit(match stored {
                Stored::Raw(body) => read_bytes::<Clarifications>(n, Ok(body)),
                Stored::Split { .. } => {
                    read_by::<Clarifications>(n, |file, issue| stored.ledger(file, issue))
                }
            })
        };
        match scope {
            Scope::All | Scope::Read => store.pass(ALL, &[], &read),
            // The index is written in the ledger's own transaction: it cannot be outdated, so
            // `clarify monitor` reads from it too.
            Scope::Monitor | Scope::MonitorDryRun => store.pass(MARKED, &[&String::new()], &read),
            Scope::FollowUp {
                written,
                held,
                now,
                candidates,
            } => {
                let written = written.map(paths::ledger_name).unwrap_or_default();
                let agents: Vec<&str> = candidates.iter().map(|c| c.agent.as_str()).collect();
                let since: Vec<i64> = candidates.iter().map(|c| c.since).collect();
                let except: Vec<Option<String>> = candidates
                    .iter()
                    .map(|c| c.except.map(|n| format!("issue-{n}.json")))
                    .collect();
                store.pass(
                    if held { FOLLOW_UP_EXCEPT } else { FOLLOW_UP },
                    &[&written, &now, &agents, &since, &except],
                    &read,
                )
            }
        }
    }
}

impl PgKind for Delegations {
    const ROWS: bool = false;

    fn from_stored(stored: &Stored, issue: u32) -> Result<DelegationLedger, ClarifyError> {
        let bytes = stored.to_bytes(&paths::ledger_name(issue), None)?;
        Delegations::parse_issue(issue, &bytes)
    }

    fn from_held(held: &Held, issue: u32) -> Result<DelegationLedger, ClarifyError> {
        Delegations::parse_issue(issue, &held.bytes())
    }

    fn write(ledger: DelegationLedger) -> Write {
        Write::Raw(Delegations::print(&ledger).into_bytes())
    }

    fn scan<R: Send>(
        store: &PgStore,
        scope: Scope<'_>,
        visit: impl Fn(Read<DelegationLedger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        let now;
        let (sql, params): (_, &[&(dyn postgres::types::ToSql + Sync)]) = match scope {
            Scope::All | Scope::Read => (ALL_DELEGATIONS, &[]),
            Scope::Monitor | Scope::MonitorDryRun => (MARKED_DELEGATIONS, &[]),
            Scope::FollowUp { now: at, .. } => {
                now = at;
                (DUE_DELEGATIONS, &[&now])
            }
        };
        store.pass(sql, params, &|n, name: &str, stored: &Stored| {
            visit(match stored {
                Stored::Raw(body) => read_bytes::<Delegations>(n, Ok(body)),
                Stored::Split { .. } => {
                    let bytes = stored.to_bytes(name, None);
                    read_bytes::<Delegations>(n, bytes.as_deref().map_err(Clone::clone))
                }
            })
        })
    }
}
