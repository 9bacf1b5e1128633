//! `agentx decisions list` and `export`: the decisions every ledger holds, each with whether
//! its signature verifies against the workspace's public keys (the core decides which
//! records are decisions and what each says: `agentx_clarify_core::decisions`).

use agentx_clarify_core::decisions::{decisions, Decision, Select};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::ClarifyError;

use crate::query::read_all;
use crate::store::Store;

/// The decisions found, by issue then record, and the ledgers that could not be read.
#[derive(Clone, Debug, Default)]
pub struct Listed {
    pub decisions: Vec<Decision>,
    pub errors: Vec<ReportError>,
}

/// Every decision of the store that `select` takes.
pub fn list<S: Store>(store: &S, select: Select) -> Result<Listed, ClarifyError> {
    let (ledgers, errors) = read_all(store)?;
    let keys = crate::store::keys::public_keys(store)?;
    Ok(Listed {
        decisions: decisions(&ledgers, &keys, select),
        errors,
    })
}
