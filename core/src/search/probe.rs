//! What a store's own search engine needs so that the core's ranking stays the only ranking
//! (docs/protocol.md §36, "indexes"): for each record, the words it is found by and the
//! numbers the rank is computed from ([`Indexed`]); for a search, the words, field and filters
//! to look up ([`Probe`]); and, for each record the engine matched, the rank key computed by
//! the core from the counts the engine read ([`Probe::key`]). An engine that keeps the
//! [`Probe::limit`] best keys returns exactly the records a scan ranks first; the command
//! layer reads those and the core ranks them once more ([`super::search`]).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use serde_json::Value;

use super::{is_stop_word, query_words, record_text, Filter, Query, MAX_RELATED};
use crate::ledger::{EntryKind, Record, Status};

/// One record as an index holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indexed {
    pub issue: u32,
    /// The record's sequence in its issue (`u64::MAX` for an id without one).
    pub seq: u64,
    pub id: String,
    pub status: Status,
    pub field: Option<String>,
    pub from: String,
    pub to: String,
    /// Every word of the record's text (sorted, distinct): what "found" counts.
    pub all: Vec<String>,
    /// The words of its topic and first question without stop words (sorted, distinct):
    /// what "common" counts; their number is the record's side of the Jaccard union.
    pub asked: Vec<String>,
    /// The record's last entry (epoch ms): what recency ranks by.
    pub last_ms: i64,
    /// The records this one's resolutions supersede, each with that resolution's time.
    pub supersedes: Vec<(String, i64)>,
}

/// The index entry of record `r` of `issue`.
pub fn indexed(issue: u32, r: &Record) -> Indexed {
    let mut asked = crate::monitor::tokens(&format!(
        "{} {}",
        r.topic,
        r.first_question().unwrap_or_default()
    ));
    asked.retain(|w| !is_stop_word(w));
    let mut supersedes = Vec::new();
    for e in r.thread.iter().filter(|e| e.kind == EntryKind::Resolution) {
        let named = e
            .extra
            .get(super::supersede::SUPERSEDES)
            .and_then(Value::as_array);
        for old in named.into_iter().flatten().filter_map(Value::as_str) {
            supersedes.push((old.to_owned(), e.timestamp.ms()));
        }
    }
    Indexed {
        issue,
        seq: r.order_key().0,
        id: r.id.clone(),
        status: r.current_status(),
        field: r.field.clone(),
        from: r.from.clone(),
        to: r.to.clone(),
        all: crate::monitor::tokens(&record_text(r)),
        asked,
        last_ms: r.last_timestamp_ms().unwrap_or(0),
        supersedes,
    }
}

/// A search as an index runs it: the records that pass `filter` and match one of `words`
/// (in `all`) or are of `field`; with no words, every record that passes `filter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub words: Vec<String>,
    pub field: Option<String>,
    pub filter: Filter,
    /// `related`: a hit is of the field or scores at least this.
    pub min_score: Option<u8>,
    /// How many of the best keys to keep.
    pub limit: usize,
}

/// What an index read for one matched record: how many of the probe's words it has in
/// `all` (`found`) and in `asked` (`common`), its number of asked words, and its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub issue: u32,
    pub seq: u64,
    pub same_field: bool,
    pub found: u64,
    pub common: u64,
    pub asked_len: u64,
    pub last_ms: i64,
}

/// The rank of a hit: greater is better (same field, score, newer, then lower issue and
/// sequence), the order [`super::sort`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RankKey(bool, u8, i64, Reverse<u32>, Reverse<u64>);

impl Probe {
    /// `clarify search` for `query` under `filter`.
    pub fn search(query: &Query<'_>, filter: &Filter) -> Probe {
        Probe {
            words: query_words(query.text),
            field: query.field.map(str::to_owned),
            filter: filter.clone(),
            min_score: None,
            limit: filter.limit(),
        }
    }

    /// The `related` records of an ask on `issue`.
    pub fn related(query: &Query<'_>, issue: u32, min_score: u8) -> Probe {
        Probe {
            words: query_words(query.text),
            field: query.field.map(str::to_owned),
            filter: super::related_filter(issue),
            min_score: Some(min_score),
            limit: MAX_RELATED,
        }
    }

    /// The counts of a record this probe looks at, from its index entry (what an index that
    /// holds a ledger newer than its own entries computes for that ledger's records).
    pub fn counts(&self, ix: &Indexed) -> Counts {
        Counts {
            issue: ix.issue,
            seq: ix.seq,
            same_field: self.field.is_some() && self.field == ix.field,
            found: super::shared(&self.words, &ix.all),
            common: super::shared(&self.words, &ix.asked),
            asked_len: ix.asked.len() as u64,
            last_ms: ix.last_ms,
        }
    }

    /// The fewest of the words a record must have to be a hit, besides a record of the
    /// field: 1, and for `related` without a field as many as its minimum score needs. The
    /// score is at most 75·found/qn + 25.5 (every asked word shared), so found ≥ qn·(min −
    /// 25.5)/75, taken down to a whole number below that.
    pub fn least_found(&self) -> usize {
        match (self.min_score, &self.field) {
            (Some(min), None) => {
                let bound = self.words.len() * usize::from(min.saturating_sub(26)) / 75;
                bound.max(1)
            }
            _ => 1,
        }
    }

    /// The rank key of a matched record, or `None` when the core's rule makes it no hit.
    pub fn key(&self, c: &Counts) -> Option<RankKey> {
        let qn = self.words.len() as u64;
        let score = super::score_of(qn, c.found, c.common, c.asked_len);
        let hit = match self.min_score {
            Some(min) => c.same_field || (qn > 0 && score >= min),
            None => qn == 0 || score > 0 || c.same_field,
        };
        hit.then_some(RankKey(
            c.same_field,
            score,
            c.last_ms,
            Reverse(c.issue),
            Reverse(c.seq),
        ))
    }
}

/// What an index answers: the records to read, best first, who superseded which of them,
/// and the ledgers it could not read when it indexed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    pub records: Vec<(u32, String)>,
    pub superseded_by: BTreeMap<String, String>,
    pub unreadable: Vec<u32>,
}

/// The record that superseded a decision, of the `(time, issue, seq, id)` of every
/// resolution naming it: the latest, then the last in ledger order, as [`super::supersede::superseded_by`] decides.
pub fn latest_superseder(named_by: &[(i64, u32, u64, String)]) -> Option<String> {
    named_by.iter().max().map(|(_, _, _, id)| id.clone())
}
