//! What changed since a revision (the smallest change feed `agentx serve` needs until the
//! store seam of docs/protocol.md §21 brings one to every store): every write of a document takes a new
//! revision from `agentx.revisions`, so the documents written lately are those with the
//! highest revisions. Revisions are drawn when a transaction writes and seen when it commits,
//! so a later revision can be seen first: the caller looks back over a window of recent
//! revisions and compares each document's revision with the one it saw last.

use agentx_clarify_core::ClarifyError;

use crate::error::{failure, Phase};
use crate::PgStore;

/// Documents whose revision is above `after`: `(kind, name, revision)`, highest first, at
/// most `limit` of them.
const RECENT: &str = "SELECT kind, name, rev FROM agentx.documents WHERE rev > $1
    ORDER BY rev DESC LIMIT $2";

impl PgStore {
    /// The documents written with a revision above `after` (at most `limit`, the latest).
    pub fn written_since(
        &self,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(String, String, i64)>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail = |e: &postgres::Error| {
            failure(&self.target, "read the latest changes of", Phase::Before, e)
        };
        let stmt = c.statement(RECENT).map_err(|e| fail(&e))?;
        let rows = c
            .client
            .query(&stmt, &[&after, &limit])
            .map_err(|e| fail(&e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }
}
