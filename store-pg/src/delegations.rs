//! Delegation ledgers in PostgreSQL (docs/protocol.md §18): documents of kind `delegations`, read and
//! updated exactly as clarification ledgers are — one transaction, the row locked
//! `FOR UPDATE`, never overwritten when it does not parse. `update_issue` (`signals ingest`)
//! locks the issue's clarification ledger, then its delegation ledger, and commits both in one
//! transaction, so an ingest is applied whole or not at all. Capability manifests stay in the
//! workspace's files, like the settings.

use agentx_clarify_command::paths;
use agentx_clarify_command::store_delegations::{
    delegation_read, parse_delegations, DelegationRead, DelegationStore, IssueWrite,
};
use agentx_clarify_command::Scope;
use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::{ClarifyError, Config, Ledger};

use crate::documents::{CLARIFICATIONS, DELEGATIONS};
use crate::ledgers::Stored;
use crate::update::{self, Write};
use crate::PgStore;

/// Every delegation ledger, ascending by issue.
const ALL_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' ORDER BY length(d.name), d.name"
);

/// The delegation ledgers with a row in `agentx.active` (an accepted delegation that can time
/// out, or a body that does not parse), ascending: the monitor's timeout phase reads only
/// these (the index is written in each document's own transaction, so it cannot be outdated).
const MARKED_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' AND d.name IN (SELECT name FROM agentx.active
        WHERE kind = 'delegations')
    ORDER BY length(d.name), d.name"
);

/// The delegation ledgers due by `$1` (an accepted delegation past its deadline, or a body
/// that does not parse), ascending: the timeout phase after a command reads only these
/// (docs/protocol.md §29), by the index on `due_ms`.
const DUE_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' AND d.name IN (SELECT name FROM agentx.active
        WHERE kind = 'delegations' AND due_ms <= $1)
    ORDER BY length(d.name), d.name"
);

/// A delegation ledger's body as stored (its rows of `agentx.active` follow from it:
/// `documents::rows_of`).
fn delegation_write(ledger: &DelegationLedger) -> Write {
    Write::Raw(ledger.to_pretty_json().into_bytes())
}

impl DelegationStore for PgStore {
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        self.read_bytes(DELEGATIONS, &paths::ledger_name(issue))?
            .map(|bytes| parse_delegations(issue, &bytes))
            .transpose()
    }

    fn update_delegations<T>(
        &self,
        issue: u32,
        config: &Config,
        _agent: &str,
        mut decide: impl FnMut(
            Option<DelegationLedger>,
        ) -> Result<(Option<DelegationLedger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_issue_document(DELEGATIONS, issue, config, |_, held| {
            let current = held
                .map(|h| parse_delegations(issue, &h.bytes()))
                .transpose()?;
            let (write, result) = decide(current)?;
            Ok((write.as_ref().map(delegation_write), result))
        })
    }

    fn scan_delegations(&self, scope: Scope<'_>) -> Result<Vec<DelegationRead>, ClarifyError> {
        let now;
        let (sql, params): (_, &[&(dyn postgres::types::ToSql + Sync)]) = match scope {
            Scope::All => (ALL_DELEGATIONS, &[]),
            Scope::Monitor => (MARKED_DELEGATIONS, &[]),
            Scope::FollowUp { now: at, .. } => {
                now = at;
                (DUE_DELEGATIONS, &[&now])
            }
        };
        self.pass(
            sql,
            params,
            &|n, name: &str, stored: &Stored| match stored {
                Stored::Raw(body) => delegation_read(n, Ok(body)),
                Stored::Split { .. } => {
                    let bytes = stored.to_bytes(name, None);
                    delegation_read(n, bytes.as_deref().map_err(Clone::clone))
                }
            },
        )
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        self.files.load_manifests()
    }

    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        _agent: &str,
        mut decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let name = paths::ledger_name(issue);
        let mut conn = self.conn()?;
        update::update_documents(
            conn.get()?,
            &self.cache,
            &self.target,
            &[(CLARIFICATIONS, &name), (DELEGATIONS, &name)],
            config.lock_timeout_ms,
            |held| {
                let held = |i: usize| held.get(i).and_then(Option::as_ref);
                let ledger = held(0).map(|h| h.ledger(&name, issue)).transpose()?;
                let delegations = held(1)
                    .map(|h| parse_delegations(issue, &h.bytes()))
                    .transpose()?;
                let (write_ledger, write_delegations, result) =
                    decide(ledger.as_deref(), delegations.as_ref())?;
                let ledger_write = write_ledger.map(Write::Ledger);
                let delegation_write = write_delegations.as_ref().map(delegation_write);
                Ok((vec![ledger_write, delegation_write], result))
            },
        )
    }
}
