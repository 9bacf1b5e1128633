//! PostgreSQL's change feed (docs/protocol.md §21). Every write of a document takes a new
//! revision from `agentx.revisions`, and every transaction that writes one sends
//! `NOTIFY agentx_changes` (delivered when it commits): a cursor holds a connection of its own
//! that listens, and asks for the documents written lately only after a signal, so a change
//! made on another machine shows at once and nothing is polled while nothing changes.
//!
//! Revisions are drawn when a transaction writes and seen when it commits, so a later
//! revision can be seen first: each look goes back over a window of recent revisions and
//! compares each document's revision with the one it saw last, so every write is reported
//! once.

use std::collections::HashMap;
use std::time::Duration;

use agentx_clarify_command::{paths, Changed, FeedStore};
use agentx_clarify_core::ClarifyError;
use postgres::fallible_iterator::FallibleIterator;

use crate::conn::{self, Conn};
use crate::documents::{CLARIFICATIONS, DELEGATIONS};
use crate::error::{failure, Phase};
use crate::PgStore;

/// The channel every writer notifies.
pub(crate) const CHANNEL: &str = "agentx_changes";
/// Sent in every transaction that writes a document, before `COMMIT`.
pub(crate) const NOTIFY: &str = "NOTIFY agentx_changes";

/// Documents whose revision is above `after`: `(kind, name, revision)`, highest first, at
/// most `limit` of them.
const RECENT: &str = "SELECT kind, name, rev FROM agentx.documents WHERE rev > $1
    ORDER BY rev DESC LIMIT $2";

/// How far back in revisions each look goes: a transaction that drew its revision earlier but
/// committed later is still seen.
const WINDOW: i64 = 4096;

/// Where a reader of PostgreSQL stands: its listening connection, the highest revision seen
/// and each recent document's revision when last seen.
pub struct PgCursor {
    listener: Conn,
    revision: u64,
    top: i64,
    seen: HashMap<(String, String), i64>,
    /// A signal came (or the connection was replaced) since the last look.
    signalled: bool,
}

impl std::fmt::Debug for PgCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgCursor")
            .field("revision", &self.revision)
            .field("top", &self.top)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// A connection of its own that listens to the writers' signals.
    fn listener(&self) -> Result<Conn, ClarifyError> {
        let mut conn = conn::checkout(&self.url)?;
        conn.client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(|e| failure(&self.target, "listen for changes in", Phase::Connect, &e))?;
        Ok(conn)
    }

    /// The documents written with a revision above `after` (at most `limit`, the latest).
    fn recent(
        &self,
        conn: &mut Conn,
        after: i64,
    ) -> Result<Vec<(String, String, i64)>, ClarifyError> {
        let fail = |e: &postgres::Error| {
            failure(&self.target, "read the latest changes of", Phase::Before, e)
        };
        let stmt = conn.statement(RECENT).map_err(|e| fail(&e))?;
        let rows = conn
            .client
            .query(&stmt, &[&after, &WINDOW])
            .map_err(|e| fail(&e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }
}

/// The workspace path of a document (for [`Changed::add_path`]).
fn path_of(kind: &str, name: &str) -> String {
    match kind {
        CLARIFICATIONS => format!("{}{name}", paths::CLARIFICATIONS_DIR),
        DELEGATIONS => format!("{}{name}", paths::DELEGATIONS_DIR),
        _ => format!("{}{name}", paths::STATE_DIR),
    }
}

impl FeedStore for PgStore {
    type Cursor = PgCursor;

    fn feed(&self) -> Result<PgCursor, ClarifyError> {
        let mut listener = self.listener()?;
        // Listening first, then looking: a write that commits in between is signalled.
        let rows = self.recent(&mut listener, i64::MIN)?;
        let top = rows.iter().map(|r| r.2).max().unwrap_or(0);
        let seen = rows.into_iter().map(|(k, n, r)| ((k, n), r)).collect();
        Ok(PgCursor {
            listener,
            revision: u64::try_from(top).unwrap_or(0),
            top,
            seen,
            signalled: false,
        })
    }

    fn revision(&self, cursor: &PgCursor) -> u64 {
        cursor.revision
    }

    fn changes(&self, cursor: &mut PgCursor) -> Result<Option<Changed>, ClarifyError> {
        if cursor.listener.client.is_closed() {
            // Signals sent while no one listened are lost: look once the new one listens.
            cursor.listener = self.listener()?;
            cursor.signalled = true;
        }
        // Signals already sent. A wait of a millisecond, not none: the connection's runtime
        // learns that its socket has data only when it waits (a failed look counts as a
        // signal: the query below then says what is wrong).
        if !cursor.signalled {
            cursor.signalled = drain(&mut cursor.listener, Duration::from_millis(1));
        }
        if !cursor.signalled {
            return Ok(None);
        }
        cursor.signalled = false;
        let rows = self.recent(&mut cursor.listener, cursor.top.saturating_sub(WINDOW))?;
        let mut changed = Changed::default();
        for (kind, name, rev) in rows {
            cursor.top = cursor.top.max(rev);
            let key = (kind, name);
            if cursor.seen.get(&key) == Some(&rev) {
                continue;
            }
            changed.add_path(&path_of(&key.0, &key.1));
            cursor.seen.insert(key, rev);
        }
        let floor = cursor.top.saturating_sub(WINDOW);
        cursor.seen.retain(|_, rev| *rev > floor);
        let Some(mut changed) = changed.finish() else {
            return Ok(None);
        };
        cursor.revision = u64::try_from(cursor.top)
            .unwrap_or(0)
            .max(cursor.revision + 1);
        changed.revision = cursor.revision;
        Ok(Some(changed))
    }

    fn wait_changes(&self, cursor: &mut PgCursor, timeout: Duration) -> bool {
        if cursor.signalled {
            return true;
        }
        cursor.signalled = drain(&mut cursor.listener, timeout);
        cursor.signalled
    }
}

/// Waits at most `timeout` for a signal, then takes every other one already there; whether
/// any came (or the connection failed).
fn drain(listener: &mut Conn, timeout: Duration) -> bool {
    let mut signals = listener.client.notifications();
    let came = match FallibleIterator::next(&mut signals.timeout_iter(timeout)) {
        Ok(Some(_)) | Err(_) => true,
        Ok(None) => false,
    };
    if came {
        while let Ok(Some(_)) = FallibleIterator::next(&mut signals.iter()) {}
    }
    came
}
