//! Search over records and the "decided before" ranking (docs/protocol.md §36): the stores
//! hand in candidate records, this module filters and ranks them, so every store and every
//! surface gives the same hits in the same order. Pure: no clock (recency is read from the
//! records' own timestamps), no index — a scan over the candidates it is given.
//!
//! The rule, in order: records of the query's `field` first; then the text score (0–100, see
//! [`text_score`]); then the newest first (the record's last entry); then by id (issue, then
//! sequence). The same rule ranks `related` at ask time.

mod filter;
pub mod probe;
pub mod reuse;
pub mod supersede;

use serde::Serialize;
use serde_json::Value;

use crate::ledger::{EntryKind, Record, Status};
use crate::names::HUMAN;
use crate::time::Timestamp;

pub use filter::{check_limit, Filter, DEFAULT_LIMIT, MAX_LIMIT};

/// What is looked for: words, and optionally the field the asker is deciding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Query<'a> {
    pub text: &'a str,
    pub field: Option<&'a str>,
}

/// A resolved record's decision as a hit shows it: who resolved it, the typed value, the text,
/// when, and the resolution entry's hash (what `ask --reuse` cites).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HitDecision {
    /// `by` of a person's resolution (`human` when the surface named nobody); the requester
    /// when the requester resolved on an agent's answer.
    pub by: String,
    pub value: Option<Value>,
    /// A person's resolution: its text; the requester's: the answer it accepted (the last).
    pub text: String,
    pub at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// One record found, with its score.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub id: String,
    pub issue: u32,
    pub topic: String,
    /// The record's first question.
    pub question: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The text score, 0–100.
    pub score: u8,
    /// The record is of the query's field (ranked before every other).
    pub same_field: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<HitDecision>,
    /// The record whose resolution superseded this decision, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// The record's last entry: what recency ranks by.
    #[serde(skip)]
    pub last_ms: i64,
    #[serde(skip)]
    seq: u64,
}

/// Words too common to say what a question is about: a query of only these keeps them.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "in",
    "is", "it", "of", "on", "or", "our", "should", "that", "the", "this", "to", "use", "we",
    "what", "which", "with",
];

fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// The query's words: lowercased, sorted, distinct, without stop words (unless that leaves
/// none).
pub fn query_words(text: &str) -> Vec<String> {
    let all = crate::monitor::tokens(text);
    let kept: Vec<String> = all.iter().filter(|w| !is_stop_word(w)).cloned().collect();
    if kept.is_empty() {
        all
    } else {
        kept
    }
}

/// How many words two sorted, distinct word lists share.
fn shared<S: AsRef<str>>(a: &[S], b: &[S]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.as_ref().cmp(y.as_ref()) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Every text of a record a search looks at: topic, field, context, every question, answer and
/// resolution.
fn record_text(r: &Record) -> String {
    let mut text = format!("{} {}", r.topic, r.field.as_deref().unwrap_or_default());
    if let Some(c) = &r.context {
        text.push(' ');
        text.push_str(c);
    }
    let said = [
        EntryKind::Question,
        EntryKind::Answer,
        EntryKind::Resolution,
    ];
    for e in r.thread.iter().filter(|e| said.contains(&e.kind)) {
        text.push(' ');
        text.push_str(&e.body);
    }
    text
}

/// The text score of a record for the query's words `q` (sorted, distinct), an integer 0–100:
/// three parts containment (the share of `q` found anywhere in the record's text) to one part
/// Jaccard of `q` and the record's first question and topic, rounded half up. No words: 0.
pub fn text_score(q: &[String], r: &Record) -> u8 {
    if q.is_empty() {
        return 0;
    }
    let all = crate::monitor::tokens(&record_text(r));
    let mut asked = crate::monitor::tokens(&format!(
        "{} {}",
        r.topic,
        r.first_question().unwrap_or_default()
    ));
    asked.retain(|w| !is_stop_word(w));
    score_of(
        q.len() as u64,
        shared(q, &all),
        shared(q, &asked),
        asked.len() as u64,
    )
}

/// The text score from its counts: `qn` query words, `found` of them in the record's text,
/// `common` in its asked words, of which it has `asked_len` (what an index reads instead of
/// the record, [`probe`]).
pub fn score_of(qn: u64, found: u64, common: u64, asked_len: u64) -> u8 {
    if qn == 0 {
        return 0;
    }
    let union = (qn + asked_len).saturating_sub(common).max(1);
    // 100 · (3·found/qn + common/union) / 4, in integers.
    let num = 100 * (3 * found * union + common * qn) + 2 * qn * union;
    let score = num / (4 * qn * union);
    u8::try_from(score.min(100)).unwrap_or(100)
}

/// The decision a resolved record carries, as a hit shows it; `None` unless resolved.
pub fn decision_of(r: &Record) -> Option<HitDecision> {
    if r.current_status() != Status::Resolved {
        return None;
    }
    let entry = r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Resolution)?;
    let by = match entry.extra.get("by").and_then(Value::as_str) {
        Some(by) if entry.from == HUMAN => by.to_owned(),
        _ => entry.from.clone(),
    };
    // A requester's resolution accepts the last answer: that answer is what was decided.
    let answer = r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Answer)
        .filter(|_| entry.from != HUMAN);
    let text = match answer {
        Some(a) => a.body.clone(),
        None => entry.body.clone(),
    };
    let value = entry
        .value
        .clone()
        .or_else(|| answer.and_then(|a| a.value.clone()));
    Some(HitDecision {
        by,
        value,
        text,
        at: entry.timestamp.clone(),
        hash: entry.hash.clone(),
    })
}

/// The hit of one record for `query` (words `q`, from [`query_words`]).
pub fn hit(query: &Query<'_>, q: &[String], issue: u32, r: &Record) -> Hit {
    Hit {
        id: r.id.clone(),
        issue,
        topic: r.topic.clone(),
        question: r.first_question().unwrap_or_default().to_owned(),
        status: r.current_status(),
        field: r.field.clone(),
        score: text_score(q, r),
        same_field: query.field.is_some() && query.field == r.field.as_deref(),
        decision: decision_of(r),
        superseded_by: None,
        last_ms: r.last_timestamp_ms().unwrap_or(0),
        seq: r.order_key().0,
    }
}

/// Ranks hits by the rule of this module: same field, score, newest, id.
pub fn sort(hits: &mut Vec<Hit>) {
    crate::stable_sort::sort_by(hits, |a, b| {
        (b.same_field, b.score, b.last_ms)
            .cmp(&(a.same_field, a.score, a.last_ms))
            .then((a.issue, a.seq, &a.id).cmp(&(b.issue, b.seq, &b.id)))
    });
}

/// Every candidate that passes `filter`, ranked for `query`, at most `filter.limit` of them.
/// With words, a record that shares none of them and is not of the query's field is no hit.
pub fn search<'a>(
    query: &Query<'_>,
    filter: &Filter,
    candidates: impl IntoIterator<Item = (u32, &'a Record)>,
) -> Vec<Hit> {
    let q = query_words(query.text);
    let mut hits: Vec<Hit> = candidates
        .into_iter()
        .filter(|(issue, r)| filter.admits(*issue, r))
        .map(|(issue, r)| hit(query, &q, issue, r))
        .filter(|h| q.is_empty() || h.score > 0 || h.same_field)
        .collect();
    sort(&mut hits);
    hits.truncate(filter.limit());
    hits
}

/// How many records an ask's `related` holds at most.
pub const MAX_RELATED: usize = 3;

/// What `related` looks at: resolved records of other issues than `issue`.
fn related_filter(issue: u32) -> Filter {
    Filter {
        statuses: vec![Status::Resolved],
        not_issue: Some(issue),
        limit: Some(MAX_RELATED),
        ..Filter::default()
    }
}

/// The `related` records of an ask on `issue` (docs/protocol.md §36): resolved records of
/// other issues that are of the asked field or score at least `min_score`, best first, at
/// most [`MAX_RELATED`]. They are suggestions: nothing is resolved by them.
pub fn related<'a>(
    query: &Query<'_>,
    issue: u32,
    min_score: u8,
    candidates: impl IntoIterator<Item = (u32, &'a Record)>,
) -> Vec<Hit> {
    let filter = related_filter(issue);
    let q = query_words(query.text);
    let mut hits: Vec<Hit> = candidates
        .into_iter()
        .filter(|(n, r)| filter.admits(*n, r))
        .map(|(n, r)| hit(query, &q, n, r))
        .filter(|h| h.same_field || (!q.is_empty() && h.score >= min_score))
        .collect();
    sort(&mut hits);
    hits.truncate(MAX_RELATED);
    hits
}

#[cfg(test)]
mod tests;
