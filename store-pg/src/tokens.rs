//! The access tokens of `agentx serve` (docs/protocol.md §23) in PostgreSQL: one row per token in
//! `agentx.tokens`, holding what the file store's `tokens.json` holds per entry (a JSON object
//! with the token's SHA-256, never the token). The shape belongs to the server
//! (`serve/src/tokens.rs`); this store keeps the rows and changes them in one transaction that
//! locks the table, as the file store changes its file under its lock.

use agentx_clarify_core::ClarifyError;
use serde_json::Value;

use crate::error::{failure, Phase};
use crate::PgStore;

impl PgStore {
    fn token_fail(&self, what: &str, e: &postgres::Error) -> ClarifyError {
        failure(
            &self.target,
            &format!("{what} the tokens"),
            Phase::Before,
            e,
        )
    }

    /// Every stored token entry, in the order they were made.
    pub fn load_tokens(&self) -> Result<Vec<Value>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let rows = c
            .client
            .query("SELECT body FROM agentx.tokens ORDER BY pos", &[])
            .map_err(|e| self.token_fail("read", &e))?;
        rows.iter()
            .map(|r| {
                let body: String = r.get(0);
                serde_json::from_str(&body).map_err(|e| ClarifyError::Io {
                    message: format!("{}: a token row is not JSON: {e}", self.target),
                })
            })
            .collect()
    }

    /// Read–change–write of the token entries in one transaction holding the table's lock
    /// (two servers or two `agentx tokens` never lose each other's change).
    pub fn update_tokens(
        &self,
        change: &mut dyn FnMut(&mut Vec<Value>) -> Result<(), ClarifyError>,
    ) -> Result<(), ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail = |e: &postgres::Error| self.token_fail("write", e);
        let mut tx = c.client.transaction().map_err(|e| fail(&e))?;
        tx.batch_execute("LOCK TABLE agentx.tokens IN EXCLUSIVE MODE")
            .map_err(|e| fail(&e))?;
        let rows = tx
            .query("SELECT body FROM agentx.tokens ORDER BY pos", &[])
            .map_err(|e| fail(&e))?;
        let mut tokens = Vec::with_capacity(rows.len());
        for r in &rows {
            let body: String = r.get(0);
            tokens.push(serde_json::from_str(&body).map_err(|e| ClarifyError::Io {
                message: format!("{}: a token row is not JSON: {e}", self.target),
            })?);
        }
        change(&mut tokens)?;
        tx.batch_execute("DELETE FROM agentx.tokens")
            .map_err(|e| fail(&e))?;
        for (pos, t) in tokens.iter().enumerate() {
            let pos = i32::try_from(pos).unwrap_or(i32::MAX);
            tx.execute(
                "INSERT INTO agentx.tokens (pos, body) VALUES ($1, $2)",
                &[&pos, &t.to_string()],
            )
            .map_err(|e| fail(&e))?;
        }
        tx.commit().map_err(|e| fail(&e))
    }
}
