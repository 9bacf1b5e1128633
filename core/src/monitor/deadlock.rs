//! Phase 3: deadlocks. Per issue, the wait-for graph has an edge requester → target for each
//! blocking record in pending or stale. While a strongly connected component contains an edge,
//! the record of its lowest-priority requester is escalated (ties: later `created`, then larger
//! sequence number) and that component is recomputed. Tarjan's algorithm, iterative (cycles can
//! be long), restricted to one component at a time: linear when breaks are few.

use std::collections::HashMap;

use super::{DeadlockReport, Pass};

/// An edge `from → to` standing for one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitEdge {
    pub from: usize,
    pub to: usize,
    /// Caller's handle for the record behind the edge.
    pub record: usize,
}

/// One broken cycle: the component's records (handles) and nodes, and the chosen record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleBreak {
    pub records: Vec<usize>,
    pub nodes: Vec<usize>,
    pub victim: usize,
}

/// Finds every cycle break over a graph of `node_count` nodes. `choose` picks the record to
/// remove among a component's records (it receives their handles).
pub fn find_cycle_breaks(
    node_count: usize,
    edges: &[WaitEdge],
    mut choose: impl FnMut(&[usize]) -> usize,
) -> Vec<CycleBreak> {
    let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); node_count];
    for (i, e) in edges.iter().enumerate() {
        if let Some(list) = out_edges.get_mut(e.from) {
            list.push(i);
        }
    }
    let mut alive = vec![true; edges.len()];
    let mut tarjan = Tarjan::new(node_count);
    let mut breaks = Vec::new();
    let mut work: Vec<Vec<usize>> = vec![(0..node_count).collect()];
    let mut set_id = 0usize;
    while let Some(nodes) = work.pop() {
        set_id += 1;
        for &n in &nodes {
            if let Some(slot) = tarjan.member.get_mut(n) {
                *slot = set_id;
            }
        }
        let components = tarjan.run(&nodes, set_id, &out_edges, edges, &alive);
        for component in components {
            set_id += 1;
            for &n in &component {
                if let Some(slot) = tarjan.member.get_mut(n) {
                    *slot = set_id;
                }
            }
            let inside: Vec<usize> = component
                .iter()
                .flat_map(|&n| out_edges.get(n).into_iter().flatten().copied())
                .filter(|&ei| {
                    alive.get(ei).copied().unwrap_or(false)
                        && edges
                            .get(ei)
                            .is_some_and(|e| tarjan.member.get(e.to) == Some(&set_id))
                })
                .collect();
            if inside.is_empty() {
                continue;
            }
            let handles: Vec<usize> = inside
                .iter()
                .filter_map(|&ei| edges.get(ei).map(|e| e.record))
                .collect();
            let victim = choose(&handles);
            if let Some(pos) = handles.iter().position(|&h| h == victim) {
                if let Some(slot) = inside.get(pos).and_then(|&ei| alive.get_mut(ei)) {
                    *slot = false;
                }
            }
            breaks.push(CycleBreak {
                records: handles,
                nodes: component.clone(),
                victim,
            });
            work.push(component);
        }
    }
    breaks
}

/// The strongly connected components that contain at least one edge — every cycle lies in
/// one — as (the records of the edges inside, the nodes), before any break.
pub(super) fn cyclic_components(
    node_count: usize,
    edges: &[WaitEdge],
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); node_count];
    for (i, e) in edges.iter().enumerate() {
        if let Some(list) = out_edges.get_mut(e.from) {
            list.push(i);
        }
    }
    let alive = vec![true; edges.len()];
    let mut tarjan = Tarjan::new(node_count);
    tarjan.member.fill(1);
    let nodes: Vec<usize> = (0..node_count).collect();
    let components = tarjan.run(&nodes, 1, &out_edges, edges, &alive);
    let mut component_of = vec![usize::MAX; node_count];
    for (c, component) in components.iter().enumerate() {
        for &n in component {
            if let Some(slot) = component_of.get_mut(n) {
                *slot = c;
            }
        }
    }
    components
        .into_iter()
        .enumerate()
        .filter_map(|(c, component)| {
            let records: Vec<usize> = edges
                .iter()
                .filter(|e| {
                    component_of.get(e.from) == Some(&c) && component_of.get(e.to) == Some(&c)
                })
                .map(|e| e.record)
                .collect();
            (!records.is_empty()).then_some((records, component))
        })
        .collect()
}

/// Iterative Tarjan over the nodes currently marked with one set id.
struct Tarjan {
    index: Vec<usize>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    member: Vec<usize>,
}

const UNSEEN: usize = usize::MAX;

impl Tarjan {
    fn new(n: usize) -> Self {
        Tarjan {
            index: vec![UNSEEN; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            member: vec![0; n],
        }
    }

    fn run(
        &mut self,
        nodes: &[usize],
        set_id: usize,
        out: &[Vec<usize>],
        edges: &[WaitEdge],
        alive: &[bool],
    ) -> Vec<Vec<usize>> {
        for &n in nodes {
            if let Some(i) = self.index.get_mut(n) {
                *i = UNSEEN;
            }
        }
        let mut next_index = 0usize;
        let mut stack: Vec<usize> = Vec::new();
        let mut components = Vec::new();
        // Call stack of (node, position in its out-edge list).
        let mut calls: Vec<(usize, usize)> = Vec::new();
        for &root in nodes {
            if self.index.get(root) != Some(&UNSEEN) {
                continue;
            }
            self.visit(root, &mut next_index, &mut stack);
            calls.push((root, 0));
            while let Some(&mut (node, ref mut pos)) = calls.last_mut() {
                let next_edge = out.get(node).and_then(|list| list.get(*pos)).copied();
                if let Some(ei) = next_edge {
                    *pos += 1;
                    let Some(edge) = edges.get(ei) else { continue };
                    if !alive.get(ei).copied().unwrap_or(false)
                        || self.member.get(edge.to) != Some(&set_id)
                    {
                        continue;
                    }
                    let w = edge.to;
                    if self.index.get(w) == Some(&UNSEEN) {
                        self.visit(w, &mut next_index, &mut stack);
                        calls.push((w, 0));
                    } else if self.on_stack.get(w).copied().unwrap_or(false) {
                        let wi = self.index.get(w).copied().unwrap_or(UNSEEN);
                        if let Some(l) = self.low.get_mut(node) {
                            *l = (*l).min(wi);
                        }
                    }
                    continue;
                }
                calls.pop();
                let node_low = self.low.get(node).copied().unwrap_or(0);
                if let Some(&(parent, _)) = calls.last() {
                    if let Some(l) = self.low.get_mut(parent) {
                        *l = (*l).min(node_low);
                    }
                }
                if Some(node_low) == self.index.get(node).copied() {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        if let Some(s) = self.on_stack.get_mut(w) {
                            *s = false;
                        }
                        component.push(w);
                        if w == node {
                            break;
                        }
                    }
                    components.push(component);
                }
            }
        }
        components
    }

    fn visit(&mut self, n: usize, next_index: &mut usize, stack: &mut Vec<usize>) {
        if let Some(i) = self.index.get_mut(n) {
            *i = *next_index;
        }
        if let Some(l) = self.low.get_mut(n) {
            *l = *next_index;
        }
        *next_index += 1;
        stack.push(n);
        if let Some(s) = self.on_stack.get_mut(n) {
            *s = true;
        }
    }
}

pub(super) fn intern<'a>(
    name: &'a str,
    node_of: &mut HashMap<&'a str, usize>,
    names: &mut Vec<&'a str>,
) -> usize {
    if let Some(&n) = node_of.get(name) {
        return n;
    }
    names.push(name);
    node_of.insert(name, names.len() - 1);
    names.len() - 1
}

pub(super) fn run(pass: &mut Pass<'_>) {
    let records = &pass.ledger.clarifications;
    // A record whose question was asked back waits on that reply, not on its own target.
    let awaiting = crate::replies::awaiting_reply(pass.ledger);
    let waits = |r: &crate::ledger::Record| r.waits() && !awaiting.contains(&r.id.as_str());
    // A cycle needs two wait edges, or one agent waiting on itself (only in hand-made files).
    let mut edges_seen = 0;
    let mut self_loop = false;
    for r in records.iter().filter(|r| waits(r)) {
        edges_seen += 1;
        self_loop |= r.from == r.to;
    }
    if edges_seen < 2 && !self_loop {
        return;
    }
    // Agents become node numbers in order of first appearance: hash order never reaches output.
    let mut node_of: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let mut edges = Vec::new();
    for (index, r) in records.iter().enumerate() {
        if !waits(r) {
            continue;
        }
        let from = intern(&r.from, &mut node_of, &mut names);
        let to = intern(&r.to, &mut node_of, &mut names);
        edges.push(WaitEdge {
            from,
            to,
            record: index,
        });
    }
    let config = pass.config;
    let key = |i: usize| {
        records.get(i).map(|r| {
            (
                config.rank(&r.from),
                r.created.as_ref().map_or(i64::MIN, |t| t.ms()),
                r.order_key().0,
            )
        })
    };
    let breaks = find_cycle_breaks(names.len(), &edges, |handles| {
        handles.iter().copied().max_by_key(|&h| key(h)).unwrap_or(0)
    });
    let mut decided = Vec::with_capacity(breaks.len());
    for b in breaks {
        let mut ids: Vec<(u64, String)> = b
            .records
            .iter()
            .filter_map(|&h| records.get(h))
            .map(|r| (r.order_key().0, r.id.clone()))
            .collect();
        crate::stable_sort::sort_by(&mut ids, Ord::cmp);
        let mut agents: Vec<&str> = b
            .nodes
            .iter()
            .filter_map(|&n| names.get(n).copied())
            .collect();
        crate::stable_sort::sort_by_key(&mut agents, |a| (config.rank(a), *a));
        let Some(victim) = records.get(b.victim) else {
            continue;
        };
        let others: Vec<&str> = agents
            .iter()
            .copied()
            .filter(|a| *a != victim.from)
            .collect();
        let ids: Vec<String> = ids.into_iter().map(|(_, id)| id).collect();
        let mut reason = format!(
            "deadlock: {} between {}; {} yields to a human",
            ids.join(", "),
            agents.join(", "),
            victim.from
        );
        if !others.is_empty() {
            let verb = if others.len() == 1 {
                "continues"
            } else {
                "continue"
            };
            reason.push_str(&format!(", {} {verb}", others.join(", ")));
        }
        decided.push((
            b.victim,
            reason,
            DeadlockReport {
                cycle: ids,
                agents: agents.iter().map(|a| (*a).to_owned()).collect(),
                escalated: victim.id.clone(),
            },
        ));
    }
    for (index, reason, report) in decided {
        pass.escalate(index, &reason);
        pass.report.deadlocks.push(report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> Vec<WaitEdge> {
        (0..n)
            .map(|i| WaitEdge {
                from: i,
                to: (i + 1) % n,
                record: i,
            })
            .collect()
    }

    #[test]
    fn breaks_a_long_ring_once() {
        let breaks = find_cycle_breaks(100_000, &ring(100_000), |h| *h.iter().max().unwrap());
        assert_eq!(breaks.len(), 1);
        assert_eq!(breaks[0].victim, 99_999);
        assert_eq!(breaks[0].records.len(), 100_000);
    }

    #[test]
    fn two_cycles_sharing_a_node() {
        // 0 ⇄ 1 and 1 ⇄ 2: one component; breaking edge 1→2 (record 3) leaves 0 ⇄ 1.
        let edges = vec![
            WaitEdge {
                from: 0,
                to: 1,
                record: 0,
            },
            WaitEdge {
                from: 1,
                to: 0,
                record: 1,
            },
            WaitEdge {
                from: 1,
                to: 2,
                record: 2,
            },
            WaitEdge {
                from: 2,
                to: 1,
                record: 3,
            },
        ];
        let breaks = find_cycle_breaks(3, &edges, |h| *h.iter().max().unwrap());
        let victims: Vec<usize> = breaks.iter().map(|b| b.victim).collect();
        assert_eq!(victims.len(), 2);
        assert!(victims.contains(&3));
        assert!(victims.contains(&1));
    }

    #[test]
    fn acyclic_graphs_need_no_break() {
        let edges = vec![
            WaitEdge {
                from: 0,
                to: 1,
                record: 0,
            },
            WaitEdge {
                from: 1,
                to: 2,
                record: 1,
            },
        ];
        assert!(find_cycle_breaks(3, &edges, |h| h[0]).is_empty());
    }

    #[test]
    fn self_loops_count() {
        let edges = vec![WaitEdge {
            from: 0,
            to: 0,
            record: 7,
        }];
        assert_eq!(find_cycle_breaks(1, &edges, |h| h[0])[0].victim, 7);
    }
}
