//! # agentx-clarify-pg
//!
//! `PgStore`: a workspace's state — clarification ledgers, delegation ledgers, agent statuses —
//! in PostgreSQL (docs/protocol.md §19), so agents on many machines share one hub. The same command layer
//! runs over it as over the file store, with the same JSON shapes: every ledger is kept as the
//! exact bytes the file store would write, so `export` gives the files back byte for byte.
//!
//! - One transaction per store update, the document's row locked `FOR UPDATE` (per-issue row
//!   locks replace lock files); new documents inserted without a race; serialization failures
//!   retried (`update.rs`).
//! - `agentx.active`, the index of active records, written in the same transaction as its
//!   ledger: the monitor reads only the ledgers with a row there.
//! - `agentx.search_records`, the search index (a `tsvector` of the core's words per record
//!   under a GIN index), written in the same transaction as its ledger too: `clarify search`
//!   and `related` read only the ledgers of the best candidates (`search.rs`).
//! - Delegation ledgers as rows too, both ledgers of an issue in one transaction for
//!   `signals ingest` (`delegations.rs`); routing leases as rows with an expiry on the server's
//!   clock (`leases.rs`).
//! - The schema created and migrated by `agentx store init` (`schema.rs`).
//! - Settings, workflows, runner tables, personas and manifests stay in the workspace's files
//!   (they are shared through git); run logs are written there too (`runs.rs`).
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod conn;
mod delegations;
pub mod documents;
mod error;
mod feed;
mod kinds;
mod leases;
mod ledgers;
pub mod schema;
mod search;
mod state;
mod state_docs;
mod transfer;
mod update;
pub mod watch;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;

use agentx_clarify_command::paths;
use agentx_clarify_command::Sides;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_core::Config;
use agentx_clarify_store::parallel_map;
use agentx_clarify_store::DiskStore;

use conn::Conn;
use error::failure;
use error::Phase;
use ledgers::ledger_number;
use ledgers::Cache;
use ledgers::Stored;
use update::Held;
use update::Write;

pub use conn::describe;
pub use feed::PgCursor;
pub use leases::PgLease;
pub use schema::Migration;
pub use transfer::Imported;
pub use watch::{set_timeout_ms, Abandoned, Watch};

/// A workspace whose files are the directory at `root` and whose state is in the database at
/// `url`: what the picker opens for a PostgreSQL workspace, and what tests use.
pub type PgWorkspace = Sides<DiskStore, PgStore>;

/// Opens a [`PgWorkspace`] (the state as [`PgStore::open`] opens it).
pub fn open_workspace(root: impl Into<PathBuf>, url: &str) -> Result<PgWorkspace, ClarifyError> {
    Ok(Sides {
        files: DiskStore::new(root),
        state: PgStore::open(url)?,
    })
}

/// Rows handed to the parallel decoder at a time while a pass streams a table.
const BATCH: usize = 1024;

/// A workspace whose state is in PostgreSQL.
pub struct PgStore {
    url: String,
    /// The URL without its password, for messages.
    target: String,
    /// Idle connections. A call takes one out and puts it back when done, so a call made
    /// while another is under way (a decision that reads the store, a delegation update
    /// inside a ledger update) gets a connection of its own instead of waiting for itself.
    idle: Mutex<Vec<Conn>>,
    /// Clarification ledgers this store wrote or read under their lock (`ledgers.rs`).
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// The state in the database at `url`, whose schema must be this build's (else `IO_ERROR`
    /// naming `agentx store init`).
    pub fn open(url: &str) -> Result<PgStore, ClarifyError> {
        let conn = conn::checkout(url)?;
        Ok(PgStore {
            url: url.to_owned(),
            target: describe(url),
            idle: Mutex::new(vec![conn]),
            cache: Mutex::default(),
        })
    }

    /// Creates the schema, or migrates it to this build's version (`agentx store init`).
    pub fn init_schema(url: &str) -> Result<Migration, ClarifyError> {
        let mut conn = conn::connect_unchecked(url)?;
        schema::migrate(&mut conn.client)
            .map_err(|e| failure(&describe(url), "create the schema", Phase::Before, &e))
    }

    /// `Ok` when the database answers and its schema is this build's version: read again on
    /// every call (`/readyz`), as a connection only checks it when it is opened.
    pub fn check_schema(&self) -> Result<(), ClarifyError> {
        let mut conn = self.conn()?;
        conn::check_version(conn.get()?, &self.target)
    }

    /// The database, as messages name it (no password).
    pub fn target(&self) -> &str {
        &self.target
    }

    fn conn(&self) -> Result<ConnGuard<'_>, ClarifyError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            // A connection lost by an earlier call is replaced, not reused.
            Some(conn) if !conn.client.is_closed() => conn,
            _ => conn::checkout(&self.url)?,
        };
        watch::progress();
        Ok(ConnGuard {
            store: self,
            conn: Some(conn),
        })
    }

    /// One document's bytes by workspace path (`.agentx/state/…`), as a file would hold them.
    pub fn document(&self, path: &str) -> Result<Option<Vec<u8>>, ClarifyError> {
        let Some((kind, name)) = documents::document_of(path) else {
            return Ok(None);
        };
        self.read_document(kind, name)?
            .map(|stored| stored.to_bytes(name, ledger_number(name)))
            .transpose()
    }

    /// A document as stored, read in one statement (one snapshot of its rows).
    fn read_document(&self, kind: &str, name: &str) -> Result<Option<Stored>, ClarifyError> {
        let row = self.document_row(
            concat!(
                "SELECT d.body, ",
                record_bodies!(),
                " FROM agentx.documents d WHERE d.kind = $1 AND d.name = $2"
            ),
            kind,
            name,
        )?;
        Ok(row.map(|r| Stored::from_columns(r.get(0), r.get(1))))
    }

    /// A raw document's bytes (statuses, delegation ledgers: never stored as rows).
    fn read_bytes(&self, kind: &str, name: &str) -> Result<Option<Vec<u8>>, ClarifyError> {
        self.read_document(kind, name)?
            .map(|stored| stored.to_bytes(name, None))
            .transpose()
    }

    /// The row `sql` selects for the document `(kind, name)` (`$1`, `$2`), if it exists.
    fn document_row(
        &self,
        sql: &'static str,
        kind: &str,
        name: &str,
    ) -> Result<Option<postgres::Row>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let stmt = c.statement(sql).map_err(|e| self.fail("read", name, &e))?;
        c.client
            .query_opt(&stmt, &[&kind, &name])
            .map_err(|e| self.fail("read", name, &e))
    }

    /// Read–decide–write of the document of `kind` for `issue` in one transaction
    /// (`update.rs`); `decide` gets the document's name and its bytes.
    fn update_issue_document<T>(
        &self,
        kind: &str,
        issue: u32,
        config: &Config,
        mut decide: impl FnMut(&str, Option<&Held>) -> Result<(Option<Write>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let name = paths::ledger_name(issue);
        let mut conn = self.conn()?;
        update::update_document(
            conn.get()?,
            &self.cache,
            &self.target,
            (kind, &name),
            config.lock_timeout_ms,
            |bytes| decide(&name, bytes),
        )
    }

    fn fail(&self, what: &str, name: &str, e: &postgres::Error) -> ClarifyError {
        failure(&self.target, &format!("{what} {name}"), Phase::Before, e)
    }

    /// Streams `(name, body, records)` rows of `sql` through `visit` in batches decoded on
    /// every core.
    fn pass<R: Send>(
        &self,
        sql: &'static str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        visit: &(impl Fn(u64, &str, &Stored) -> R + Sync),
    ) -> Result<Vec<R>, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail = |e: &postgres::Error| self.fail("read", "the ledgers", e);
        let stmt = c.statement(sql).map_err(|e| fail(&e))?;
        let mut rows = c
            .client
            .query_raw(&stmt, params.iter().copied())
            .map_err(|e| fail(&e))?;
        let mut out = Vec::new();
        let mut batch: Vec<(u64, String, Stored)> = Vec::with_capacity(BATCH);
        loop {
            let next = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
                .map_err(|e| fail(&e))?;
            let done = next.is_none();
            if let Some(row) = next {
                let name: String = row.get(0);
                // Names were checked when written; anything else is not a ledger.
                if let Some(n) = issue_of_file_name(&name) {
                    batch.push((n, name, Stored::from_columns(row.get(1), row.get(2))));
                }
            }
            if batch.len() >= BATCH || (done && !batch.is_empty()) {
                // A long read that keeps streaming is progress, never a frozen database.
                watch::progress();
                let taken = std::mem::take(&mut batch);
                out.extend(parallel_map(&taken, |(n, name, stored)| {
                    visit(*n, name, stored)
                }));
            }
            if done {
                return Ok(out);
            }
        }
    }
}

/// A connection while one call uses it; back among the idle ones when dropped.
struct ConnGuard<'a> {
    store: &'a PgStore,
    conn: Option<Conn>,
}

impl ConnGuard<'_> {
    fn get(&mut self) -> Result<&mut Conn, ClarifyError> {
        // `PgStore::conn` fills it; only `drop` empties it.
        self.conn.as_mut().ok_or_else(|| ClarifyError::Internal {
            message: String::from("the store's connection slot is empty"),
        })
    }
}

impl Drop for ConnGuard<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take().filter(|c| !c.client.is_closed()) {
            let mut idle = self
                .store
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            idle.push(conn);
        }
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        let idle = self.idle.get_mut().unwrap_or_else(PoisonError::into_inner);
        for conn in idle.drain(..) {
            conn::checkin(&self.url, conn);
        }
    }
}

/// The record rows' bodies of document `d`, in order, when it is stored as rows (else NULL):
/// every statement that reads a document reads them in the same snapshot (`ledgers.rs`).
macro_rules! record_bodies {
    () => {
        "CASE WHEN d.records IS NOT NULL THEN ARRAY(SELECT r.body FROM agentx.records r
            WHERE r.kind = d.kind AND r.name = d.name ORDER BY r.pos) END"
    };
}
pub(crate) use record_bodies;

/// The columns a pass reads of a document `d`: its name, its body, its record bodies.
macro_rules! pass_columns {
    () => {
        concat!(
            "SELECT d.name, d.body, ",
            crate::record_bodies!(),
            " FROM agentx.documents d "
        )
    };
}
pub(crate) use pass_columns;

/// Every clarification ledger, ascending by issue (canonical decimal names order by length,
/// then by text).
const ALL: &str = concat!(
    pass_columns!(),
    "WHERE d.kind = 'clarifications' ORDER BY length(d.name), d.name"
);

/// The ledgers with a row in the index of active records, and the one named by `$1` (the one
/// just written, or none), ascending.
const MARKED: &str = concat!(
    pass_columns!(),
    "WHERE d.kind = 'clarifications' AND d.name IN (SELECT name FROM agentx.active
        WHERE kind = 'clarifications' UNION ALL SELECT $1::text)
    ORDER BY length(d.name), d.name"
);

/// The names of the ledgers the monitor after a command reads (docs/protocol.md §29), by indexed queries
/// on `agentx.active`: the rows due by `$2`, the rows of ledgers whose wait-for edges hold a
/// cycle, and the rows of agents `$3` asked before their status changed (`$4`), except on
/// the issue a working agent is on (`$5`, NULL for none).
macro_rules! follow_up_names {
    () => {
        "SELECT name FROM agentx.active WHERE kind = 'clarifications' AND due_ms <= $2
        UNION ALL SELECT name FROM agentx.active WHERE kind = 'clarifications' AND cycle
        UNION ALL SELECT a.name
            FROM unnest($3::text[], $4::int8[], $5::text[]) AS c(agent, since, except_name)
            JOIN agentx.active a ON a.kind = 'clarifications' AND a.requester = c.agent
                AND a.asked_ms < c.since
            WHERE c.except_name IS NULL OR a.name <> c.except_name"
    };
}

/// The ledgers the follow-up reads and the one named by `$1` (the one just written, or
/// none), ascending.
const FOLLOW_UP: &str = concat!(
    pass_columns!(),
    "WHERE d.kind = 'clarifications' AND d.name IN (",
    follow_up_names!(),
    " UNION ALL SELECT $1::text) ORDER BY length(d.name), d.name"
);

/// The ledgers the follow-up reads except the one named by `$1` (the one just written, which
/// the command holds), ascending.
const FOLLOW_UP_EXCEPT: &str = concat!(
    pass_columns!(),
    "WHERE d.kind = 'clarifications' AND d.name IN (SELECT f.name FROM (",
    follow_up_names!(),
    ") AS f(name) WHERE f.name <> $1) ORDER BY length(d.name), d.name"
);
