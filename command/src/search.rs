//! `clarify search`: every record of every ledger the store holds (or of one issue), filtered
//! and ranked by the core (`agentx_clarify_core::search`, docs/protocol.md §36). A scan: the
//! stores hand in every record, so each store gives the same hits in the same order
//! (docs/decisions.md, "search scans first").

use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::search::supersede;
use agentx_clarify_core::search::{self, Filter, Hit, Query};
use agentx_clarify_core::{Action, ClarifyError, Config, Ledger, NewRequest};
use serde_json::{json, Value};

use crate::mutation::Mutation;
use crate::query::{read_all, show_id};
use crate::store::Store;

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

/// `clarify search`.
pub fn search<S: Store>(
    store: &S,
    query: &Query<'_>,
    filter: &Filter,
) -> Result<Searched, ClarifyError> {
    let (ledgers, errors) = ledgers(store, filter.issue)?;
    Ok(Searched {
        hits: rank(&ledgers, query, filter),
        errors,
    })
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
    let ledgers = match read_all(store) {
        Ok((ledgers, _)) => ledgers,
        Err(e) => {
            warnings.push(format!("the related records could not be read: {e}"));
            return Vec::new();
        }
    };
    let text = format!("{} {}", req.topic, req.question);
    let query = Query {
        text: &text,
        field: req.field.as_deref(),
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
