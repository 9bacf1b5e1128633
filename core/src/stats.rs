//! Analytics (SPEC §11.5), computed purely from ledgers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ledger::{EntryKind, Ledger, Record, Status};
use crate::names::MONITOR;

/// Time from the first question to the first answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: usize,
    pub median: Option<i64>,
    pub p90: Option<i64>,
}

/// Counts for one requester → target pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairStats {
    pub from: String,
    pub to: String,
    pub total: usize,
    pub resolved: usize,
    pub escalated: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub total: usize,
    pub by_status: BTreeMap<String, usize>,
    /// Resolved without any escalation ÷ terminal records.
    pub auto_resolution_rate: Option<f64>,
    /// Records with at least one escalation ÷ all records.
    pub escalation_rate: Option<f64>,
    pub average_rounds_to_resolution: Option<f64>,
    pub time_to_first_answer_ms: Latency,
    /// Records that went stale at least once.
    pub stale_count: usize,
    /// Records escalated to break a deadlock.
    pub deadlock_count: usize,
    pub pairs: Vec<PairStats>,
}

fn ratio(num: usize, den: usize) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    (den > 0).then(|| num as f64 / den as f64)
}

/// Nearest-rank percentile of sorted values (1-based rank ⌈p·n⌉).
fn nearest_rank(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted.get(rank - 1).copied()
}

fn has_escalation(r: &Record) -> bool {
    r.thread.iter().any(|e| e.kind == EntryKind::Escalation)
}

/// Statistics over every record created at or after `since` (epoch ms), when given.
pub fn stats(ledgers: &[Ledger], since: Option<i64>) -> Stats {
    let records: Vec<&Record> = ledgers
        .iter()
        .flat_map(|l| l.clarifications.iter())
        .filter(|r| since.is_none_or(|s| r.created.as_ref().is_some_and(|c| c.ms() >= s)))
        .collect();
    let mut by_status: BTreeMap<String, usize> = Status::ALL
        .iter()
        .map(|s| (s.as_str().to_owned(), 0))
        .collect();
    let mut terminal = 0;
    let mut auto_resolved = 0;
    let mut escalated = 0;
    let mut rounds_sum = 0u64;
    let mut resolved = 0usize;
    let mut latencies = Vec::new();
    let mut stale_count = 0;
    let mut deadlock_count = 0;
    let mut pairs: BTreeMap<(&str, &str), PairStats> = BTreeMap::new();
    for r in &records {
        let status = r.current_status();
        *by_status.entry(status.as_str().to_owned()).or_default() += 1;
        let escalation = has_escalation(r);
        if status.is_terminal() {
            terminal += 1;
        }
        if status == Status::Resolved {
            resolved += 1;
            rounds_sum += u64::from(r.fold().round);
            if !escalation {
                auto_resolved += 1;
            }
        }
        if escalation {
            escalated += 1;
        }
        let first_q = r.thread.iter().find(|e| e.kind == EntryKind::Question);
        let first_a = r.thread.iter().find(|e| e.kind == EntryKind::Answer);
        if let (Some(q), Some(a)) = (first_q, first_a) {
            latencies.push(a.timestamp.ms() - q.timestamp.ms());
        }
        if r.thread.iter().any(|e| e.kind == EntryKind::Stale) {
            stale_count += 1;
        }
        if r.thread.iter().any(|e| {
            e.kind == EntryKind::Escalation && e.from == MONITOR && e.body.starts_with("deadlock:")
        }) {
            deadlock_count += 1;
        }
        let pair = pairs
            .entry((r.from.as_str(), r.to.as_str()))
            .or_insert_with(|| PairStats {
                from: r.from.clone(),
                to: r.to.clone(),
                total: 0,
                resolved: 0,
                escalated: 0,
            });
        pair.total += 1;
        pair.resolved += usize::from(status == Status::Resolved);
        pair.escalated += usize::from(escalation);
    }
    latencies.sort_unstable();
    #[allow(clippy::cast_precision_loss)]
    let average_rounds = (resolved > 0).then(|| rounds_sum as f64 / resolved as f64);
    Stats {
        total: records.len(),
        by_status,
        auto_resolution_rate: ratio(auto_resolved, terminal),
        escalation_rate: ratio(escalated, records.len()),
        average_rounds_to_resolution: average_rounds,
        time_to_first_answer_ms: Latency {
            count: latencies.len(),
            median: nearest_rank(&latencies, 0.5),
            p90: nearest_rank(&latencies, 0.9),
        },
        stale_count,
        deadlock_count,
        pairs: pairs.into_values().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 0.5), Some(5));
        assert_eq!(nearest_rank(&v, 0.9), Some(9));
        assert_eq!(nearest_rank(&[7], 0.9), Some(7));
        assert_eq!(nearest_rank(&[], 0.5), None);
    }

    #[test]
    fn empty_stats() {
        let s = stats(&[], None);
        assert_eq!(s.total, 0);
        assert_eq!(s.by_status.len(), 6);
        assert_eq!(s.escalation_rate, None);
    }
}
