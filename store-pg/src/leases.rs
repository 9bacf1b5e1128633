//! Routing leases in PostgreSQL (docs/protocol.md §14.2 step 2): a row of `agentx.leases` per record being
//! routed, with its holder (pid, host) and an expiry on the **server's** clock, so routers on
//! different machines — whose clocks may disagree — judge a lease alike. Taking is one
//! statement: insert the row, or take over one whose expiry passed (`ON CONFLICT … WHERE`),
//! which the row lock makes atomic. A lease whose holder is a dead process on this host is
//! broken at once, as the file store does; a holder on another machine is trusted until its
//! expiry. Row, not advisory lock: an advisory lock lives as long as one connection, so a
//! network blip would silently free a record while its agent still runs, and a router would
//! have to keep a connection checked out for the whole run (docs/decisions.md "Scale").

use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::pid_alive;
use agentx_clarify_store::this_host;

use crate::error::failure;
use crate::error::Phase;
use crate::PgStore;

/// Inserts the lease, or takes over an expired one; returns a row when taken.
pub(crate) const TAKE: &str =
    "INSERT INTO agentx.leases (id, token, pid, hostname, taken_ms, expires_ms)
    VALUES ($1, $2, $3, $4, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
            (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $5)
    ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token, pid = EXCLUDED.pid,
        hostname = EXCLUDED.hostname, taken_ms = EXCLUDED.taken_ms, expires_ms = EXCLUDED.expires_ms
    WHERE agentx.leases.expires_ms < EXCLUDED.taken_ms
    RETURNING 1";

/// The live holder of a lease: its token, pid, host and expiry.
pub(crate) const HOLDER: &str = "SELECT token, pid, hostname, expires_ms FROM agentx.leases
    WHERE id = $1 AND expires_ms >= (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

pub(crate) const BREAK: &str = "DELETE FROM agentx.leases WHERE id = $1 AND token = $2";

/// A lease this process took: the record and the token of this taking.
#[derive(Debug)]
pub struct PgLease {
    pub(crate) id: String,
    pub(crate) token: String,
}

/// Who holds a live lease.
pub(crate) struct Holder {
    pub(crate) token: String,
    pub(crate) pid: i64,
    pub(crate) hostname: String,
    pub(crate) expires_ms: i64,
}

impl Holder {
    /// Its process is gone: it ran on this host and no longer exists.
    pub(crate) fn dead(&self) -> bool {
        self.hostname == this_host() && u64::try_from(self.pid).is_ok_and(|p| !pid_alive(p))
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "pid {} on {} until {}",
            self.pid,
            self.hostname,
            agentx_clarify_core::time::format_ms(self.expires_ms)
        )
    }
}

impl PgStore {
    pub(crate) fn lease_fail(&self, what: &str, id: &str, e: &postgres::Error) -> ClarifyError {
        failure(
            &self.target,
            &format!("{what} the lease of {id}"),
            Phase::Before,
            e,
        )
    }

    pub(crate) fn holder(&self, id: &str) -> Result<Option<Holder>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let stmt = c
            .statement(HOLDER)
            .map_err(|e| self.lease_fail("read", id, &e))?;
        let row = c
            .client
            .query_opt(&stmt, &[&id])
            .map_err(|e| self.lease_fail("read", id, &e))?;
        Ok(row.map(|r| Holder {
            token: r.get(0),
            pid: r.get(1),
            hostname: r.get(2),
            expires_ms: r.get(3),
        }))
    }

    pub(crate) fn execute(
        &self,
        sql: &'static str,
        what: &str,
        id: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<u64, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let stmt = c
            .statement(sql)
            .map_err(|e| self.lease_fail(what, id, &e))?;
        c.client
            .execute(&stmt, params)
            .map_err(|e| self.lease_fail(what, id, &e))
    }
}
