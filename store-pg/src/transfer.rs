//! Export and import of documents (`agentx store export|import`): every document as the bytes
//! its file holds, so a file workspace → database → file workspace round trip is the identity
//! (hash chains and signatures are inside those bytes, untouched).
//!
//! Import runs in one transaction: all of it or nothing. It is idempotent: a document already
//! in the database with the same bytes is left alone. One that is there with other bytes is a
//! conflict, and the import is refused (naming them) unless asked to replace them — importing
//! an old backup over a live hub must be a decision, not an accident.

use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::parallel_map;
use postgres::{IsolationLevel, Transaction};

use crate::documents::{self, rows_of, ActiveRow};
use crate::error::{failure, Phase};
use crate::ledgers::{ledger_number, Stored};
use crate::PgStore;

/// Documents per statement.
const BATCH: usize = 500;
/// Conflicts named in the refusal (the count is always given).
const NAMED: usize = 10;

/// What an import did, by workspace path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    pub added: Vec<String>,
    pub replaced: Vec<String>,
    /// Documents already there with the same bytes.
    pub unchanged: usize,
}

/// One document to import.
struct Doc<'a> {
    path: &'a str,
    kind: &'static str,
    name: &'a str,
    body: &'a [u8],
}

impl PgStore {
    /// Every document, as `(workspace path, bytes)`, read in one snapshot; `put` writes each.
    /// Returns how many there were.
    pub fn export_documents(
        &self,
        mut put: impl FnMut(&str, &[u8]) -> Result<(), ClarifyError>,
    ) -> Result<usize, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail =
            |e: &postgres::Error| failure(&self.target, "export the documents", Phase::Before, e);
        let mut tx = c
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| fail(&e))?;
        let mut rows = tx
            .query_raw(
                concat!(
                    "SELECT d.kind, d.name, d.body, ",
                    crate::record_bodies!(),
                    " FROM agentx.documents d ORDER BY d.kind, length(d.name), d.name"
                ),
                std::iter::empty::<&str>(),
            )
            .map_err(|e| fail(&e))?;
        let mut count = 0;
        while let Some(row) =
            postgres::fallible_iterator::FallibleIterator::next(&mut rows).map_err(|e| fail(&e))?
        {
            let (kind, name): (String, String) = (row.get(0), row.get(1));
            // A ledger stored as rows is exported as the file it stands for.
            let body = Stored::from_columns(row.get(2), row.get(3))
                .to_bytes(&name, ledger_number(&name))?;
            put(&documents::path_of(&kind, &name), &body)?;
            count += 1;
        }
        drop(rows);
        tx.commit().map_err(|e| fail(&e))?;
        Ok(count)
    }

    /// Imports `docs` (`(workspace path, bytes)`, each one a document: `document_of` holds) in
    /// one transaction, as the module says.
    pub fn import_documents(
        &self,
        docs: &[(String, Vec<u8>)],
        replace: bool,
    ) -> Result<Imported, ClarifyError> {
        let mut list = Vec::with_capacity(docs.len());
        for (path, body) in docs {
            let (kind, name) = documents::document_of(path).ok_or_else(|| {
                ClarifyError::input(format!("{path} is not a document of the state"))
            })?;
            list.push(Doc {
                path,
                kind,
                name,
                body,
            });
        }
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let target = self.target.clone();
        let fail = |e: &postgres::Error| failure(&target, "import the documents", Phase::Before, e);
        let mut tx = c
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .map_err(|e| fail(&e))?;
        let existing = existing(&mut tx, &list, &fail)?;
        let mut imported = Imported::default();
        let (mut fresh, mut changed) = (Vec::new(), Vec::new());
        for (doc, same) in list.iter().zip(existing) {
            match same {
                None => fresh.push(doc),
                Some(true) => imported.unchanged += 1,
                Some(false) => changed.push(doc),
            }
        }
        if !changed.is_empty() && !replace {
            let named: Vec<&str> = changed.iter().take(NAMED).map(|d| d.path).collect();
            return Err(ClarifyError::input(format!(
                "{} document(s) already in {target} hold different content ({}{}): nothing imported; replace them with --replace",
                changed.len(),
                named.join(", "),
                if changed.len() > NAMED { ", …" } else { "" }
            )));
        }
        write(&mut tx, &fresh, &changed).map_err(|e| fail(&e))?;
        tx.batch_execute(crate::feed::NOTIFY)
            .map_err(|e| fail(&e))?;
        tx.commit()
            .map_err(|e| failure(&target, "import the documents", Phase::Commit, &e))?;
        imported.added = fresh.iter().map(|d| d.path.to_owned()).collect();
        imported.replaced = changed.iter().map(|d| d.path.to_owned()).collect();
        Ok(imported)
    }
}

/// For each document, whether it exists (`Some`) and holds the same bytes; existing rows are
/// locked until the import ends. A document stored whole is compared on the server; a ledger
/// stored as rows comes back and is compared as the file it stands for.
fn existing(
    tx: &mut Transaction<'_>,
    docs: &[Doc<'_>],
    fail: &dyn Fn(&postgres::Error) -> ClarifyError,
) -> Result<Vec<Option<bool>>, ClarifyError> {
    let mut out = Vec::with_capacity(docs.len());
    for chunk in docs.chunks(BATCH) {
        let (kinds, names, bodies) = arrays(chunk);
        let mut found: Vec<Option<bool>> = vec![None; chunk.len()];
        for row in tx
            .query(
                concat!(
                    "SELECT u.i, d.records IS NULL AND d.body = u.body,
                        CASE WHEN d.records IS NOT NULL THEN d.body END, ",
                    crate::record_bodies!(),
                    " FROM agentx.documents d
                    JOIN unnest($1::text[], $2::text[], $3::bytea[]) WITH ORDINALITY AS u(kind, name, body, i)
                    ON d.kind = u.kind AND d.name = u.name FOR UPDATE OF d"
                ),
                &[&kinds, &names, &bodies],
            )
            .map_err(|e| fail(&e))?
        {
            let i: i64 = row.get(0);
            let Some(k) = usize::try_from(i - 1).ok() else {
                continue;
            };
            let (Some(doc), Some(slot)) = (chunk.get(k), found.get_mut(k)) else {
                continue;
            };
            *slot = Some(match row.get::<_, Option<Vec<u8>>>(2) {
                None => row.get(1),
                Some(head) => {
                    let stored = Stored::from_columns(head, row.get(3));
                    stored.to_bytes(doc.name, ledger_number(doc.name))? == doc.body
                }
            });
        }
        out.extend(found);
    }
    Ok(out)
}

/// Inserts the new documents, replaces the changed ones, and writes their active rows and
/// search index rows.
fn write(
    tx: &mut Transaction<'_>,
    fresh: &[&Doc<'_>],
    changed: &[&Doc<'_>],
) -> Result<(), postgres::Error> {
    for chunk in fresh.chunks(BATCH) {
        let (kinds, names, bodies) = arrays(chunk);
        // A row another writer inserted meanwhile makes the count short: a serialization
        // failure of our own, so the whole import is refused rather than half-merged.
        let n = tx.execute(
            "INSERT INTO agentx.documents (kind, name, body)
             SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[]) ON CONFLICT DO NOTHING",
            &[&kinds, &names, &bodies],
        )?;
        if usize::try_from(n).ok() != Some(chunk.len()) {
            tx.batch_execute(
                "DO $$ BEGIN RAISE EXCEPTION 'another writer created documents during the import' USING ERRCODE = '40001'; END $$",
            )?;
        }
    }
    for chunk in changed.chunks(BATCH) {
        let (kinds, names, bodies) = arrays(chunk);
        // Stored whole from now on, under a new revision: a process holding the ledger as it
        // was reads it again.
        tx.execute(
            "UPDATE agentx.documents d SET body = u.body, records = NULL,
                rev = nextval('agentx.revisions'), updated_at = now()
             FROM unnest($1::text[], $2::text[], $3::bytea[]) AS u(kind, name, body)
             WHERE d.kind = u.kind AND d.name = u.name",
            &[&kinds, &names, &bodies],
        )?;
        tx.execute(
            "DELETE FROM agentx.records r USING unnest($1::text[], $2::text[]) AS u(kind, name)
             WHERE r.kind = u.kind AND r.name = u.name",
            &[&kinds, &names],
        )?;
        tx.execute(
            "DELETE FROM agentx.active a USING unnest($1::text[], $2::text[]) AS u(kind, name)
             WHERE a.kind = u.kind AND a.name = u.name",
            &[&kinds, &names],
        )?;
    }
    let written: Vec<&Doc<'_>> = fresh.iter().chain(changed).copied().collect();
    let rows: Vec<Vec<ActiveRow>> = parallel_map(&written, |d| rows_of(d.kind, d.name, d.body));
    let mut pending: Vec<(&Doc<'_>, ActiveRow)> = Vec::new();
    for (doc, doc_rows) in written.iter().zip(rows) {
        pending.extend(doc_rows.into_iter().map(|r| (*doc, r)));
    }
    for chunk in pending.chunks(BATCH) {
        let kinds: Vec<&str> = chunk.iter().map(|(d, _)| d.kind).collect();
        let names: Vec<&str> = chunk.iter().map(|(d, _)| d.name).collect();
        let rows = chunk.iter().map(|(_, r)| r.clone()).collect();
        documents::insert_active(tx, &kinds, &names, rows)?;
    }
    index_search(tx, &written)
}

/// The search index rows of the clarification ledgers among `written` (a replaced one's old
/// rows go), as every write of a ledger keeps them (`search.rs`).
fn index_search(tx: &mut Transaction<'_>, written: &[&Doc<'_>]) -> Result<(), postgres::Error> {
    let ledgers: Vec<&Doc<'_>> = written
        .iter()
        .filter(|d| d.kind == documents::CLARIFICATIONS)
        .copied()
        .collect();
    if ledgers.is_empty() {
        return Ok(());
    }
    let put = tx.prepare(crate::search::PUT)?;
    for chunk in ledgers.chunks(BATCH) {
        let parts = parallel_map(chunk, |d| {
            let mut put = crate::search::Put::default();
            put.bytes(d.name, d.body);
            put
        });
        let mut all = crate::search::Put::default();
        for p in parts {
            all.extend(p);
        }
        all.execute(tx, &put)?;
    }
    Ok(())
}

fn arrays<'a, D: std::borrow::Borrow<Doc<'a>>>(
    docs: &[D],
) -> (Vec<&'a str>, Vec<&'a str>, Vec<&'a [u8]>) {
    (
        docs.iter().map(|d| d.borrow().kind).collect(),
        docs.iter().map(|d| d.borrow().name).collect(),
        docs.iter().map(|d| d.borrow().body).collect(),
    )
}
