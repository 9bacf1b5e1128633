//! Delegation ledgers in PostgreSQL (docs/protocol.md §18): documents of kind `delegations`, read and
//! updated through the same generic path as clarification ledgers (`kinds.rs`) — one transaction, the row locked
//! `FOR UPDATE`, never overwritten when it does not parse. `update_issue` (`signals ingest`)
//! locks the clarification ledger, then its delegation ledger, and commits both in one
//! transaction, so an ingest is applied whole or not at all. Capability manifests stay in the
//! workspace's files, like the settings.

/// Every delegation ledger, ascending by issue.
pub(crate) const ALL_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' ORDER BY length(d.name), d.name"
);

/// The delegation ledgers with a row in `agentx.active` (an accepted delegation that can time
/// out, or a body that does not parse), ascending: the monitor's timeout phase reads only
/// these (the index is written in each document's own transaction, so it cannot be outdated).
pub(crate) const MARKED_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' AND d.name IN (SELECT name FROM agentx.active
        WHERE kind = 'delegations')
    ORDER BY length(d.name), d.name"
);

/// The delegation ledgers due by `$1` (an accepted delegation past its deadline, or a body
/// that does not parse), ascending: the timeout phase after a command reads only these
/// (docs/protocol.md §29), by the index on `due_ms`.
pub(crate) const DUE_DELEGATIONS: &str = concat!(
    crate::pass_columns!(),
    "WHERE d.kind = 'delegations' AND d.name IN (SELECT name FROM agentx.active
        WHERE kind = 'delegations' AND due_ms <= $1)
    ORDER BY length(d.name), d.name"
);
