//! The wait-for graph of one issue as data (docs/protocol.md §13): the edges the deadlock phase sees — one
//! per blocking record whose fold is pending or stale — and the cycles they form now, before
//! the monitor breaks any. Front ends draw this instead of re-deriving who waits on whom.

use std::collections::HashMap;

use serde::Serialize;

use super::deadlock::{cyclic_components, intern, WaitEdge};
use crate::config::Config;
use crate::ledger::Ledger;

/// One wait: `from` waits on `to` because of record `id`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitForEdge {
    pub id: String,
    pub from: String,
    pub to: String,
    /// `pending` or `stale`.
    pub status: &'static str,
}

/// A set of waits that lie on a cycle (one strongly connected component).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitCycle {
    /// The records of its edges, ascending by sequence.
    pub ids: Vec<String>,
    /// Its agents in priority order (as the deadlock report names them).
    pub agents: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitForGraph {
    pub issue_number: u32,
    /// Ascending by sequence.
    pub edges: Vec<WaitForEdge>,
    pub cycles: Vec<WaitCycle>,
}

/// The records behind the wait-for edges, ascending by sequence: as the monitor's deadlock
/// phase, a blocking record in pending or stale, except one whose question was asked back
/// (it waits on the reply). The graph and the index's edges (`follow::wait_edges`) share it.
pub(crate) fn waiting(ledger: &Ledger) -> Vec<&crate::ledger::Record> {
    let awaiting = crate::replies::awaiting_reply(ledger);
    let mut waiting: Vec<&crate::ledger::Record> = ledger
        .clarifications
        .iter()
        .filter(|r| r.waits() && !awaiting.contains(&r.id.as_str()))
        .collect();
    crate::stable_sort::sort_by_key(&mut waiting, |r| r.order_key());
    waiting
}

/// The wait-for graph of `ledger` as it stands (its folds).
pub fn wait_for_graph(ledger: &Ledger, config: &Config) -> WaitForGraph {
    let waiting = waiting(ledger);
    let mut node_of: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let mut edges = Vec::with_capacity(waiting.len());
    for (record, r) in waiting.iter().enumerate() {
        let from = intern(&r.from, &mut node_of, &mut names);
        let to = intern(&r.to, &mut node_of, &mut names);
        edges.push(WaitEdge { from, to, record });
    }
    let cycles = cyclic_components(names.len(), &edges)
        .into_iter()
        .map(|(records, nodes)| {
            // Edge handles are positions in `waiting` (sequence order), visited in order.
            let mut agents: Vec<&str> = nodes
                .iter()
                .filter_map(|&n| names.get(n).copied())
                .collect();
            crate::stable_sort::sort_by_key(&mut agents, |a| (config.rank(a), *a));
            WaitCycle {
                ids: records
                    .iter()
                    .filter_map(|&h| waiting.get(h).map(|r| r.id.clone()))
                    .collect(),
                agents: agents.into_iter().map(str::to_owned).collect(),
            }
        })
        .collect();
    WaitForGraph {
        issue_number: ledger.issue_number,
        edges: waiting
            .iter()
            .map(|r| WaitForEdge {
                id: r.id.clone(),
                from: r.from.clone(),
                to: r.to.clone(),
                status: r.current_status().as_str(),
            })
            .collect(),
        cycles,
    }
}
