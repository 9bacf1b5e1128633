//! The schema, created and migrated by `agentx store init`: numbered migrations, applied in
//! order in one transaction under an advisory lock (two `init`s at once apply each migration
//! once), recorded in `agentx.migrations`. Every other command checks the recorded version
//! and refuses a database that is behind (run `init`) or ahead (upgrade `agentx`).
//!
//! Everything lives in the schema `agentx`, so the tables can share a database with others.

use postgres::Client;

/// The version this build reads and writes.
pub const VERSION: i32 = 11;

/// What a migration does after its SQL, in the same transaction (rows computed by the same
/// code as every write).
type Step = fn(&mut postgres::Transaction<'_>) -> Result<(), postgres::Error>;

/// `(version, what it does, SQL, then a step in Rust)`, in order. Never edit an applied
/// migration: add one.
const MIGRATIONS: &[(i32, &str, &str, Option<Step>)] = &[
    (
        1,
        "documents and the index of active records",
        r"
-- Every document of a workspace's state: clarification ledgers, delegation ledgers and the
-- agent statuses, each as the exact bytes its file holds (export writes them back unchanged).
CREATE TABLE agentx.documents (
    kind text NOT NULL CHECK (kind IN ('clarifications', 'delegations', 'state')),
    name text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]*$'),
    body bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, name)
);

-- The index of active records: one row per pending, stale or answered record (or one
-- 'unreadable' row for a document that does not parse), written in the transaction that
-- writes its document. The monitor reads the documents that have a row here.
CREATE TABLE agentx.active (
    kind text NOT NULL,
    name text NOT NULL,
    record text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'stale', 'answered', 'unreadable')),
    stale_after bigint,
    requester text,
    FOREIGN KEY (kind, name) REFERENCES agentx.documents (kind, name) ON DELETE CASCADE
);
CREATE INDEX active_document ON agentx.active (kind, name);
",
        None,
    ),
    (
        2,
        "routing leases",
        r"
-- Routing leases (docs/protocol.md §14.2 step 2), one row per record being routed, so routers on
-- different machines never both run one record's agent. Expiry is on the server's clock
-- (every router compares against the same one); `token` identifies one taking, so a router
-- releases only its own lease.
CREATE TABLE agentx.leases (
    id text PRIMARY KEY,
    token text NOT NULL,
    pid bigint NOT NULL,
    hostname text NOT NULL,
    taken_ms bigint NOT NULL,
    expires_ms bigint NOT NULL
);
",
        None,
    ),
    (
        3,
        "lz4 compression for document bodies",
        r"
-- A ledger is rewritten whole by every write to its issue; with the default pglz, compressing
-- and decompressing a 270 KB ledger took 11 ms of each write, with lz4 about 1.5 ms (PostgreSQL
-- 14 and later; a server built without lz4 keeps pglz). Rows written before keep their
-- compression until rewritten.
DO $$
BEGIN
    ALTER TABLE agentx.documents ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END
$$;
",
        None,
    ),
    (
        4,
        "clarification ledgers as one row per record",
        r"
-- An ask on a ledger of hundreds of records used to read, parse, serialise and rewrite the
-- whole ledger under its row lock; with eight writers on one issue that lock was the hub's
-- throughput. A ledger written by a command is now kept as its head (the ledger without its
-- records, compact JSON) in `documents.body` and one row per record here, each stamped with
-- the revision that last wrote it: a writer rewrites only the records that changed, and a
-- process that read the ledger before fetches only the rows newer than what it holds.
-- `documents.records` is the number of records (NULL: `body` is the whole document, as
-- imported or written as bytes). Every write of a document takes a new revision from one
-- sequence, so a revision is never reused, even by a document deleted and created again.
CREATE SEQUENCE agentx.revisions;
ALTER TABLE agentx.documents
    ADD COLUMN rev bigint NOT NULL DEFAULT nextval('agentx.revisions'),
    ADD COLUMN records integer CHECK (records >= 0);
CREATE TABLE agentx.records (
    kind text NOT NULL,
    name text NOT NULL,
    pos integer NOT NULL CHECK (pos >= 0),
    rev bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (kind, name, pos),
    FOREIGN KEY (kind, name) REFERENCES agentx.documents (kind, name) ON DELETE CASCADE
);
CREATE INDEX records_rev ON agentx.records (kind, name, rev);
",
        None,
    ),
    (
        5,
        "delegation ledgers in the index of active records",
        r"
-- A delegation ledger has one row per accepted delegation that can time out (stale_after =
-- its deadline), or one 'unreadable' row, so the monitor after a command reads only those
-- (store-pg/src/documents.rs, rows_of). The rows of the ledgers already stored are written
-- by the migration itself, in Rust (schema.rs, index_delegations).
ALTER TABLE agentx.active DROP CONSTRAINT active_status_check;
ALTER TABLE agentx.active ADD CONSTRAINT active_status_check
    CHECK (status IN ('pending', 'stale', 'answered', 'unreadable', 'accepted'));
",
        Some(index_delegations),
    ),
    (
        6,
        "the follow-up monitor's columns in the index of active records",
        r"
-- The monitor that follows a command reads only what can need action now or because of this
-- command (docs/protocol.md §29), by indexed queries instead of every open row: the rows due by its time
-- (due_ms: the core's due_at for a pending or stale record, an accepted delegation's
-- deadline, the smallest bigint for a document that does not parse), the rows of ledgers
-- whose wait-for edges hold a cycle (waits_on: the edge requester → waits_on of a blocking
-- pending or stale record; cycle: its ledger's edges hold a cycle), and the rows of the
-- agents whose status may abandon them asked before that status changed (asked_ms: the
-- latest question or retry). The rows already stored are written again by the migration
-- itself, in Rust (schema.rs, index_follow_up), by the same code as every write.
ALTER TABLE agentx.active
    ADD COLUMN due_ms bigint,
    ADD COLUMN asked_ms bigint,
    ADD COLUMN waits_on text,
    ADD COLUMN cycle boolean NOT NULL DEFAULT false;
CREATE INDEX active_due ON agentx.active (kind, due_ms) WHERE due_ms IS NOT NULL;
CREATE INDEX active_cycle ON agentx.active (kind) WHERE cycle;
CREATE INDEX active_asker ON agentx.active (kind, requester, asked_ms);
",
        Some(index_follow_up),
    ),
    (
        7,
        "access tokens of agentx serve, documents by revision",
        r"
-- The tokens of `agentx serve` (docs/protocol.md §23): each row one token's entry as JSON — its SHA-256,
-- name, kind, created and last-used times; never the token itself.
CREATE TABLE agentx.tokens (
    pos integer PRIMARY KEY CHECK (pos >= 0),
    body text NOT NULL
);
-- The server's change feed asks for the documents written lately (store-pg/src/feed.rs).
CREATE INDEX documents_rev ON agentx.documents (rev);
",
        None,
    ),
    (
        8,
        "small state documents: the notification outbox, GitHub Mode's cursors",
        r"
-- What the file store keeps as .agentx/state/<name>.json under a lock of its own: the
-- notification outbox (`outbox`: what each sink was sent and when to try again) and GitHub
-- Mode's sync state (`github`). One row per document, changed under its row lock.
CREATE TABLE agentx.state_docs (
    name text PRIMARY KEY,
    body text NOT NULL
);
",
        None,
    ),
    (
        9,
        "access tokens as the tokens state document",
        r"
-- The tokens of `agentx serve` become the `tokens` state document (docs/protocol.md §21),
-- changed under its row lock like the outbox: what the file store keeps as
-- .agentx/state/tokens.json. The rows of agentx.tokens (migration 7) are moved into it and
-- the table is dropped by the migration itself, in Rust (schema.rs, tokens_to_state_doc), so
-- the document's text is what the state side writes.
",
        Some(tokens_to_state_doc),
    ),
    (
        10,
        "the search index of clarification records",
        r"
-- `clarify search` and an ask's `related` (docs/protocol.md §36) find records through this
-- index instead of reading every ledger: one row per record, by position in its ledger,
-- written in the transaction that writes the ledger (store-pg/src/search.rs). `words` is the
-- core's tokens of the record's text put in with array_to_tsvector (no text-search parser:
-- a lexeme is exactly a word the core counts), under a GIN index; `rest` holds the words a
-- tsvector cannot (longer than a lexeme may be, or past its size). `asked` is the words of
-- the topic and first question, as a tsvector too (and `asked_rest`, `asked_len` their
-- number), `seq` the bits of the record's u64 sequence, `supersedes`
-- the records its resolutions supersede, each with that resolution's time in
-- `supersedes_ms`. The rows of the ledgers already stored are written by the migration
-- itself, in Rust (schema.rs, index_search), by the same code as every write.
CREATE TABLE agentx.search_records (
    kind text NOT NULL CHECK (kind = 'clarifications'),
    name text NOT NULL,
    pos integer NOT NULL CHECK (pos >= 0),
    issue integer NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL,
    status text NOT NULL,
    field text,
    from_agent text NOT NULL,
    to_agent text NOT NULL,
    words tsvector NOT NULL,
    rest text[],
    asked tsvector NOT NULL,
    asked_rest text[],
    asked_len integer NOT NULL,
    last_ms bigint NOT NULL,
    supersedes text[] NOT NULL,
    supersedes_ms bigint[] NOT NULL,
    PRIMARY KEY (kind, name, pos),
    FOREIGN KEY (kind, name) REFERENCES agentx.documents (kind, name) ON DELETE CASCADE
);
CREATE INDEX search_words ON agentx.search_records USING gin (words);
CREATE INDEX search_rest ON agentx.search_records USING gin (rest) WHERE rest IS NOT NULL;
CREATE INDEX search_field ON agentx.search_records (field) WHERE field IS NOT NULL;
CREATE INDEX search_supersedes ON agentx.search_records USING gin (supersedes)
    WHERE supersedes <> '{}';
-- A search without words lists the newest first: in this order, read off the index.
CREATE INDEX search_recent ON agentx.search_records (last_ms DESC, issue, (seq < 0), seq);
",
        Some(index_search),
    ),
    (
        11,
        "held escalated records in the index of active records",
        r"
-- A claim or handoff of an escalated record lapses by time (docs/protocol.md §37): the
-- record has a row (status 'escalated', due_ms its claim's `until`) so the monitor's wake-up
-- and the monitor after a command find it. No ledger stored before this version holds a
-- claim, so there are no rows to write.
ALTER TABLE agentx.active DROP CONSTRAINT active_status_check;
ALTER TABLE agentx.active ADD CONSTRAINT active_status_check
    CHECK (status IN ('pending', 'stale', 'answered', 'unreadable', 'accepted', 'escalated'));
",
        None,
    ),
];

/// Ledgers read at a time by [`index_search`].
const SEARCH_PAGE: i64 = 500;

/// Migration 10's step: the search index rows of every clarification ledger stored, a page
/// of ledgers at a time (a ledger that does not parse has none, as a scan cannot read it).
fn index_search(tx: &mut postgres::Transaction<'_>) -> Result<(), postgres::Error> {
    let put = tx.prepare(crate::search::PUT)?;
    let mut after = String::new();
    loop {
        let docs = tx.query(
            concat!(
                "SELECT d.name, d.body, ",
                crate::record_bodies!(),
                " FROM agentx.documents d WHERE d.kind = 'clarifications' AND d.name > $1
                ORDER BY d.name LIMIT $2"
            ),
            &[&after, &SEARCH_PAGE],
        )?;
        let Some(last) = docs.last() else {
            return Ok(());
        };
        after = last.get(0);
        let ledgers: Vec<(String, Option<agentx_clarify_core::Ledger>)> = docs
            .iter()
            .map(|doc| {
                let name: String = doc.get(0);
                let stored = crate::ledgers::Stored::from_columns(doc.get(1), doc.get(2));
                let ledger =
                    crate::ledgers::ledger_number(&name).and_then(|n| stored.ledger(&name, n).ok());
                (name, ledger)
            })
            .collect();
        crate::search::put_all(&ledgers).execute(tx, &put)?;
    }
}

/// Migration 9's step: the rows of `agentx.tokens`, in their order, as the `tokens` state
/// document — `{"tokens": [...]}` as `docs::update_json` writes it (pretty, one newline at
/// the end; each entry's keys in their stored order) — when there are any; then the table
/// goes.
fn tokens_to_state_doc(tx: &mut postgres::Transaction<'_>) -> Result<(), postgres::Error> {
    let rows = tx.query("SELECT body FROM agentx.tokens ORDER BY pos", &[])?;
    if !rows.is_empty() {
        // A row that is not JSON (only a hand edit makes one) is kept as a string, not lost:
        // the server then reports the document as corrupt instead of forgetting a token.
        let tokens: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let body: String = r.get(0);
                serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body))
            })
            .collect();
        let doc = serde_json::json!({ "tokens": tokens });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        tx.execute(
            "INSERT INTO agentx.state_docs (name, body) VALUES ('tokens', $1)",
            &[&text],
        )?;
    }
    tx.batch_execute("DROP TABLE agentx.tokens")
}

/// Migration 6's step: every document's `agentx.active` rows written again with the new
/// columns (the ledgers stored as records are assembled first).
fn index_follow_up(tx: &mut postgres::Transaction<'_>) -> Result<(), postgres::Error> {
    let docs = tx.query(
        concat!(
            "SELECT d.kind, d.name, d.body, ",
            crate::record_bodies!(),
            " FROM agentx.documents d WHERE d.kind IN ('clarifications', 'delegations')"
        ),
        &[],
    )?;
    tx.execute(
        "DELETE FROM agentx.active WHERE kind IN ('clarifications', 'delegations')",
        &[],
    )?;
    let (mut kinds, mut names, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for doc in &docs {
        let kind: String = doc.get(0);
        let name: String = doc.get(1);
        let stored = crate::ledgers::Stored::from_columns(doc.get(2), doc.get(3));
        let issue = crate::ledgers::ledger_number(&name);
        // A document that cannot be assembled is indexed as one that does not parse.
        let bytes = stored.to_bytes(&name, issue).unwrap_or_default();
        let kind_static = if kind == crate::documents::CLARIFICATIONS {
            crate::documents::CLARIFICATIONS
        } else {
            crate::documents::DELEGATIONS
        };
        for row in crate::documents::rows_of(kind_static, &name, &bytes) {
            kinds.push(kind.clone());
            names.push(name.clone());
            rows.push(row);
        }
    }
    crate::documents::insert_active(tx, &kinds, &names, rows)?;
    Ok(())
}

/// Migration 5's step: the `agentx.active` rows of the delegation ledgers already stored.
fn index_delegations(tx: &mut postgres::Transaction<'_>) -> Result<(), postgres::Error> {
    let docs = tx.query(
        "SELECT name, body FROM agentx.documents WHERE kind = 'delegations'",
        &[],
    )?;
    let mut names = Vec::new();
    let mut rows = Vec::new();
    for doc in &docs {
        let name: String = doc.get(0);
        let body: Vec<u8> = doc.get(1);
        for row in crate::documents::rows_of(crate::documents::DELEGATIONS, &name, &body) {
            names.push(name.clone());
            rows.push(row);
        }
    }
    // The columns of version 5 (migration 6 writes every row again with its own).
    let c = crate::documents::columns(rows);
    tx.execute(
        "INSERT INTO agentx.active (kind, name, record, status, stale_after, requester)
         SELECT 'delegations', * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[])",
        &[&names, &c.records, &c.statuses, &c.stale_after, &c.requesters],
    )?;
    Ok(())
}

/// What `init` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The version found (0: no schema).
    pub from: i32,
    /// The version now.
    pub to: i32,
    /// The migrations applied, as `"<version>: <what>"`.
    pub applied: Vec<String>,
}

/// The recorded version; `None` when there is no schema at all.
pub(crate) fn current(client: &mut Client) -> Result<Option<i32>, postgres::Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('agentx.migrations') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(None);
    }
    let row = client.query_one(
        "SELECT coalesce(max(version), 0) FROM agentx.migrations",
        &[],
    )?;
    Ok(Some(row.get(0)))
}

/// Applies every missing migration in one transaction.
pub(crate) fn migrate(client: &mut Client) -> Result<Migration, postgres::Error> {
    let mut tx = client.transaction()?;
    // One migrator at a time, whoever else runs `init` now (released at commit).
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('agentx.migrations'))",
        &[],
    )?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS agentx;
         CREATE TABLE IF NOT EXISTS agentx.migrations (
             version integer PRIMARY KEY,
             description text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
         );",
    )?;
    let from: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM agentx.migrations",
            &[],
        )?
        .get(0);
    let mut applied = Vec::new();
    for (version, what, sql, step) in MIGRATIONS {
        if *version <= from {
            continue;
        }
        tx.batch_execute(sql)?;
        if let Some(step) = step {
            step(&mut tx)?;
        }
        tx.execute(
            "INSERT INTO agentx.migrations (version, description) VALUES ($1, $2)",
            &[version, what],
        )?;
        applied.push(format!("{version}: {what}"));
    }
    tx.commit()?;
    Ok(Migration {
        from,
        to: from.max(VERSION),
        applied,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_up_to_the_version() {
        let versions: Vec<i32> = MIGRATIONS.iter().map(|(v, _, _, _)| *v).collect();
        let expected: Vec<i32> = (1..=VERSION).collect();
        assert_eq!(versions, expected);
    }
}
