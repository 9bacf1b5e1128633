//! Connections: opened from a libpq URL (`postgres://user@host:port/db?…`, a Unix-socket
//! directory as `?host=/path&port=N`), checked against the schema version once, and kept in a
//! small process-wide pool so the long-lived shells (the Node binding, the MCP server) reuse
//! them instead of paying a backend start per call. Prepared statements are cached per
//! connection.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

use agentx_clarify_core::ClarifyError;
use postgres::{Client, Config, NoTls, Statement};

use crate::error::{failure, io, Phase};
use crate::schema;

/// Idle connections kept per URL.
const POOL_SIZE: usize = 4;

/// One connection and its prepared statements.
pub(crate) struct Conn {
    pub client: Client,
    statements: HashMap<&'static str, Statement>,
    /// The `lock_timeout` last set on this session, in ms.
    lock_timeout_ms: Option<u64>,
}

impl Conn {
    /// The prepared form of `sql` (prepared on first use on this connection).
    pub fn statement(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// A write's statements may each run `[store] timeout_ms` on the server (then the
    /// transaction fails and rolls back: nothing was written), in the transaction under way,
    /// plus `lock_wait_ms` for a row lock: a lock wait is the lock timeout's to end
    /// (`LOCK_TIMEOUT`, as on the file store), not the statement timeout's — under contention
    /// a writer queued behind others must not fail as an I/O error first.
    pub fn bound_statements(
        tx: &mut postgres::Transaction<'_>,
        lock_wait_ms: u64,
    ) -> Result<(), postgres::Error> {
        let ms = u64::try_from(crate::watch::timeout().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(lock_wait_ms);
        tx.batch_execute(&format!("SET LOCAL statement_timeout = {ms}"))
    }

    /// The `lock_timeout` set on this session (0: none set yet).
    pub fn lock_wait_ms(&self) -> u64 {
        self.lock_timeout_ms.unwrap_or(0)
    }

    /// Row locks wait at most `ms` (then `LOCK_TIMEOUT`, like the file store's locks).
    pub fn set_lock_timeout(&mut self, ms: u64) -> Result<(), postgres::Error> {
        if self.lock_timeout_ms != Some(ms) {
            self.client
                .batch_execute(&format!("SET lock_timeout = {ms}"))?;
            self.lock_timeout_ms = Some(ms);
        }
        Ok(())
    }
}

static POOL: Mutex<Vec<(String, Conn)>> = Mutex::new(Vec::new());

/// The URL's target without its password, for messages: `postgres://user@host:port/db`.
pub fn describe(url: &str) -> String {
    let Ok(config) = Config::from_str(url) else {
        return String::from("the PostgreSQL database");
    };
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or_default(),
        config.get_dbname().unwrap_or_default()
    )
}

/// Parses `url` (libpq's URL or key=value form).
fn config(url: &str) -> Result<Config, ClarifyError> {
    let mut config = Config::from_str(url).map_err(|e| {
        ClarifyError::input(format!(
            "the store url is not a valid PostgreSQL URL ({e}); expected postgres://user@host:port/db or postgres://user@/db?host=/socket/dir&port=N"
        ))
    })?;
    // Connecting may take `[store] timeout_ms` (a URL's own `connect_timeout` wins).
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(crate::watch::timeout());
    }
    if config.get_application_name().is_none() {
        config.application_name("agentx");
    }
    Ok(config)
}

/// A new connection, not checked against the schema.
pub(crate) fn connect_unchecked(url: &str) -> Result<Conn, ClarifyError> {
    let client = config(url)?
        .connect(NoTls)
        .map_err(|e| failure(&describe(url), "connect", Phase::Connect, &e))?;
    Ok(Conn {
        client,
        statements: HashMap::new(),
        lock_timeout_ms: None,
    })
}

/// A connection to a database whose schema this build can use: from the pool, else new.
pub(crate) fn checkout(url: &str) -> Result<Conn, ClarifyError> {
    {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(i) = pool.iter().position(|(u, _)| u == url) {
            let (_, conn) = pool.swap_remove(i);
            if !conn.client.is_closed() {
                return Ok(conn);
            }
        }
    }
    let mut conn = connect_unchecked(url)?;
    check_version(&mut conn, &describe(url))?;
    Ok(conn)
}

/// `Ok` when the schema of `conn`'s database is this build's, else the `IO_ERROR` naming what
/// to run: every new connection, and `/readyz` on a pooled one (an upgrade may have migrated
/// the database under a running server).
pub(crate) fn check_version(conn: &mut Conn, target: &str) -> Result<(), ClarifyError> {
    match schema::current(&mut conn.client)
        .map_err(|e| failure(target, "read the schema version", Phase::Connect, &e))?
    {
        None => Err(io(format!(
            "{target} has no AgentX schema: run `agentx store init`"
        ))),
        Some(v) if v < schema::VERSION => Err(io(format!(
            "{target} has schema version {v}, this agentx needs {}: run `agentx store init` to migrate",
            schema::VERSION
        ))),
        Some(v) if v > schema::VERSION => Err(io(format!(
            "{target} has schema version {v}, newer than this agentx understands ({}): upgrade agentx",
            schema::VERSION
        ))),
        Some(_) => Ok(()),
    }
}

/// Returns a healthy connection to the pool (outside any transaction: every update commits or
/// rolls back before it returns).
pub(crate) fn checkin(url: &str, conn: Conn) {
    if conn.client.is_closed() {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.iter().filter(|(u, _)| u == url).count() < POOL_SIZE {
        pool.push((url.to_owned(), conn));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_described_without_their_password() {
        assert_eq!(
            describe("postgres://agentx:secret@db.example:6543/hub"),
            "postgres://agentx@db.example:6543/hub"
        );
        assert_eq!(
            describe("postgres://agentx@/hub?host=/tmp/pg-sock&port=5433"),
            "postgres://agentx@/tmp/pg-sock:5433/hub"
        );
    }

    #[test]
    fn bad_urls_are_input_errors() {
        let e = config("postgres://x@host:notaport/db").err().unwrap();
        assert_eq!(e.code(), "INVALID_INPUT");
    }
}
