//! The search index (schema migration 10, docs/protocol.md §36 "Indexes"): one row per
//! clarification record in `agentx.search_records`, what the core's `probe::indexed` makes of
//! it — its words as a `tsvector` under a GIN index, its asked words, filters, recency and the
//! records it supersedes — written in the transaction that writes its ledger (`update.rs`,
//! `transfer.rs`, the migration's backfill), so it is never behind the ledgers.
//!
//! A search finds the records holding one of the probe's words (`words @@ tsquery`) or of its
//! field, under the filters, and reads back per record only the counts the core ranks by
//! (`probe::Counts`, computed in SQL); the core's key picks the best (`search_index`). The
//! lexemes are the core's own tokens, put in with `array_to_tsvector` and looked up as quoted
//! lexemes: no PostgreSQL text parser changes a word on either side.

use std::collections::BTreeMap;

use agentx_clarify_core::search::probe::{indexed, latest_superseder, Candidates, Probe, RankKey};
use agentx_clarify_core::search::probe::{Counts, Indexed};
use agentx_clarify_core::Ledger;
use postgres::types::ToSql;
use serde_json::{json, Value};

use crate::ledgers::ledger_number;

/// The longest word (bytes) kept as a lexeme: PostgreSQL's limit is 2047, and
/// `array_to_tsvector` does not check it (a longer one is silently cut).
pub(crate) const LEXEME_MAX: usize = 2000;

/// The lexeme bytes one record's `tsvector` holds at most (PostgreSQL's limit is 1 MB, not
/// checked by `array_to_tsvector` either). Words past it, or too long, go to `rest`.
pub(crate) const LEXEMES_MAX: usize = 512 * 1024;

/// Writes index rows: first, for each `(name, from)` of `$1`, `$2`, the rows of ledger `name`
/// at positions `from` and after are deleted (records past the ledger's end, or every row of
/// a ledger rewritten whole); then the rows of `$3` (a JSON array, [`row`]) are put in,
/// replacing those at the same position.
pub(crate) const PUT: &str = "WITH cut AS (
        DELETE FROM agentx.search_records s USING unnest($1::text[], $2::int4[]) AS c(name, from_pos)
        WHERE s.kind = 'clarifications' AND s.name = c.name AND s.pos >= c.from_pos
    )
    INSERT INTO agentx.search_records (kind, name, pos, issue, seq, id, status, field,
        from_agent, to_agent, words, rest, asked, asked_rest, asked_len, last_ms, supersedes,
        supersedes_ms)
    SELECT 'clarifications', r.name, r.pos, r.issue, r.seq, r.id, r.status, r.field,
        r.from_agent, r.to_agent, array_to_tsvector(r.words), r.rest, array_to_tsvector(r.asked),
        r.asked_rest, r.asked_len, r.last_ms, r.supersedes, r.supersedes_ms
    FROM jsonb_to_recordset($3::text::jsonb) AS r(name text, pos int4, issue int4, seq int8,
        id text, status text, field text, from_agent text, to_agent text, words text[],
        rest text[], asked text[], asked_rest text[], asked_len int4, last_ms int8,
        supersedes text[], supersedes_ms int8[])
    ON CONFLICT (kind, name, pos) DO UPDATE SET issue = excluded.issue, seq = excluded.seq,
        id = excluded.id, status = excluded.status, field = excluded.field,
        from_agent = excluded.from_agent, to_agent = excluded.to_agent,
        words = excluded.words, rest = excluded.rest, asked = excluded.asked,
        asked_rest = excluded.asked_rest, asked_len = excluded.asked_len,
        last_ms = excluded.last_ms, supersedes = excluded.supersedes,
        supersedes_ms = excluded.supersedes_ms";

/// What one [`PUT`] writes.
#[derive(Debug, Default)]
pub(crate) struct Put {
    names: Vec<String>,
    from: Vec<i32>,
    rows: Vec<Value>,
}

impl Put {
    /// The rows of `ledger` (document `name`) at `positions`, and none from `count` on.
    pub fn ledger(&mut self, name: &str, ledger: &Ledger, positions: &[i32], count: i32) {
        let issue = ledger.issue_number;
        for pos in positions {
            let record = usize::try_from(*pos)
                .ok()
                .and_then(|p| ledger.clarifications.get(p));
            if let Some(r) = record {
                self.rows.push(row(name, *pos, &indexed(issue, r)));
            }
        }
        self.names.push(name.to_owned());
        self.from.push(count);
    }

    /// The rows of a ledger written whole as `bytes` (every record; none if it does not
    /// parse, as a scan cannot read it either).
    pub fn bytes(&mut self, name: &str, bytes: &[u8]) {
        let ledger = ledger_number(name).and_then(|n| Ledger::parse(name, bytes, Some(n)).ok());
        self.whole(name, ledger.as_ref());
    }

    /// Every record of `ledger` (document `name`), or no row when it is `None`.
    pub fn whole(&mut self, name: &str, ledger: Option<&Ledger>) {
        match ledger {
            Some(l) => {
                let count = i32::try_from(l.clarifications.len()).unwrap_or(i32::MAX);
                let all: Vec<i32> = (0..count).collect();
                self.ledger(name, l, &all, count);
            }
            None => {
                self.names.push(name.to_owned());
                self.from.push(0);
            }
        }
    }

    /// Index rows of documents already made elsewhere (computed on every core).
    pub fn extend(&mut self, other: Put) {
        self.names.extend(other.names);
        self.from.extend(other.from);
        self.rows.extend(other.rows);
    }

    /// Runs `statement` ([`PUT`], prepared or not) with these rows.
    pub fn execute<T: postgres::ToStatement + ?Sized>(
        &self,
        tx: &mut postgres::Transaction<'_>,
        statement: &T,
    ) -> Result<u64, postgres::Error> {
        if self.names.is_empty() {
            return Ok(0);
        }
        let rows = serde_json::to_string(&self.rows).unwrap_or_default();
        tx.execute(statement, &[&self.names, &self.from, &rows])
    }
}

/// The row of a record at `pos` of ledger `name`, as [`PUT`] reads it.
fn row(name: &str, pos: i32, ix: &Indexed) -> Value {
    let (words, rest) = lexemes(&ix.all);
    let (asked, asked_rest) = lexemes(&ix.asked);
    let (olds, times): (Vec<&str>, Vec<i64>) =
        ix.supersedes.iter().map(|(o, t)| (o.as_str(), *t)).unzip();
    json!({
        "name": name,
        "pos": pos,
        "issue": ix.issue,
        // The sequence's bits: u64 order is (seq < 0, seq) on the column.
        "seq": ix.seq.cast_signed(),
        "id": ix.id,
        "status": ix.status.as_str(),
        "field": ix.field,
        "from_agent": ix.from,
        "to_agent": ix.to,
        "words": words,
        "rest": rest,
        "asked": asked,
        "asked_rest": asked_rest,
        "asked_len": ix.asked.len(),
        "last_ms": ix.last_ms,
        "supersedes": olds,
        "supersedes_ms": times,
    })
}

/// `words` split into those a `tsvector` holds and the rest (`None`: none left out).
fn lexemes(words: &[String]) -> (Vec<&str>, Option<Vec<&str>>) {
    let (mut kept, mut rest) = (Vec::new(), Vec::new());
    let mut bytes = 0usize;
    for w in words {
        if w.len() <= LEXEME_MAX && bytes + w.len() <= LEXEMES_MAX {
            bytes += w.len();
            kept.push(w.as_str());
        } else {
            rest.push(w.as_str());
        }
    }
    (kept, (!rest.is_empty()).then_some(rest))
}

/// How many of the words `$words` (those a lexeme can be: `$short`) the tsvector `column`
/// and the array `rest` of the words left out of it hold.
fn shared_sql(column: &str, rest: &str, short: &str, words: &str) -> String {
    format!(
        "length({column}) - length(ts_delete({column}, {short})) + CASE WHEN {rest} IS NULL
            THEN 0 ELSE (SELECT count(*) FROM unnest({rest}) w WHERE w = ANY({words})) END"
    )
}

/// A statement's text and its parameters, numbered as they are bound.
#[derive(Default)]
struct Sql {
    text: String,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Sql {
    /// `$n::cast` for a new parameter `v`.
    fn bind(&mut self, v: impl ToSql + Sync + 'static, cast: &str) -> String {
        self.params.push(Box::new(v));
        format!("${}::{cast}", self.params.len())
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

/// A tsquery matching any of `words`, each a quoted lexeme (`'` and `\` escaped).
pub(crate) fn any_of(words: &[&str]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    quoted.join(" | ")
}

/// The `WHERE` conditions of `probe`'s filters.
fn filters(sql: &mut Sql, probe: &Probe) -> Vec<String> {
    let f = &probe.filter;
    let mut and = vec![String::from("s.kind = 'clarifications'")];
    if let Some(n) = f.issue {
        // The primary key's prefix: the ledger's document.
        let name = sql.bind(agentx_clarify_command::paths::ledger_name(n), "text");
        and.push(format!("s.name = {name}"));
    }
    if let Some(n) = f.not_issue {
        let n = sql.bind(i64::from(n), "int8");
        and.push(format!("s.issue <> {n}"));
    }
    if !f.statuses.is_empty() {
        let list: Vec<String> = f.statuses.iter().map(|s| s.as_str().to_owned()).collect();
        let list = sql.bind(list, "text[]");
        and.push(format!("s.status = ANY({list})"));
    }
    for (column, value) in [
        ("field", &f.field),
        ("from_agent", &f.from),
        ("to_agent", &f.to),
    ] {
        if let Some(v) = value {
            let v = sql.bind(v.clone(), "text");
            and.push(format!("s.{column} = {v}"));
        }
    }
    and
}

/// The statement that reads the counts of every record `probe` matches, or `None` when
/// nothing can match (`related` without words or field).
fn counts_query(probe: &Probe) -> Option<Sql> {
    let mut sql = Sql::default();
    let mut and = filters(&mut sql, probe);
    let field = probe.field.clone().map(|f| sql.bind(f, "text"));
    let same_field = field.as_ref().map_or(String::from("false"), |f| {
        format!("coalesce(s.field = {f}, false)")
    });
    let (found, common, order) = if probe.words.is_empty() {
        if probe.min_score.is_some() {
            // `related` without words: only records of the field are hits.
            and.push(format!("s.field = {}", field.as_deref()?));
        }
        // Every record is a hit and the key is the columns': the best come first, the
        // limit's ties with them.
        let limit = sql.bind(i64::try_from(probe.limit).unwrap_or(i64::MAX), "int8");
        // Without a field the order is `search_recent`'s: an index scan, not a sort.
        let by_field = if field.is_some() { "4 DESC, " } else { "" };
        let order = format!(
            " ORDER BY {by_field}s.last_ms DESC, s.issue, (s.seq < 0), s.seq
            FETCH FIRST ({limit}) ROWS WITH TIES"
        );
        (String::from("0"), String::from("0"), order)
    } else {
        let short: Vec<&str> = probe
            .words
            .iter()
            .map(String::as_str)
            .filter(|w| w.len() <= LEXEME_MAX)
            .collect();
        let words = sql.bind(probe.words.clone(), "text[]");
        // `related` with a minimum score of 0 takes records that share no word too.
        if probe.min_score != Some(0) {
            // A word is in `rest` when too long for a lexeme, or past a huge record's lexemes.
            let mut any = vec![format!("(s.rest IS NOT NULL AND s.rest && {words})")];
            if !short.is_empty() {
                let tsquery = sql.bind(any_of(&short), "text");
                any.push(format!("s.words @@ {tsquery}::tsquery"));
            }
            if let Some(f) = &field {
                any.push(format!("s.field = {f}"));
            }
            and.push(format!("({})", any.join(" OR ")));
        }
        let short = sql.bind(
            short.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>(),
            "text[]",
        );
        // Counted on the tsvectors (`ts_delete` takes lexemes as they are: no parser); a
        // subquery per row only for the rare record with words left out.
        let found = shared_sql("s.words", "s.rest", &short, &words);
        let common = shared_sql("s.asked", "s.asked_rest", &short, &words);
        // `related` without a field: no row with fewer words than its minimum score needs
        // leaves the server.
        let least = probe.least_found();
        if least > 1 && probe.min_score != Some(0) {
            and.push(format!("({found}) >= {least}"));
        }
        (found, common, String::new())
    };
    sql.text = format!(
        "SELECT s.issue, s.seq, s.id, {same_field}, ({found})::int8, ({common})::int8,
            s.asked_len::int8, s.last_ms
         FROM agentx.search_records s WHERE {}{order}",
        and.join(" AND ")
    );
    Some(sql)
}

/// One matched record: its key and where it is.
struct Keyed {
    key: RankKey,
    issue: u32,
    id: String,
}

/// The best keys seen so far: at least `limit` of them and any tied with the last, pruned as
/// rows stream in, so a word in 10,000 records keeps a few hundred (and copies their ids).
struct Best {
    limit: usize,
    kept: Vec<Keyed>,
    /// The `limit`-th best key of the last pruning: a key below it is never among the best.
    floor: Option<RankKey>,
}

impl Best {
    fn new(limit: usize) -> Best {
        Best {
            limit: limit.max(1),
            kept: Vec::new(),
            floor: None,
        }
    }

    fn push(&mut self, key: RankKey, issue: u32, id: &str) {
        if self.floor.is_some_and(|f| key < f) {
            return;
        }
        if self.kept.len() >= 4 * self.limit + 64 {
            self.prune();
        }
        self.kept.push(Keyed {
            key,
            issue,
            id: id.to_owned(),
        });
    }

    /// Keeps the `limit` best and their ties, best first.
    fn prune(&mut self) {
        self.kept.sort_by_key(|k| std::cmp::Reverse(k.key));
        if let Some(last) = self.kept.get(self.limit - 1).map(|k| k.key) {
            let keep = self.kept.iter().take_while(|k| k.key >= last).count();
            self.kept.truncate(keep);
            self.floor = Some(last);
        }
    }
}

/// The records of `probe`'s best keys: the `limit` best and any tied with the last of them
/// (the core ranks the candidates again and breaks those ties by id), best first.
fn best(mut best: Best) -> Vec<(u32, String)> {
    best.prune();
    let keyed = best.kept;
    let mut out: Vec<(u32, String)> = Vec::with_capacity(keyed.len());
    for k in keyed {
        // A ledger may hold an id twice: the command reads every record of that id.
        if !out.iter().any(|(n, id)| *n == k.issue && *id == k.id) {
            out.push((k.issue, k.id));
        }
    }
    out
}

/// Every record `probe` matches, keyed by the core.
fn matched(tx: &mut postgres::Transaction<'_>, probe: &Probe) -> Result<Best, postgres::Error> {
    let mut best = Best::new(probe.limit);
    let Some(sql) = counts_query(probe) else {
        return Ok(best);
    };
    let mut rows = tx.query_raw(sql.text.as_str(), sql.refs())?;
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)? {
        let issue = u32::try_from(row.get::<_, i32>(0)).unwrap_or(0);
        let counts = Counts {
            issue,
            seq: row.get::<_, i64>(1).cast_unsigned(),
            same_field: row.get(3),
            found: count(row.get(4)),
            common: count(row.get(5)),
            asked_len: count(row.get(6)),
            last_ms: row.get(7),
        };
        if let Some(key) = probe.key(&counts) {
            best.push(key, issue, row.get(2));
        }
    }
    Ok(best)
}

/// Who superseded each of `ids`: [`latest_superseder`] over every record naming it (the
/// `<> '{}'` lets the planner use the partial index `search_supersedes`: 45 ms of sequential
/// scan at 100,000 ledgers without it).
fn superseders(
    tx: &mut postgres::Transaction<'_>,
    ids: &[String],
) -> Result<BTreeMap<String, String>, postgres::Error> {
    let mut named: BTreeMap<String, Vec<(i64, u32, u64, String)>> = BTreeMap::new();
    if ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    let rows = tx.query(
        "SELECT u.old, u.ms, s.issue, s.seq, s.id
         FROM agentx.search_records s, unnest(s.supersedes, s.supersedes_ms) AS u(old, ms)
         WHERE s.supersedes <> '{}' AND s.supersedes && $1::text[] AND u.old = ANY($1::text[])",
        &[&ids],
    )?;
    for row in rows {
        let by = (
            row.get::<_, i64>(1),
            u32::try_from(row.get::<_, i32>(2)).unwrap_or(0),
            row.get::<_, i64>(3).cast_unsigned(),
            row.get::<_, String>(4),
        );
        named.entry(row.get(0)).or_default().push(by);
    }
    Ok(named
        .into_iter()
        .filter_map(|(old, by)| latest_superseder(&by).map(|id| (old, id)))
        .collect())
}

/// The candidates of `probe`, read in one snapshot.
pub(crate) fn candidates(
    client: &mut postgres::Client,
    probe: &Probe,
) -> Result<Candidates, postgres::Error> {
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let records = best(matched(&mut tx, probe)?);
    let mut ids: Vec<String> = records.iter().map(|(_, id)| id.clone()).collect();
    ids.sort();
    ids.dedup();
    let superseded_by = superseders(&mut tx, &ids)?;
    tx.commit()?;
    Ok(Candidates {
        records,
        superseded_by,
        unreadable: Vec::new(),
    })
}

/// The index rows of every record of `ledgers` (`(name, ledger)`), computed on every core.
pub(crate) fn put_all(ledgers: &[(String, Option<Ledger>)]) -> Put {
    let parts = agentx_clarify_store::parallel_map(ledgers, |(name, ledger)| {
        let mut put = Put::default();
        put.whole(name, ledger.as_ref());
        put
    });
    let mut put = Put::default();
    for p in parts {
        put.extend(p);
    }
    put
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of(r: &agentx_clarify_core::Record) -> Value {
        row("issue-1.json", 0, &indexed(1, r))
    }

    #[test]
    fn lexemes_are_quoted_and_escaped() {
        assert_eq!(any_of(&["redis", "lru"]), "'redis' | 'lru'");
        assert_eq!(any_of(&["it's", "a\\b"]), "'it''s' | 'a\\\\b'");
        assert_eq!(any_of(&[]), "");
    }

    #[test]
    fn words_too_long_for_a_lexeme_go_to_rest() {
        let long = "x".repeat(LEXEME_MAX + 1);
        let text = format!(
            r#"{{"issueNumber": 1, "clarifications": [{{"id": "CLR-1-001", "from": "a",
            "to": "b", "topic": "t {long}", "status": "pending"}}]}}"#
        );
        let l = Ledger::parse("issue-1.json", text.as_bytes(), Some(1)).unwrap();
        let row = row_of(&l.clarifications[0]);
        assert_eq!(row["words"], json!(["t"]));
        assert_eq!(row["rest"], json!([long]));
        assert_eq!(row["seq"], json!(1));
    }

    #[test]
    fn the_best_keep_their_ties() {
        let k = |score, issue, id: &str| Keyed {
            key: Probe::search(&Default::default(), &Default::default())
                .key(&Counts {
                    issue,
                    seq: u64::MAX,
                    same_field: false,
                    found: 0,
                    common: 0,
                    asked_len: 0,
                    last_ms: score,
                })
                .unwrap(),
            issue,
            id: id.to_owned(),
        };
        let of = |keyed: Vec<Keyed>, limit| {
            let mut b = Best::new(limit);
            for k in keyed {
                b.push(k.key, k.issue, &k.id);
            }
            best(b)
        };
        let got = of(
            vec![k(1, 1, "a"), k(3, 1, "b"), k(3, 1, "c"), k(2, 1, "d")],
            1,
        );
        assert_eq!(got, [(1, "b".to_owned()), (1, "c".to_owned())]);
        let got = of(vec![k(1, 1, "a"), k(3, 1, "b"), k(2, 1, "a")], 3);
        assert_eq!(got, [(1, "b".to_owned()), (1, "a".to_owned())]);
        // Pruned as they stream: the best of many, with the ties of the last.
        let many: Vec<Keyed> = (0..1000).map(|i| k(i % 97, 1, &format!("r{i}"))).collect();
        let ids: Vec<String> = of(many, 3).into_iter().map(|(_, id)| id).collect();
        assert_eq!(ids.len(), 10, "{ids:?}");
        assert!(ids
            .iter()
            .all(|id| id[1..].parse::<i64>().unwrap() % 97 == 96));
    }
}
