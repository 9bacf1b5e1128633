//! `clarify search`: every record of every ledger the store holds (or of one issue), filtered
//! and ranked by the core (`agentx_clarify_core::search`, docs/protocol.md §36). A store with
//! a search engine of its own (the file store's full-text index, PostgreSQL's `tsvector`)
//! names the best candidates by the core's rank key ([`State::search_index`]); only their
//! ledgers are read, and the core ranks them. Without one, or when it cannot be used, every
//! record is scanned: the same hits in the same order, more slowly.

use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::search::probe::{Candidates, Probe};
use agentx_clarify_core::search::supersede;
use agentx_clarify_core::search::{self, Filter, Hit, Query};
use agentx_clarify_core::Record;
use agentx_clarify_core::{Action, ClarifyError, Config, Ledger, NewRequest};
use serde_json::{json, Value};

use crate::mutation::Mutation;
use crate::query::{read_all, show_id};
use crate::store::paths::ledger_path;
use crate::store::{State, Store};

/// What `search` found: the hits, best first, and the ledgers that could not be read.
#[derive(Clone, Debug, Default)]
pub struct Searched {
    pub hits: Vec<Hit>,
    pub errors: Vec<ReportError>,
}

impl Searched {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "hits": self.hits, "errors": self.errors})
    }
}

/// The ledgers a filter needs: with an issue only its ledger (one that cannot be read is the
/// command's failure, as for `list`), else every readable one.
fn ledgers<S: Store>(
    store: &S,
    issue: Option<u32>,
) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    match issue {
        Some(n) => Ok((store.read_ledger(n)?.into_iter().collect(), Vec::new())),
        None => read_all(store),
    }
}

/// The records of `ledgers` that pass `filter`, ranked for `query`, each superseded one
/// marked with what superseded it.
pub fn rank(ledgers: &[Ledger], query: &Query<'_>, filter: &Filter) -> Vec<Hit> {
    let records = ledgers
        .iter()
        .flat_map(|l| l.clarifications.iter().map(move |r| (l.issue_number, r)));
    let mut hits = search::search(query, filter, records);
    supersede::mark(&mut hits, &supersede::superseded_by(ledgers));
    hits
}

/// The records an index named, read from their ledgers (in the index's order), with the
/// ledgers that could not be read — those the index could not read either among them.
fn read_candidates<S: State + ?Sized>(
    store: &S,
    found: &Candidates,
) -> (Vec<(u32, Record)>, Vec<ReportError>) {
    let mut issues: Vec<u32> = found.records.iter().map(|(n, _)| *n).collect();
    issues.extend(&found.unreadable);
    issues.sort_unstable();
    issues.dedup();
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    for n in issues {
        match store.read_ledger(n) {
            Ok(Some(l)) => records.extend(
                l.clarifications
                    .into_iter()
                    .filter(|r| found.records.iter().any(|(i, id)| *i == n && *id == r.id))
                    .map(|r| (n, r)),
            ),
            Ok(None) => {}
            Err(e) => errors.push(ReportError::new(ledger_path(n), &e)),
        }
    }
    (records, errors)
}

/// The hits of `probe` by the store's index, ranked by the core; `None` without one.
fn by_index<S: State + ?Sized>(
    store: &S,
    probe: &Probe,
    rank: impl FnOnce(&[(u32, Record)]) -> Vec<Hit>,
) -> Option<(Vec<Hit>, Vec<ReportError>)> {
    let found = store.search_index(probe)?;
    let (records, errors) = read_candidates(store, &found);
    let mut hits = rank(&records);
    supersede::mark(&mut hits, &found.superseded_by);
    Some((hits, errors))
}

/// `clarify search`.
pub fn search<S: Store>(
    store: &S,
    query: &Query<'_>,
    filter: &Filter,
) -> Result<Searched, ClarifyError> {
    // One issue's ledger that cannot be read is the command's failure, as for `list`.
    if let Some(n) = filter.issue {
        store.read_ledger(n)?;
    }
    let probe = Probe::search(query, filter);
    let ranked = by_index(store, &probe, |records| {
        search::search(query, filter, records.iter().map(|(n, r)| (*n, r)))
    });
    if let Some((hits, errors)) = ranked {
        return Ok(Searched { hits, errors });
    }
    let (ledgers, errors) = ledgers(store, filter.issue)?;
    let mut hits = rank(&ledgers, query, filter);
    if filter.issue.is_some() {
        // A decision of this issue may have been superseded from another one.
        let (every, _) = read_all(store)?;
        supersede::mark(&mut hits, &supersede::superseded_by(&every));
    }
    Ok(Searched { hits, errors })
}

/// The `related` records of `req`, just asked on `issue` (docs/protocol.md §36). The ledger is
/// written by then: what cannot be read is a warning, never the ask's failure.
pub fn related<S: Store>(
    store: &S,
    req: &NewRequest,
    issue: u32,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Vec<Hit> {
    let text = format!("{} {}", req.topic, req.question);
    let query = Query {
        text: &text,
        field: req.field.as_deref(),
    };
    let min = config.related_min_score;
    let probe = Probe::related(&query, issue, min);
    let ranked = by_index(store, &probe, |records| {
        search::related(&query, issue, min, records.iter().map(|(n, r)| (*n, r)))
    });
    if let Some((hits, _)) = ranked {
        return hits;
    }
    let ledgers = match read_all(store) {
        Ok((ledgers, _)) => ledgers,
        Err(e) => {
            warnings.push(format!("the related records could not be read: {e}"));
            return Vec::new();
        }
    };
    let records = ledgers
        .iter()
        .flat_map(|l| l.clarifications.iter().map(move |r| (l.issue_number, r)));
    let mut hits = search::related(&query, issue, config.related_min_score, records);
    supersede::mark(&mut hits, &supersede::superseded_by(&ledgers));
    hits
}

/// `resolve --supersedes`: the records named must exist and be resolved (checked before
/// anything is written); the resolution entry records them.
pub fn resolve_superseding<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    action: &Action,
    by: Option<&Attribution>,
    supersedes: &[String],
) -> Result<Mutation, ClarifyError> {
    let ids = supersede::check_ids(id, supersedes)?;
    for old in &ids {
        let (_, record) = show_id(store, old)?;
        supersede::check_superseded(old, &record)?;
    }
    crate::mutation::act_noted(store, now, id, action, by, &supersede::fields(&ids))
}
