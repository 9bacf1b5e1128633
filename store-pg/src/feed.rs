//! PostgreSQL's change feed (docs/protocol.md §21). Every write of a document takes a new
//! revision from `agentx.revisions`, and every transaction that writes one sends
//! `NOTIFY agentx_changes` (delivered when it commits): a cursor holds a connection of its own
//! that listens, and asks for the documents written lately only after a signal, so a change
//! made on another machine shows at once and nothing is polled while nothing changes.
//!
//! A reader that asks for the cursor's wake (`State::wake`) gets one fired by a thread that
//! holds a second listening connection and blocks on its signals: the reader then waits on
//! the wake instead of on the database, with no timer; the thread's own wait ends each
//! [`LISTEN_SLICE`] only to notice that the cursor is gone or that its connection broke
//! (then it connects again, and fires: signals sent while no one listened are lost).
//!
//! Revisions are drawn when a transaction writes and seen when it commits, so a later
//! revision can be seen first: each look goes back over a window of recent revisions and
//! compares each document's revision with the one it saw last, so every write is reported
//! once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_command::Wake;

use agentx_clarify_core::ClarifyError;
use postgres::fallible_iterator::FallibleIterator;

use crate::conn;
use crate::conn::Conn;
use crate::error::failure;
use crate::error::Phase;
use crate::PgStore;

/// The channel every writer notifies.
pub(crate) const CHANNEL: &str = "agentx_changes";
/// Sent in every transaction that writes a document, before `COMMIT`.
pub(crate) const NOTIFY: &str = "NOTIFY agentx_changes";

/// Documents whose revision is above `after`: `(kind, name, revision)`, highest first, at
/// most `limit` of them.
pub(crate) const RECENT: &str = "SELECT kind, name, rev FROM agentx.documents WHERE rev > $1
    ORDER BY rev DESC LIMIT $2";

/// How far back in revisions each look goes: a transaction that drew its revision earlier but
/// committed later is still seen.
pub(crate) const WINDOW: i64 = 4096;

/// Where a reader of PostgreSQL stands: its listening connection, the highest revision seen
/// and each recent document's revision when last seen.
pub struct PgCursor {
    pub(crate) listener: Conn,
    pub(crate) revision: u64,
    pub(crate) top: i64,
    pub(crate) seen: HashMap<(String, String), i64>,
    /// A signal came (or the connection was replaced) since the last look.
    pub(crate) signalled: bool,
    /// The wake and the flag its listening thread raises with every signal, once a reader
    /// asked for it.
    pub(crate) wake: Option<(Wake, Arc<AtomicBool>)>,
}

/// How long the wake's thread blocks on its connection before it checks that its cursor is
/// still there (it never looks at the database: a signal ends the wait at once).
pub(crate) const LISTEN_SLICE: Duration = Duration::from_secs(1);

impl Drop for PgCursor {
    fn drop(&mut self) {
        if let Some((wake, _)) = &self.wake {
            wake.close();
        }
    }
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
    pub(crate) fn listener(&self) -> Result<Conn, ClarifyError> {
        let mut conn = conn::checkout(&self.url)?;
        conn.client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(|e| failure(&self.target, "listen for changes in", Phase::Connect, &e))?;
        Ok(conn)
    }

    /// The documents written with a revision above `after` (at most `limit`, the latest).
    pub(crate) fn recent(
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

impl PgStore {
    /// The same database for another thread (no idle connections, no cache).
    fn clone_target(&self) -> PgStore {
        PgStore {
            url: self.url.clone(),
            target: self.target.clone(),
            idle: std::sync::Mutex::default(),
            cache: std::sync::Mutex::default(),
        }
    }

    /// The wake of a cursor: a thread with a listening connection of its own fires it with
    /// every signal, raising `flag` first (the cursor's next look then asks the database).
    pub(crate) fn start_wake(&self) -> Result<(Wake, Arc<AtomicBool>), ClarifyError> {
        let mut listener = self.listener()?;
        let wake = Wake::default();
        let flag = Arc::new(AtomicBool::new(false));
        let (w, f, store) = (wake.clone(), Arc::clone(&flag), self.clone_target());
        std::thread::Builder::new()
            .name(String::from("agentx-pg-listen"))
            .spawn(move || {
                while !w.is_closed() {
                    if listener.client.is_closed() {
                        match store.listener() {
                            Ok(l) => listener = l,
                            Err(_) => {
                                std::thread::sleep(LISTEN_SLICE);
                                continue;
                            }
                        }
                    } else if !drain(&mut listener, LISTEN_SLICE) {
                        continue;
                    }
                    f.store(true, Ordering::SeqCst);
                    w.fire();
                }
            })
            .map_err(|e| ClarifyError::Io {
                message: format!("cannot start the change feed's listener: {e}"),
            })?;
        Ok((wake, flag))
    }
}

/// Waits at most `timeout` for a signal, then takes every other one already there; whether
/// any came (or the connection failed).
pub(crate) fn drain(listener: &mut Conn, timeout: Duration) -> bool {
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
