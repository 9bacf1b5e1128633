//! One store update = one transaction: the document's row locked (`SELECT … FOR UPDATE`),
//! the decision made on what it holds, the new document and its rows of `agentx.active` (and,
//! for a clarification ledger, of `agentx.records`) written by one statement, `COMMIT`. A
//! document that does not exist yet is inserted with `ON CONFLICT DO NOTHING`: if another
//! transaction created it first, nothing is written and the whole update runs again on what
//! that one wrote. Serialization failures and deadlocks (SQLSTATE 40001, 40P01) run it again
//! too, a few times with a jittered backoff; the decision closures are pure, so running them
//! again is safe.
//!
//! A clarification ledger written as a ledger is stored as rows (`ledgers.rs`): the update
//! fetches only the record rows newer than the revision this process holds, and writes only
//! the records that changed. The rows of `agentx.active` are compared in the process too:
//! only the records whose rows differ are deleted and inserted. The search index rows of a
//! clarification ledger (`search.rs`) follow the same positions, in the same transaction.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use agentx_clarify_core::{ClarifyError, Ledger};
use postgres::{IsolationLevel, Transaction};

use crate::conn::Conn;
use agentx_clarify_core::monitor::may_act;

use crate::documents::{
    active_row, active_rows, columns, rows_of, ActiveRow, LedgerContext, CLARIFICATIONS,
};
use crate::error::{failure, gave_up, is_connection_lost, is_retryable, lock_timeout, Phase};
use crate::ledgers::{self, Cache, Changes};
use crate::search::Put;

/// Attempts before a run of serialization failures becomes an error.
pub(crate) const ATTEMPTS: u32 = 10;

const SELECT_FOR_UPDATE: &str =
    "SELECT rev, records, body FROM agentx.documents WHERE kind = $1 AND name = $2 FOR UPDATE";

/// The record rows of a ledger written after revision `$3`. A statement of its own after the
/// lock is granted: in read committed it sees what the writer we waited for committed.
const RECORDS_SINCE: &str = "SELECT pos, body FROM agentx.records
    WHERE kind = $1 AND name = $2 AND rev > $3";

/// Replaces a locked document in one statement: its body (`$4` records, or NULL for whole
/// bytes) under a new revision, the changed record rows, the rows past the end removed, and
/// the `agentx.active` rows of the records whose rows differ (`$7`) replaced by the new ones.
const REPLACE: &str = "WITH doc AS (
        UPDATE agentx.documents SET body = $3, records = $4,
            rev = nextval('agentx.revisions'), updated_at = now()
        WHERE kind = $1 AND name = $2 RETURNING rev
    ), put AS (
        INSERT INTO agentx.records (kind, name, pos, rev, body)
        SELECT $1, $2, u.pos, doc.rev, u.body FROM doc, unnest($5::int4[], $6::text[]) AS u(pos, body)
        ON CONFLICT (kind, name, pos) DO UPDATE SET rev = excluded.rev, body = excluded.body
    ), cut AS (
        DELETE FROM agentx.records WHERE kind = $1 AND name = $2 AND pos >= coalesce($4, 0)
    ), gone AS (
        DELETE FROM agentx.active WHERE kind = $1 AND name = $2 AND record = ANY($7::text[])
    ), added AS (
        INSERT INTO agentx.active (kind, name, record, status, stale_after, requester,
            due_ms, asked_ms, waits_on, cycle)
        SELECT $1, $2, * FROM unnest($8::text[], $9::text[], $10::int8[], $11::text[],
            $12::int8[], $13::int8[], $14::text[], $15::bool[])
    )
    SELECT rev FROM doc";

/// Inserts a new document with its record and active rows, unless another transaction
/// inserted it first (then no row comes back and nothing is written).
const INSERT: &str = "WITH doc AS (
        INSERT INTO agentx.documents (kind, name, body, records, rev)
        VALUES ($1, $2, $3, $4, nextval('agentx.revisions'))
        ON CONFLICT (kind, name) DO NOTHING RETURNING rev
    ), put AS (
        INSERT INTO agentx.records (kind, name, pos, rev, body)
        SELECT $1, $2, u.pos, doc.rev, u.body FROM doc, unnest($5::int4[], $6::text[]) AS u(pos, body)
    ), added AS (
        INSERT INTO agentx.active (kind, name, record, status, stale_after, requester,
            due_ms, asked_ms, waits_on, cycle)
        SELECT $1, $2, u.* FROM unnest($7::text[], $8::text[], $9::int8[], $10::text[],
            $11::int8[], $12::int8[], $13::text[], $14::bool[]) AS u
        WHERE EXISTS (SELECT 1 FROM doc)
    )
    SELECT rev FROM doc";

/// What a locked document holds.
pub(crate) enum Held {
    /// Whole bytes (statuses, delegation ledgers, ledgers imported or written as bytes).
    Raw(Vec<u8>),
    /// A clarification ledger stored as rows, as a reader parses it.
    Ledger(Ledger),
}

impl Held {
    /// The ledger held, parsed as the file store parses the file `name`.
    pub fn ledger(&self, name: &str, issue: u32) -> Result<Cow<'_, Ledger>, ClarifyError> {
        match self {
            Held::Raw(bytes) => Ledger::parse(name, bytes, Some(issue)).map(Cow::Owned),
            Held::Ledger(l) => Ok(Cow::Borrowed(l)),
        }
    }

    /// The bytes the file store would hold.
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Held::Raw(bytes) => Cow::Borrowed(bytes),
            Held::Ledger(l) => Cow::Owned(l.to_pretty_json().into_bytes()),
        }
    }

    fn active_rows(&self, kind: &str, name: &str) -> Vec<ActiveRow> {
        match self {
            Held::Raw(bytes) => rows_of(kind, name, bytes),
            Held::Ledger(l) => active_rows(l),
        }
    }
}

/// What a decision wants written.
pub(crate) enum Write {
    /// Whole bytes (and, for a clarification ledger, its rows as an import indexes them).
    Raw(Vec<u8>),
    /// A clarification ledger, stored as rows.
    Ledger(Ledger),
}

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

impl From<ClarifyError> for Stop {
    fn from(e: ClarifyError) -> Stop {
        Stop::Decided(e)
    }
}

/// Read–decide–write of document `(kind, name)` in one transaction, retried as the module says.
pub(crate) fn update_document<T>(
    conn: &mut Conn,
    cache: &Mutex<Cache>,
    target: &str,
    key: (&str, &str),
    lock_timeout_ms: u64,
    mut decide: impl FnMut(Option<&Held>) -> Result<(Option<Write>, T), ClarifyError>,
) -> Result<T, ClarifyError> {
    update_documents(conn, cache, target, &[key], lock_timeout_ms, |current| {
        let (write, result) = decide(current.first().and_then(Option::as_ref))?;
        Ok((vec![write], result))
    })
}

/// Read–decide–write of several documents in one transaction: their rows are locked in the
/// order given (every caller uses one order — a clarification ledger before its issue's
/// delegation ledger — so two of them never wait on each other), `decide` sees every document
/// and returns what to write for each (by position), and all of it commits or none.
pub(crate) fn update_documents<T>(
    conn: &mut Conn,
    cache: &Mutex<Cache>,
    target: &str,
    keys: &[(&str, &str)],
    lock_timeout_ms: u64,
    mut decide: impl FnMut(&[Option<Held>]) -> Result<(Vec<Option<Write>>, T), ClarifyError>,
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
        match attempt_once(conn, cache, keys, &mut decide) {
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

/// A locked document: its revision and what it holds.
struct Locked {
    rev: i64,
    held: Held,
}

/// One transaction, in phases: lock and read every document, decide, write what was decided,
/// signal and commit, then keep what was read or written in the cache. `Ok(None)` when an
/// insert lost the race for a new document.
fn attempt_once<T>(
    conn: &mut Conn,
    cache: &Mutex<Cache>,
    keys: &[(&str, &str)],
    decide: &mut impl FnMut(&[Option<Held>]) -> Result<(Vec<Option<Write>>, T), ClarifyError>,
) -> Result<Option<T>, Stop> {
    let statements = Statements {
        select: conn.statement(SELECT_FOR_UPDATE)?,
        since: conn.statement(RECORDS_SINCE)?,
        replace: conn.statement(REPLACE)?,
        insert: conn.statement(INSERT)?,
        search: conn.statement(crate::search::PUT)?,
    };
    // Read committed: the row lock serialises writers of one document, and each statement
    // sees what committed before it, so waiting for a lock never ends in a serialization
    // failure the way repeatable read would under contention.
    let lock_wait = conn.lock_wait_ms();
    let mut tx = conn
        .client
        .build_transaction()
        .isolation_level(IsolationLevel::ReadCommitted)
        .start()?;
    Conn::bound_statements(&mut tx, lock_wait)?;
    let (revs, current) = lock_documents(&mut tx, &statements, cache, keys)?;
    let (writes, result) = decide(&current)?;
    if writes.iter().all(Option::is_none) {
        // Nothing to write: the locks go with the transaction; what was read stays cached.
        tx.rollback()?;
        keep(cache, keys, revs, current);
        return Ok(Some(result));
    }
    let mut unchanged: Vec<(&str, i64, Ledger)> = Vec::new();
    let mut written: Vec<(&str, i64, Ledger, Changes)> = Vec::new();
    for ((((kind, name), rev), held), write) in keys.iter().zip(&revs).zip(&current).zip(writes) {
        let Some(write) = write else {
            // A ledger held and left alone: cached as it is once the transaction commits.
            if let (Some(rev), Some(Held::Ledger(l))) = (rev, held) {
                unchanged.push((name, *rev, l.clone()));
            }
            continue;
        };
        match write_document(
            &mut tx,
            &statements,
            (kind, name),
            *rev,
            held.as_ref(),
            write,
        )? {
            Wrote::Lost => {
                tx.rollback()?;
                return Ok(None);
            }
            Wrote::Ledger(new_rev, ledger, changes) => {
                written.push((name, new_rev, ledger, changes));
            }
            Wrote::Raw => {}
        }
    }
    // Readers of the change feed learn of the write when it commits (store-pg/src/feed.rs).
    tx.batch_execute(crate::feed::NOTIFY)?;
    if !crate::watch::begin_commit() {
        // The caller stopped waiting and said nothing was written: it stays so.
        tx.rollback()?;
        return Err(Stop::Decided(given_up()));
    }
    let committed = tx.commit();
    crate::watch::end_commit(committed.is_ok());
    committed.map_err(|e| {
        // An error the server sent back means it rolled back; only a connection that went
        // away while committing leaves the outcome unknown.
        let phase = if is_connection_lost(&e) {
            Phase::Commit
        } else {
            Phase::Before
        };
        Stop::Db(phase, e)
    })?;
    agentx_clarify_store::clock::bench_commit();
    cache_committed(cache, unchanged, written);
    Ok(Some(result))
}

/// A write whose caller stopped waiting for the database (`watch.rs`), rolled back.
pub(crate) fn given_up() -> ClarifyError {
    crate::error::io(format!(
        "the database showed no progress for {} ms, so the request was given up before this change was committed; nothing was written",
        crate::watch::timeout().as_millis()
    ))
}

/// The prepared statements of one update.
struct Statements {
    select: postgres::Statement,
    since: postgres::Statement,
    replace: postgres::Statement,
    insert: postgres::Statement,
    search: postgres::Statement,
}

/// Phase 1: each document locked (`FOR UPDATE`) and read, in the order of `keys`: its revision
/// and what it holds (`None`: no such document yet).
#[allow(clippy::type_complexity)]
fn lock_documents(
    tx: &mut Transaction<'_>,
    statements: &Statements,
    cache: &Mutex<Cache>,
    keys: &[(&str, &str)],
) -> Result<(Vec<Option<i64>>, Vec<Option<Held>>), Stop> {
    let mut revs: Vec<Option<i64>> = Vec::with_capacity(keys.len());
    let mut current: Vec<Option<Held>> = Vec::with_capacity(keys.len());
    for (kind, name) in keys {
        let locked = match tx.query_opt(&statements.select, &[kind, name])? {
            None => None,
            Some(row) => {
                let (rev, records, body): (i64, Option<i32>, Vec<u8>) =
                    (row.get(0), row.get(1), row.get(2));
                let held = match records {
                    None => Held::Raw(body),
                    Some(count) => {
                        Held::Ledger(sync(tx, &statements.since, cache, name, rev, count, &body)?)
                    }
                };
                Some(Locked { rev, held })
            }
        };
        revs.push(locked.as_ref().map(|l| l.rev));
        current.push(locked.map(|l| l.held));
    }
    Ok((revs, current))
}

/// What writing one document did (one at a time, moved straight into the list of writes: its
/// size costs nothing, a box would cost an allocation).
#[allow(clippy::large_enum_variant)]
enum Wrote {
    /// Another writer created the document first: decide again.
    Lost,
    /// A ledger stored as rows: its new revision, the ledger and what changed (for the cache).
    Ledger(i64, Ledger, Changes),
    /// Raw bytes (statuses, delegation ledgers).
    Raw,
}

/// Phase 3: one document written as decided — its body (for a ledger, the records that
/// changed) and its rows of `agentx.active` (the delta from what it held).
fn write_document(
    tx: &mut Transaction<'_>,
    statements: &Statements,
    (kind, name): (&str, &str),
    rev: Option<i64>,
    held: Option<&Held>,
    write: Write,
) -> Result<Wrote, Stop> {
    let old_ledger = match held {
        Some(Held::Ledger(l)) => Some(l),
        _ => None,
    };
    let old_rows = || held.map(|h| h.active_rows(kind, name)).unwrap_or_default();
    // A clarification ledger's search rows: those of the records that changed (`search.rs`).
    let mut search = Put::default();
    let (body, count, changes, (gone, added), ledger) = match write {
        Write::Raw(bytes) => {
            let delta = row_changes(&old_rows(), &rows_of(kind, name, &bytes));
            if kind == CLARIFICATIONS {
                search.bytes(name, &bytes);
            }
            (bytes, None, None, delta, None)
        }
        Write::Ledger(ledger) => {
            let changes = ledgers::changes(old_ledger, &ledger)?;
            let delta = match old_ledger {
                Some(old) => ledger_row_changes(old, &ledger, &changes),
                None => row_changes(&old_rows(), &active_rows(&ledger)),
            };
            search.ledger(name, &ledger, &changes.positions, changes.count);
            let body = changes.head.clone().into_bytes();
            (
                body,
                Some(changes.count),
                Some(changes),
                delta,
                Some(ledger),
            )
        }
    };
    let (positions, bodies): (&[i32], &[String]) = changes
        .as_ref()
        .map_or((&[], &[]), |c| (&c.positions, &c.bodies));
    let added = columns(added);
    // `REPLACE` and `INSERT` take the same parameters, but for `INSERT` no old rows to delete.
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> =
        vec![&kind, &name, &body, &count, &positions, &bodies];
    if rev.is_some() {
        params.push(&gone);
    }
    params.extend(added.params());
    let new_rev: i64 = if rev.is_some() {
        tx.query_one(&statements.replace, &params)?.get(0)
    } else {
        match tx.query_opt(&statements.insert, &params)? {
            Some(row) => row.get(0),
            None => return Ok(Wrote::Lost),
        }
    };
    search.execute(tx, &statements.search)?;
    Ok(match (ledger, changes) {
        (Some(ledger), Some(changes)) => Wrote::Ledger(new_rev, ledger, changes),
        _ => Wrote::Raw,
    })
}

/// Phase 5, after the commit: the ledgers held and left alone, and those written (made as a
/// reader parses them back), go to the cache.
fn cache_committed(
    cache: &Mutex<Cache>,
    unchanged: Vec<(&str, i64, Ledger)>,
    written: Vec<(&str, i64, Ledger, Changes)>,
) {
    let mut kept = unchanged;
    for (name, rev, ledger, changes) in written {
        // Committed: a ledger that does not parse back is simply not kept (the next update
        // reads it from the database and says what is wrong with it).
        if let Ok(after) =
            ledger_issue(name).and_then(|issue| ledgers::after(name, issue, ledger, &changes))
        {
            kept.push((name, rev, after));
        }
    }
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    for (name, rev, ledger) in kept {
        cache.put(name, rev, ledger);
    }
}

/// The issue of a clarification ledger's document name.
fn ledger_issue(name: &str) -> Result<u32, ClarifyError> {
    ledgers::ledger_number(name).ok_or_else(|| ledgers::corrupt(name, "not a ledger's name"))
}

/// The ledger stored as rows under `name` at revision `rev` with `count` records and head
/// `head`: what this process holds brought up to date with the rows written since, or every
/// row when it holds nothing (or something that does not add up).
fn sync(
    tx: &mut Transaction<'_>,
    since: &postgres::Statement,
    cache: &Mutex<Cache>,
    name: &str,
    rev: i64,
    count: i32,
    head: &[u8],
) -> Result<Ledger, Stop> {
    let issue = ledger_issue(name)?;
    let held = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take(name)
        .filter(|(held_rev, _)| *held_rev <= rev);
    let held = match held {
        Some((held_rev, ledger)) if held_rev == rev => return Ok(ledger),
        other => other,
    };
    let count = usize::try_from(count).unwrap_or(0);
    // What is held plus the newer rows; if that does not add up, every row (once).
    let bases = held.map(Some).into_iter().chain([None]);
    for base in bases {
        let from = base.as_ref().map_or(-1, |(r, _)| *r);
        let rows = tx.query(since, &[&CLARIFICATIONS, &name, &from])?;
        let mut slots: Vec<Option<_>> = base
            .map(|(_, l)| l.clarifications.into_iter().take(count).map(Some).collect())
            .unwrap_or_default();
        slots.resize(count, None);
        let (positions, texts): (Vec<i32>, Vec<String>) =
            rows.iter().map(|r| (r.get::<_, i32>(0), r.get(1))).unzip();
        let parsed = ledgers::parse_records(name, issue, &texts)?;
        for (pos, record) in positions.into_iter().zip(parsed) {
            if let Some(slot) = usize::try_from(pos).ok().and_then(|p| slots.get_mut(p)) {
                *slot = Some(record);
            }
        }
        if let Some(records) = slots.into_iter().collect::<Option<Vec<_>>>() {
            let mut ledger = Ledger::parse(name, head, Some(issue))?;
            ledger.clarifications = records;
            return Ok(ledger);
        }
    }
    Err(Stop::Decided(ledgers::corrupt(
        name,
        format!("it says {count} records, but not every one has a row"),
    )))
}

/// Keeps what an update read without writing.
fn keep(
    cache: &Mutex<Cache>,
    keys: &[(&str, &str)],
    revs: Vec<Option<i64>>,
    current: Vec<Option<Held>>,
) {
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    for (((_, name), rev), held) in keys.iter().zip(revs).zip(current) {
        if let (Some(rev), Some(Held::Ledger(l))) = (rev, held) {
            cache.put(name, rev, l);
        }
    }
}

/// The records whose `agentx.active` rows differ between `old` and `new`, and the rows of
/// `new` for them: deleting every row of those records and inserting these brings the table
/// from `old` to `new`.
fn row_changes(old: &[ActiveRow], new: &[ActiveRow]) -> (Vec<String>, Vec<ActiveRow>) {
    let group = |rows: &[ActiveRow]| {
        let mut by: BTreeMap<String, Vec<ActiveRow>> = BTreeMap::new();
        for r in rows {
            by.entry(r.record.clone()).or_default().push(r.clone());
        }
        by
    };
    let (before, after) = (group(old), group(new));
    let mut gone = Vec::new();
    let mut added = Vec::new();
    for (record, rows) in &after {
        if before.get(record) != Some(rows) {
            if before.contains_key(record) {
                gone.push(record.clone());
            }
            added.extend(rows.iter().cloned());
        }
    }
    gone.extend(
        before
            .keys()
            .filter(|record| !after.contains_key(*record))
            .cloned(),
    );
    (gone, added)
}

/// [`row_changes`] for a ledger written over the ledger `old` it held, without building
/// every record's row twice: when both have an active record (the index keeps their active
/// records), only the records at the changed positions, and those past the new end, can have
/// other rows. Every row of such a record's id is replaced, so a repeated id stays right.
fn ledger_row_changes(
    old: &Ledger,
    new: &Ledger,
    changes: &Changes,
) -> (Vec<String>, Vec<ActiveRow>) {
    // A record's row also holds what the whole ledger decides (its wait-for edges and their
    // cycle): when that changed, every row is compared.
    let context = LedgerContext::of(new);
    if !(may_act(old) && may_act(new)) || LedgerContext::of(old) != context {
        return row_changes(&active_rows(old), &active_rows(new));
    }
    let at = |l: &Ledger, p: usize| l.clarifications.get(p).map(|r| r.id.clone());
    let mut ids: Vec<String> = Vec::new();
    for pos in changes
        .positions
        .iter()
        .filter_map(|p| usize::try_from(*p).ok())
    {
        ids.extend(at(old, pos));
        ids.extend(at(new, pos));
    }
    ids.extend(
        old.clarifications
            .iter()
            .skip(new.clarifications.len())
            .map(|r| r.id.clone()),
    );
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let added = new
        .clarifications
        .iter()
        .filter(|r| ids.binary_search(&r.id).is_ok())
        .filter_map(|r| active_row(r, &context))
        .collect();
    (ids, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(record: &str, status: &'static str) -> ActiveRow {
        ActiveRow {
            record: record.to_owned(),
            status,
            stale_after: None,
            requester: None,
            due_ms: None,
            asked_ms: None,
            waits_on: None,
            cycle: false,
        }
    }

    #[test]
    fn only_the_records_whose_rows_differ_are_replaced() {
        let old = [row("A", "pending"), row("B", "pending"), row("C", "stale")];
        let new = [
            row("A", "pending"),
            row("B", "answered"),
            row("D", "pending"),
        ];
        let (gone, added) = row_changes(&old, &new);
        assert_eq!(gone, ["B", "C"]);
        assert_eq!(added, [row("B", "answered"), row("D", "pending")]);
        assert_eq!(row_changes(&new, &new), (Vec::new(), Vec::new()));
    }

    /// The rows after deleting every row of `gone`'s records and inserting `added`.
    fn applied(old: &[ActiveRow], (gone, added): (Vec<String>, Vec<ActiveRow>)) -> Vec<ActiveRow> {
        let mut rows: Vec<ActiveRow> = old
            .iter()
            .filter(|r| !gone.contains(&r.record))
            .cloned()
            .collect();
        rows.extend(added);
        rows.sort_by(|a, b| (&a.record, a.status).cmp(&(&b.record, b.status)));
        rows
    }

    #[test]
    fn a_written_ledger_moves_the_index_as_a_full_comparison_would() {
        let text = r#"{"issueNumber": 3, "clarifications": [
            {"id": "CLR-3-001", "from": "a", "to": "b", "topic": "t", "status": "pending"},
            {"id": "CLR-3-002", "from": "a", "to": "b", "topic": "t", "status": "resolved"},
            {"id": "CLR-3-002", "from": "c", "to": "b", "topic": "t", "status": "pending"},
            {"id": "CLR-3-004", "from": "a", "to": "b", "topic": "t", "status": "pending"}
        ]}"#;
        let old = Ledger::parse("issue-3.json", text.as_bytes(), Some(3)).unwrap();
        let resolve = |l: &mut Ledger, i: usize| {
            l.clarifications[i].status = agentx_clarify_core::Status::Resolved;
            l.clarifications[i].thread.clear();
        };
        let mut cases = Vec::new();
        let mut appended = old.clone();
        appended.clarifications.push(old.clarifications[0].clone());
        appended.clarifications[4].id = String::from("CLR-3-005");
        cases.push(appended);
        let mut repeated = old.clone();
        repeated.clarifications[2].topic = String::from("changed");
        cases.push(repeated);
        let mut shorter = old.clone();
        shorter.clarifications.truncate(2);
        cases.push(shorter);
        let mut finished = old.clone();
        for i in [0, 2, 3] {
            resolve(&mut finished, i);
        }
        cases.push(finished);
        for new in cases {
            let c = ledgers::changes(Some(&old), &new).unwrap();
            let full = row_changes(&active_rows(&old), &active_rows(&new));
            let want = applied(&active_rows(&old), full);
            let got = applied(&active_rows(&old), ledger_row_changes(&old, &new, &c));
            assert_eq!(
                got,
                want,
                "{:?}",
                new.clarifications.iter().map(|r| &r.id).collect::<Vec<_>>()
            );
        }
    }
}
