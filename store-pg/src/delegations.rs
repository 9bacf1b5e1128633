//! Delegation ledgers in PostgreSQL (SPEC §18): documents of kind `delegations`, read and
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

use crate::documents::{active_rows, CLARIFICATIONS, DELEGATIONS};
use crate::{update, PgStore};

/// Every delegation ledger, ascending by issue.
const ALL_DELEGATIONS: &str = "SELECT name, body FROM agentx.documents WHERE kind = 'delegations'
    ORDER BY length(name), name";

/// A delegation ledger's body as stored (no rows of its own in `agentx.active`).
fn delegation_write(ledger: &DelegationLedger) -> update::Write {
    (ledger.to_pretty_json().into_bytes(), Vec::new())
}

impl DelegationStore for PgStore {
    fn read_delegations(&self, issue: u32) -> Result<Option<DelegationLedger>, ClarifyError> {
        self.read_document(DELEGATIONS, &paths::ledger_name(issue))?
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
        self.update_issue_document(DELEGATIONS, issue, config, |_, bytes| {
            let current = bytes.map(|b| parse_delegations(issue, b)).transpose()?;
            let (write, result) = decide(current)?;
            Ok((write.as_ref().map(delegation_write), result))
        })
    }

    fn scan_delegations(&self, _scope: Scope) -> Result<Vec<DelegationRead>, ClarifyError> {
        self.pass(ALL_DELEGATIONS, None, &|n, _, body: &[u8]| {
            delegation_read(n, Ok(body))
        })
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
            &self.target,
            &[(CLARIFICATIONS, &name), (DELEGATIONS, &name)],
            config.lock_timeout_ms,
            |bodies| {
                let body = |i: usize| bodies.get(i).and_then(Option::as_deref);
                let ledger = body(0)
                    .map(|b| Ledger::parse(&name, b, Some(issue)))
                    .transpose()?;
                let delegations = body(1).map(|b| parse_delegations(issue, b)).transpose()?;
                let (write_ledger, write_delegations, result) =
                    decide(ledger.as_ref(), delegations.as_ref())?;
                let ledger_write =
                    write_ledger.map(|l| (l.to_pretty_json().into_bytes(), active_rows(&l)));
                let delegation_write = write_delegations.as_ref().map(delegation_write);
                Ok((vec![ledger_write, delegation_write], result))
            },
        )
    }
}
