//! A probe run on the index: the filters and words as a query whose score packs the counts
//! the core ranks by, a collector that keeps the best keys by [`Probe::key`], then who
//! superseded each hit and which ledgers could not be read.
//!
//! The score: every query word found in a record's text adds 1, every one in its asked words
//! adds `base`, its field `base²` (`base` is one more than the number of words), each clause
//! a constant — so the sum, an integer well below 2²⁴, decodes exactly into `found`, `common`
//! and `same_field`.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use agentx_clarify_core::search::probe::{
    indexed, latest_superseder, Candidates, Counts, Indexed, Probe, RankKey,
};
use agentx_clarify_core::Record;
use tantivy::collector::{Collector, DocSetCollector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value as _};
use tantivy::{
    DocAddress, DocId, Score, Searcher, SegmentOrdinal, SegmentReader, TantivyDocument, Term,
};

use super::schema::{Fields, RECORD, UNREADABLE};

/// The most words a probe may have for its score to stay exact (`base²` + … < 2²⁴).
pub const MAX_WORDS: usize = 1000;

fn term(field: tantivy::schema::Field, text: &str, score: Score) -> (Occur, Box<dyn Query>) {
    let q = TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic);
    (
        Occur::Should,
        Box::new(ConstScoreQuery::new(Box::new(q), score)),
    )
}

fn must(q: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
}

fn exact(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::Basic,
    ))
}

/// Whether a record that matches no word and is not of the field can still be a hit: a
/// search without words, or `related` with a minimum score of 0.
fn unmatched_can_hit(p: &Probe) -> bool {
    p.words.is_empty() || p.min_score == Some(0)
}

/// Ledgers newer than their documents in the index (journalled since its commit): left out
/// of the index's answers and looked at in the ledgers themselves.
#[derive(Debug, Default)]
pub struct Fresh {
    pub issues: BTreeSet<u32>,
    pub records: Vec<(u32, Record)>,
    pub unreadable: Vec<u32>,
}

fn not_issue(f: &Fields, n: u32) -> (Occur, Box<dyn Query>) {
    let t = Term::from_field_u64(f.issue, u64::from(n));
    (
        Occur::MustNot,
        Box::new(TermQuery::new(t, IndexRecordOption::Basic)),
    )
}

/// The query of probe `p`, leaving out the ledgers in `fresh`.
pub fn query(p: &Probe, f: &Fields, fresh: &Fresh) -> Box<dyn Query> {
    let base = p.words.len() as f32 + 1.0;
    // Only records have words and fields: the `kind` clause is needed where a record may
    // match on its filters alone.
    let mut clauses = Vec::new();
    if unmatched_can_hit(p) {
        clauses.push(must(exact(f.kind, RECORD)));
    }
    clauses.extend(fresh.issues.iter().map(|n| not_issue(f, *n)));
    let filter = &p.filter;
    if !filter.statuses.is_empty() {
        let any = filter
            .statuses
            .iter()
            .map(|s| (Occur::Should, exact(f.status, s.as_str())));
        clauses.push(must(Box::new(BooleanQuery::new(any.collect()))));
    }
    for (field, value) in [
        (f.field, &filter.field),
        (f.from, &filter.from),
        (f.to, &filter.to),
    ] {
        if let Some(v) = value {
            clauses.push(must(exact(field, v)));
        }
    }
    if let Some(n) = filter.not_issue {
        let t = Term::from_field_u64(f.issue, u64::from(n));
        clauses.push((
            Occur::MustNot,
            Box::new(TermQuery::new(t, IndexRecordOption::Basic)),
        ));
    }
    let all = p.words.iter().map(|w| term(f.all, w, 1.0));
    let asked = p.words.iter().map(|w| term(f.asked, w, base));
    let field = p
        .field
        .as_ref()
        .map(|field| term(f.field, field, base * base));
    if unmatched_can_hit(p) {
        // Every filtered record is a hit: the word clauses only score (optional beside the
        // `kind` clause that every record matches).
        clauses.extend(all.chain(asked).chain(field));
        return Box::new(BooleanQuery::with_minimum_required_clauses(clauses, 0));
    }
    // A record must have one of the words or the field; `related` without a field, as many
    // words as its minimum score needs at least.
    let any: Vec<_> = all.chain(field).collect();
    let needed = p.least_found();
    clauses.push((
        Occur::Must,
        Box::new(BooleanQuery::with_minimum_required_clauses(any, needed)),
    ));
    // The asked words only score: every one is in the record's words too.
    clauses.extend(asked);
    Box::new(BooleanQuery::with_minimum_required_clauses(clauses, 0))
}

/// Keeps the best `limit` keys.
pub struct Best {
    pub probe: Probe,
}

pub struct BestInSegment {
    probe: Probe,
    segment: SegmentOrdinal,
    columns: [Column<u64>; 3],
    last_ms: Column<i64>,
    top: BinaryHeap<Reverse<(RankKey, DocAddress)>>,
}

type Top = Vec<(RankKey, DocAddress)>;

/// The counts packed in `score` (see the module's comment).
fn decode(score: Score, qn: u64) -> (bool, u64, u64) {
    let base = qn + 1;
    // The sum of integer constants below 2^24 is exact in f32.
    let s = score.round().max(0.0) as u64;
    (s >= base * base, s % (base * base) / base, s % base)
}

impl Collector for Best {
    type Fruit = Top;
    type Child = BestInSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        r: &SegmentReader,
    ) -> tantivy::Result<Self::Child> {
        let ff = r.fast_fields();
        Ok(BestInSegment {
            probe: self.probe.clone(),
            segment,
            columns: [ff.u64("issue")?, ff.u64("seq")?, ff.u64("asked_len")?],
            last_ms: ff.i64("last_ms")?,
            top: BinaryHeap::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Top>) -> tantivy::Result<Top> {
        let mut all: Top = fruits.into_iter().flatten().collect();
        all.sort_by_key(|t| Reverse(t.0));
        all.truncate(self.probe.limit);
        Ok(all)
    }
}

impl SegmentCollector for BestInSegment {
    type Fruit = Top;

    fn collect(&mut self, doc: DocId, score: Score) {
        let qn = self.probe.words.len() as u64;
        let (same_field, common, found) = decode(score, qn);
        let [issue, seq, asked_len] = &self.columns;
        let counts = Counts {
            issue: issue
                .first(doc)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(u32::MAX),
            seq: seq.first(doc).unwrap_or(u64::MAX),
            same_field,
            found,
            common,
            asked_len: asked_len.first(doc).unwrap_or(0),
            last_ms: self.last_ms.first(doc).unwrap_or(0),
        };
        let Some(key) = self.probe.key(&counts) else {
            return;
        };
        let addr = DocAddress::new(self.segment, doc);
        if self.top.len() < self.probe.limit {
            self.top.push(Reverse((key, addr)));
        } else if self
            .top
            .peek()
            .is_some_and(|Reverse((worst, _))| key > *worst)
        {
            self.top.pop();
            self.top.push(Reverse((key, addr)));
        }
    }

    fn harvest(self) -> Top {
        self.top.into_iter().map(|Reverse(t)| t).collect()
    }
}

fn text_of(doc: &TantivyDocument, field: tantivy::schema::Field) -> Vec<String> {
    doc.get_all(field)
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn u64_of(doc: &TantivyDocument, field: tantivy::schema::Field) -> u64 {
    doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0)
}

/// Who superseded `id`: every record whose resolutions name it (the index's, but for the
/// fresh ledgers, whose own records count), the latest wins.
fn superseder(
    s: &Searcher,
    f: &Fields,
    id: &str,
    fresh: &[Indexed],
    left_out: &BTreeSet<u32>,
) -> tantivy::Result<Option<String>> {
    let q = TermQuery::new(
        Term::from_field_text(f.supersedes, id),
        IndexRecordOption::Basic,
    );
    let mut named_by = Vec::new();
    for addr in s.search(&q, &DocSetCollector)? {
        let doc: TantivyDocument = s.doc(addr)?;
        let issue = u32::try_from(u64_of(&doc, f.issue)).unwrap_or(u32::MAX);
        let Some(by) = text_of(&doc, f.id).into_iter().next() else {
            continue;
        };
        if left_out.contains(&issue) {
            continue;
        }
        let seq = u64_of(&doc, f.seq);
        for pair in text_of(&doc, f.superseded_at) {
            let Some((old, at)) = pair.rsplit_once(' ') else {
                continue;
            };
            if old == id {
                let at = at.parse().unwrap_or(i64::MIN);
                named_by.push((at, issue, seq, by.clone()));
            }
        }
    }
    for r in fresh {
        for (old, at) in r.supersedes.iter().filter(|(old, _)| old == id) {
            let _ = old;
            named_by.push((*at, r.issue, r.seq, r.id.clone()));
        }
    }
    Ok(latest_superseder(&named_by))
}

/// The ledgers indexed as unreadable, and the fresh ones that are.
fn unreadable(s: &Searcher, f: &Fields, p: &Probe, fresh: &Fresh) -> tantivy::Result<Vec<u32>> {
    let q = TermQuery::new(
        Term::from_field_text(f.kind, UNREADABLE),
        IndexRecordOption::Basic,
    );
    let mut out = fresh.unreadable.clone();
    for addr in s.search(&q, &DocSetCollector)? {
        let doc: TantivyDocument = s.doc(addr)?;
        let n = u32::try_from(u64_of(&doc, f.issue)).unwrap_or(u32::MAX);
        if !fresh.issues.contains(&n) {
            out.push(n);
        }
    }
    out.retain(|n| p.filter.not_issue != Some(*n) && p.filter.issue.is_none_or(|i| i == *n));
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Runs probe `p`: the best records of the index and of the fresh ledgers, who superseded
/// them, the unreadable ledgers.
pub fn run(s: &Searcher, f: &Fields, p: &Probe, fresh: &Fresh) -> tantivy::Result<Candidates> {
    let top = s.search(&*query(p, f, fresh), &Best { probe: p.clone() })?;
    let mut best: Vec<(RankKey, u32, String)> = Vec::new();
    for (key, addr) in top {
        let doc: TantivyDocument = s.doc(addr)?;
        let issue = u32::try_from(u64_of(&doc, f.issue)).unwrap_or(u32::MAX);
        if let Some(id) = text_of(&doc, f.id).into_iter().next() {
            best.push((key, issue, id));
        }
    }
    let entries: Vec<Indexed> = fresh.records.iter().map(|(n, r)| indexed(*n, r)).collect();
    for ((n, r), ix) in fresh.records.iter().zip(&entries) {
        if p.filter.admits(*n, r) {
            if let Some(key) = p.key(&p.counts(ix)) {
                best.push((key, *n, ix.id.clone()));
            }
        }
    }
    best.sort_by_key(|b| Reverse(b.0));
    best.truncate(p.limit);
    let mut out = Candidates::default();
    for (_, issue, id) in best {
        if let Some(by) = superseder(s, f, &id, &entries, &fresh.issues)? {
            out.superseded_by.insert(id.clone(), by);
        }
        out.records.push((issue, id));
    }
    out.unreadable = unreadable(s, f, p, fresh)?;
    Ok(out)
}
