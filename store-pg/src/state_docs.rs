//! Small state documents in PostgreSQL (`agentx.state_docs`, migration 8): what the file store
//! keeps as `.agentx/state/<name>.json` under a lock of its own — the notification outbox
//! (`outbox`), GitHub Mode's sync state (`github`) and serve's access tokens (`tokens`, schema
//! 9). A change is a read–change–write in one
//! transaction holding the document's row lock, so two deliverers (two servers, a server and
//! a cron `notify send`) never lose each other's change, as two writers of the file never do.

use agentx_clarify_core::ClarifyError;

use crate::error::{failure, Phase};
use crate::PgStore;

impl PgStore {
    fn doc_fail(&self, what: &str, name: &str, e: &postgres::Error) -> ClarifyError {
        failure(
            &self.target,
            &format!("{what} the {name} document"),
            Phase::Before,
            e,
        )
    }

    /// The document `name` as stored, `None` when it was never written. An empty body is
    /// never written: it is the row [`Self::update_state_doc`] makes to lock on, which a
    /// release before this one committed when its change left the document as it was (the
    /// first `github sync` of issues without comments did), so it reads as never written.
    pub(crate) fn state_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let row = c
            .client
            .query_opt(
                "SELECT body FROM agentx.state_docs WHERE name = $1",
                &[&name],
            )
            .map_err(|e| self.doc_fail("read", name, &e))?;
        Ok(row
            .map(|r| r.get::<_, String>(0))
            .filter(|body| !body.is_empty()))
    }

    /// Read–change–write of document `name` under its row lock: `change` gets the text as
    /// stored (`None` when never written) and returns the text to store (`None`: leave it as
    /// it is) with its result. Nothing is written when `change` fails.
    pub(crate) fn update_state_doc<T>(
        &self,
        name: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail = |e: &postgres::Error| self.doc_fail("write", name, e);
        let lock_wait = c.lock_wait_ms();
        let mut tx = c.client.transaction().map_err(|e| fail(&e))?;
        crate::conn::Conn::bound_statements(&mut tx, lock_wait).map_err(|e| fail(&e))?;
        // The row exists before it is locked: the first writer of a document and a second
        // one then queue on the same row lock.
        tx.execute(
            "INSERT INTO agentx.state_docs (name, body) VALUES ($1, '') ON CONFLICT (name) DO NOTHING",
            &[&name],
        )
        .map_err(|e| fail(&e))?;
        let body: String = tx
            .query_one(
                "SELECT body FROM agentx.state_docs WHERE name = $1 FOR UPDATE",
                &[&name],
            )
            .map_err(|e| fail(&e))?
            .get(0);
        let (next, result) = change((!body.is_empty()).then_some(body))?;
        let Some(text) = next else {
            // Unchanged: the row made above to lock on goes with the transaction, so a
            // document nobody wrote stays unwritten (its readers see `None`, not "").
            tx.rollback().map_err(|e| fail(&e))?;
            return Ok(result);
        };
        tx.execute(
            "UPDATE agentx.state_docs SET body = $2 WHERE name = $1",
            &[&name, &text],
        )
        .map_err(|e| fail(&e))?;
        if !crate::watch::begin_commit() {
            tx.rollback().map_err(|e| fail(&e))?;
            return Err(crate::update::given_up());
        }
        let committed = tx.commit();
        crate::watch::end_commit(committed.is_ok());
        committed.map_err(|e| fail(&e))?;
        Ok(result)
    }
}
