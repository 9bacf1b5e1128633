//! What the hub's memory saved (docs/protocol.md §36, "Stats"): re-asks answered from the
//! record that held the question (§22) and decisions taken with `ask --reuse`, per agent, and
//! the agent-minutes they saved — each counted as the median time to decision of the records
//! that were decided the long way (resolved, not by reuse).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::{EntryKind, Record, Status};

/// One agent's share.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMemory {
    pub agent: String,
    /// Its re-asks answered from an existing record.
    pub reasks_suppressed: u64,
    /// Its asks resolved at once with a decision taken before (`--reuse`).
    pub decisions_reused: u64,
}

/// The memory's figures; absent from `stats` when nothing was re-asked or reused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// By agent name.
    pub by_agent: Vec<AgentMemory>,
    /// The median time from question to resolution of the records decided the long way.
    pub median_decision_ms: Option<i64>,
    /// (re-asks suppressed + decisions reused) × that median, in whole minutes; `None`
    /// without a record decided the long way to measure by.
    pub agent_minutes_saved: Option<u64>,
}

fn taken_by_reuse(r: &Record) -> bool {
    r.thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Resolution)
        .is_some_and(|e| e.extra.get("via").and_then(Value::as_str) == Some("reuse"))
}

fn add(by: &mut Vec<AgentMemory>, agent: &str, reasks: u64, reused: u64) {
    let i = match by.iter().position(|a| a.agent == agent) {
        Some(i) => i,
        None => {
            by.push(AgentMemory {
                agent: agent.to_owned(),
                reasks_suppressed: 0,
                decisions_reused: 0,
            });
            by.len() - 1
        }
    };
    if let Some(a) = by.get_mut(i) {
        a.reasks_suppressed += reasks;
        a.decisions_reused += reused;
    }
}

/// The memory figures of `records`. A re-ask is the agent's that the record kept as its
/// latest re-askers; older re-asks (past what a record keeps) count for the requester.
pub(super) fn memory(records: &[&Record]) -> Option<Memory> {
    let mut by: Vec<AgentMemory> = Vec::new();
    let mut long_way: Vec<i64> = Vec::new();
    for r in records {
        let kept = r.reuses.latest.len() as u64;
        for re in &r.reuses.latest {
            add(&mut by, &re.from, 1, 0);
        }
        let older = u64::from(r.reuses.count).saturating_sub(kept);
        if older > 0 {
            add(&mut by, &r.from, older, 0);
        }
        if r.current_status() != Status::Resolved {
            continue;
        }
        if taken_by_reuse(r) {
            add(&mut by, &r.from, 0, 1);
        } else {
            let asked = r.thread.iter().find(|e| e.kind == EntryKind::Question);
            let decided = r
                .thread
                .iter()
                .rev()
                .find(|e| e.kind == EntryKind::Resolution);
            if let (Some(q), Some(d)) = (asked, decided) {
                long_way.push(d.timestamp.ms() - q.timestamp.ms());
            }
        }
    }
    if by.is_empty() {
        return None;
    }
    crate::stable_sort::sort_by(&mut by, |a, b| a.agent.cmp(&b.agent));
    crate::stable_sort::sort_by(&mut long_way, Ord::cmp);
    let median = super::nearest_rank(&long_way, 0.5);
    let saved: u64 = by
        .iter()
        .map(|a| a.reasks_suppressed + a.decisions_reused)
        .sum();
    Some(Memory {
        by_agent: by,
        median_decision_ms: median,
        agent_minutes_saved: median.map(|m| {
            let ms = u64::try_from(m.max(0)).unwrap_or(0).saturating_mul(saved);
            ms / 60_000
        }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;
    use crate::ops::Action;
    use crate::signing::Signers;
    use crate::testkit::{apply, ask, plain, MIN, T0};

    /// Issue 1: asked and resolved the long way in 10 minutes; issue 2: the same question
    /// asked again twice by the reviewer (suppressed re-asks) and one taken by reuse.
    fn ledgers() -> Vec<Ledger> {
        let keys = Signers::new();
        let mut req = plain("engineer", "architect", "Cache", "Redis?");
        req.issue_number = 1;
        let l = ask(None, &req, T0, &keys);
        let answer = Action::Answer {
            from: "architect".into(),
            body: "Yes.".into(),
        };
        let l = apply(&l, "CLR-1-001", answer, T0 + 4 * MIN, &keys);
        let resolve = Action::Resolve {
            from: None,
            message: None,
        };
        let mut l = apply(&l, "CLR-1-001", resolve, T0 + 10 * MIN, &keys);
        if let Some(r) = l.clarifications.first_mut() {
            r.reuses.note("reviewer", T0 + 11 * MIN);
            r.reuses.note("reviewer", T0 + 12 * MIN);
        }
        let mut req = plain("engineer", "architect", "Cache again", "Redis here too?");
        req.issue_number = 2;
        let two = ask(None, &req, T0 + 20 * MIN, &keys);
        let answer = Action::Answer {
            from: "architect".into(),
            body: "Yes.".into(),
        };
        let two = apply(&two, "CLR-2-001", answer, T0 + 20 * MIN, &keys);
        let resolve = Action::Resolve {
            from: None,
            message: None,
        };
        let mut two = apply(&two, "CLR-2-001", resolve, T0 + 20 * MIN, &keys);
        if let Some(e) = two.clarifications[0].thread.last_mut() {
            e.extra.insert("via".into(), "reuse".into());
        }
        vec![l, two]
    }

    #[test]
    fn re_asks_and_reuses_count_per_agent_at_the_median_decision_time() {
        let ls = ledgers();
        let records: Vec<&Record> = ls.iter().flat_map(|l| l.clarifications.iter()).collect();
        let m = memory(&records).unwrap();
        assert_eq!(
            m.by_agent,
            [
                AgentMemory {
                    agent: "engineer".into(),
                    reasks_suppressed: 0,
                    decisions_reused: 1
                },
                AgentMemory {
                    agent: "reviewer".into(),
                    reasks_suppressed: 2,
                    decisions_reused: 0
                },
            ]
        );
        // Only the long way is measured: 10 minutes; three saved at 10 minutes each.
        assert_eq!(m.median_decision_ms, Some(10 * MIN));
        assert_eq!(m.agent_minutes_saved, Some(30));
    }

    #[test]
    fn nothing_reused_is_no_figure() {
        let ls = ledgers();
        let records: Vec<&Record> = ls[..1]
            .iter()
            .flat_map(|l| l.clarifications.iter())
            .filter(|r| r.reuses.count == 0)
            .collect();
        assert_eq!(memory(&records), None);
    }
}
