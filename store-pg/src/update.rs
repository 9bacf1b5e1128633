//! One store update = one transaction: the document's row locked (`SELECT … FOR UPDATE`),
//! the decision made on what it holds, the new body and its rows of `agentx.active` written
//! by one statement, `COMMIT`. A document that does not exist yet is inserted with
//! `ON CONFLICT DO NOTHING`: if another transaction created it first, nothing is written and
//! the whole update runs again on what that one wrote. Serialization failures and deadlocks
//! (SQLSTATE 40001, 40P01) run it again too, a few times with a jittered backoff; the decision
//! closures are pure, so running them again is safe.

use std::time::Duration;

use agentx_clarify_core::ClarifyError;
use postgres::IsolationLevel;

use crate::conn::Conn;
use crate::documents::{columns, ActiveRow};
use crate::error::{failure, gave_up, is_connection_lost, is_retryable, lock_timeout, Phase};

/// Attempts before a run of serialization failures becomes an error.
pub(crate) const ATTEMPTS: u32 = 10;

const SELECT_FOR_UPDATE: &str =
    "SELECT body FROM agentx.documents WHERE kind = $1 AND name = $2 FOR UPDATE";

/// Replaces a locked document and brings its active rows to the set given, in one statement.
/// Only the rows that differ are deleted or inserted: an ask adds one row to a ledger of
/// hundreds of active records instead of rewriting all of them (each rewrite is a heap
/// tuple, an index entry and a foreign-key check). Every part sees one snapshot: the
/// `INSERT`'s `NOT EXISTS` reads the rows as they were before the `DELETE`, so a changed row
/// is deleted in its old form and inserted in its new one.
const REPLACE: &str = "WITH doc AS (
        UPDATE agentx.documents SET body = $3, updated_at = now() WHERE kind = $1 AND name = $2
    ), new AS (
        SELECT * FROM unnest($4::text[], $5::text[], $6::int8[], $7::text[])
            AS u(record, status, stale_after, requester)
    ), old AS (
        SELECT ctid, record, status, stale_after, requester FROM agentx.active
        WHERE kind = $1 AND name = $2
    ), gone AS (
        DELETE FROM agentx.active WHERE ctid IN (
            SELECT o.ctid FROM old o WHERE NOT EXISTS (SELECT 1 FROM new n
                WHERE (n.record, n.status) = (o.record, o.status)
                AND n.stale_after IS NOT DISTINCT FROM o.stale_after
                AND n.requester IS NOT DISTINCT FROM o.requester))
    )
    INSERT INTO agentx.active (kind, name, record, status, stale_after, requester)
    SELECT $1, $2, n.record, n.status, n.stale_after, n.requester FROM new n
    WHERE NOT EXISTS (SELECT 1 FROM old o
        WHERE (o.record, o.status) = (n.record, n.status)
        AND o.stale_after IS NOT DISTINCT FROM n.stale_after
        AND o.requester IS NOT DISTINCT FROM n.requester)";

/// Inserts a new document and its active rows, unless another transaction inserted it first
/// (then it returns 0 and nothing is written).
const INSERT: &str = "WITH doc AS (
        INSERT INTO agentx.documents (kind, name, body) VALUES ($1, $2, $3)
        ON CONFLICT (kind, name) DO NOTHING RETURNING 1
    ), rows AS (
        INSERT INTO agentx.active (kind, name, record, status, stale_after, requester)
        SELECT $1, $2, r, s, t, q FROM unnest($4::text[], $5::text[], $6::int8[], $7::text[]) AS u(r, s, t, q)
        WHERE EXISTS (SELECT 1 FROM doc)
    )
    SELECT count(*) FROM doc";

/// What a decision wants written: the new body and its active rows.
pub(crate) type Write = (Vec<u8>, Vec<ActiveRow>);

/// Why one attempt stopped.
enum Stop {
    /// The decision refused: returned as it is, nothing written.
    Decided(ClarifyError),
    /// The database failed at `Phase`.
    Db(Phase, postgres::Error),
}

impl From<postgres::Error> for Stop {
    fn from(e: postgres::Error) -> Stop {
        Stop::Db(Phase::Before, e)
    }
}

/// Read–decide–write of document `(kind, name)` in one transaction, retried as the module says.
pub(crate) fn update_document<T>(
    conn: &mut Conn,
    target: &str,
    key: (&str, &str),
    lock_timeout_ms: u64,
    mut decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Write>, T), ClarifyError>,
) -> Result<T, ClarifyError> {
    update_documents(conn, target, &[key], lock_timeout_ms, |current| {
        let (write, result) = decide(current.first().and_then(Option::as_deref))?;
        Ok((vec![write], result))
    })
}

/// Read–decide–write of several documents in one transaction: their rows are locked in the
/// order given (every caller uses one order — a clarification ledger before its issue's
/// delegation ledger — so two of them never wait on each other), `decide` sees every body and
/// returns what to write for each (by position), and all of it commits or none.
pub(crate) fn update_documents<T>(
    conn: &mut Conn,
    target: &str,
    keys: &[(&str, &str)],
    lock_timeout_ms: u64,
    mut decide: impl FnMut(&[Option<Vec<u8>>]) -> Result<(Vec<Option<Write>>, T), ClarifyError>,
) -> Result<T, ClarifyError> {
    let what = format!(
        "update {}",
        keys.iter()
            .map(|(kind, name)| format!("{kind}/{name}"))
            .collect::<Vec<_>>()
            .join(" and ")
    );
    let fail = |phase: Phase, e: &postgres::Error| {
        lock_timeout(e, target, &what, lock_timeout_ms)
            .unwrap_or_else(|| failure(target, &what, phase, e))
    };
    conn.set_lock_timeout(lock_timeout_ms)
        .map_err(|e| fail(Phase::Before, &e))?;
    for attempt in 1..=ATTEMPTS {
        match attempt_once(conn, keys, &mut decide) {
            Ok(Some(result)) => return Ok(result),
            // Someone created a document meanwhile: decide again on what they wrote.
            Ok(None) => continue,
            Err(Stop::Decided(e)) => return Err(e),
            Err(Stop::Db(phase, e)) if phase == Phase::Before && is_retryable(&e) => {
                let cap = 2u64.saturating_pow(attempt).min(100);
                std::thread::sleep(Duration::from_millis(fastrand::u64(1..=cap)));
            }
            Err(Stop::Db(phase, e)) => return Err(fail(phase, &e)),
        }
    }
    Err(gave_up(target, &what, ATTEMPTS))
}

/// One transaction; `Ok(None)` when an insert lost the race for a new document.
fn attempt_once<T>(
    conn: &mut Conn,
    keys: &[(&str, &str)],
    decide: &mut impl FnMut(&[Option<Vec<u8>>]) -> Result<(Vec<Option<Write>>, T), ClarifyError>,
) -> Result<Option<T>, Stop> {
    let select = conn.statement(SELECT_FOR_UPDATE)?;
    let replace = conn.statement(REPLACE)?;
    let insert = conn.statement(INSERT)?;
    // Read committed: the row lock serialises writers of one document, and each statement
    // sees what committed before it, so waiting for a lock never ends in a serialization
    // failure the way repeatable read would under contention.
    let mut tx = conn
        .client
        .build_transaction()
        .isolation_level(IsolationLevel::ReadCommitted)
        .start()?;
    let mut current: Vec<Option<Vec<u8>>> = Vec::with_capacity(keys.len());
    for (kind, name) in keys {
        current.push(tx.query_opt(&select, &[kind, name])?.map(|r| r.get(0)));
    }
    let (writes, result) = decide(&current).map_err(Stop::Decided)?;
    if writes.iter().all(Option::is_none) {
        // Nothing to write: the locks go with the transaction.
        tx.rollback()?;
        return Ok(Some(result));
    }
    for (((kind, name), existing), write) in keys.iter().zip(&current).zip(writes) {
        let Some((body, rows)) = write else {
            continue;
        };
        let (records, statuses, stale_after, requesters) = columns(rows);
        let params: [&(dyn postgres::types::ToSql + Sync); 7] = [
            kind,
            name,
            &body,
            &records,
            &statuses,
            &stale_after,
            &requesters,
        ];
        if existing.is_some() {
            tx.execute(&replace, &params)?;
        } else {
            let inserted: i64 = tx.query_one(&insert, &params)?.get(0);
            if inserted == 0 {
                tx.rollback()?;
                return Ok(None);
            }
        }
    }
    tx.commit().map_err(|e| {
        // An error the server sent back means it rolled back; only a connection that went
        // away while committing leaves the outcome unknown.
        let phase = if is_connection_lost(&e) {
            Phase::Commit
        } else {
            Phase::Before
        };
        Stop::Db(phase, e)
    })?;
    Ok(Some(result))
}
