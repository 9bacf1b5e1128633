//! Analytics (docs/protocol.md §11.5, §18), computed purely from ledgers.

use serde::{Deserialize, Serialize};

use crate::delegation::{metrics, DelegationLedger, DelegationMetrics, Manifests};
use crate::ledger::{EntryKind, Ledger, Record, Status};
use crate::names::MONITOR;

mod memory;
mod people;

pub use memory::{AgentMemory, Memory};
pub use people::{people_stats, PersonStats};

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

/// Records per status, serialised as an object in [`Status::ALL`] order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByStatus(pub [usize; 6]);

impl ByStatus {
    fn slot(status: Status) -> usize {
        Status::ALL.iter().position(|s| *s == status).unwrap_or(0)
    }

    pub fn get(&self, status: Status) -> usize {
        self.0.get(Self::slot(status)).copied().unwrap_or(0)
    }

    fn add(&mut self, status: Status) {
        if let Some(n) = self.0.get_mut(Self::slot(status)) {
            *n += 1;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (Status, usize)> + '_ {
        Status::ALL.iter().zip(self.0.iter()).map(|(s, n)| (*s, *n))
    }
}

impl Serialize for ByStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(Status::ALL.len()))?;
        for (status, n) in self.iter() {
            m.serialize_entry(status.as_str(), &n)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ByStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::deserialize(d)?;
        let mut out = ByStatus::default();
        for (slot, s) in out.0.iter_mut().zip(Status::ALL) {
            if let Some(n) = map.get(s.as_str()).and_then(serde_json::Value::as_u64) {
                *slot = usize::try_from(n).unwrap_or(usize::MAX);
            }
        }
        Ok(out)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub total: usize,
    pub by_status: ByStatus,
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
    /// Re-asks answered from the record that already held the question instead of a new
    /// record (docs/protocol.md §22): the `reuseCount` of the records counted.
    #[serde(default)]
    pub reasks_suppressed: u64,
    /// Seed 003's delegation metrics and gap scores (docs/protocol.md §18); absent when the workspace has
    /// no delegation, so the output is then exactly as before.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub delegations: Option<DelegationMetrics>,
    /// What the hub's memory saved (docs/protocol.md §36): re-asks and reused decisions per
    /// agent and the agent-minutes they saved; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memory::Memory>,
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

/// [`stats`] with the delegation ledgers: `delegations` holds their metrics when any
/// delegation was created at or after `since`.
pub fn stats_with_delegations(
    ledgers: &[Ledger],
    delegations: &[DelegationLedger],
    manifests: &Manifests,
    since: Option<i64>,
) -> Stats {
    let mut out = stats(ledgers, since);
    let m = metrics(ledgers, delegations, manifests, since);
    out.delegations = (m.total > 0 || m.reports > 0).then_some(m);
    out
}

/// Statistics over every record created at or after `since` (epoch ms), when given.
pub fn stats(ledgers: &[Ledger], since: Option<i64>) -> Stats {
    let records: Vec<&Record> = ledgers
        .iter()
        .flat_map(|l| l.clarifications.iter())
        .filter(|r| since.is_none_or(|s| r.created.as_ref().is_some_and(|c| c.ms() >= s)))
        .collect();
    let mut by_status = ByStatus::default();
    let (mut terminal, mut auto_resolved, mut escalated, mut resolved) = (0, 0, 0, 0usize);
    let mut rounds_sum = 0u64;
    let mut latencies = Vec::new();
    let (mut stale_count, mut deadlock_count) = (0, 0);
    // Few distinct pairs: a list scanned linearly, sorted once at the end.
    let mut pairs: Vec<PairStats> = Vec::new();
    for r in &records {
        let status = r.current_status();
        by_status.add(status);
        let escalation = has_escalation(r);
        if status.is_terminal() {
            terminal += 1;
        }
        if status == Status::Resolved {
            resolved += 1;
            rounds_sum += u64::from(r.folded_round());
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
        let index = match pairs.iter().position(|p| p.from == r.from && p.to == r.to) {
            Some(i) => i,
            None => {
                pairs.push(PairStats {
                    from: r.from.clone(),
                    to: r.to.clone(),
                    total: 0,
                    resolved: 0,
                    escalated: 0,
                });
                pairs.len() - 1
            }
        };
        if let Some(pair) = pairs.get_mut(index) {
            pair.total += 1;
            pair.resolved += usize::from(status == Status::Resolved);
            pair.escalated += usize::from(escalation);
        }
    }
    crate::stable_sort::sort_by(&mut latencies, Ord::cmp);
    crate::stable_sort::sort_by(&mut pairs, |a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
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
        pairs,
        reasks_suppressed: records.iter().map(|r| u64::from(r.reuses.count)).sum(),
        delegations: None,
        memory: memory::memory(&records),
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
        let by_status = serde_json::to_value(&s.by_status).unwrap();
        assert_eq!(by_status.as_object().unwrap().len(), 6);
        assert_eq!(s.escalation_rate, None);
    }

    #[test]
    fn delegations_appear_only_when_there_are_some() {
        let none = stats_with_delegations(&[], &[], &Manifests::new(), None);
        let plain = serde_json::to_value(stats(&[], None)).unwrap();
        assert_eq!(serde_json::to_value(&none).unwrap(), plain);
        assert!(plain.get("delegations").is_none());
        let mut dl = DelegationLedger::new(1);
        dl.reports.push(crate::delegation::Report {
            agent: String::from("a"),
            status: String::from("success"),
            deliverables: Vec::new(),
            metrics_achieved: None,
            recommendations: Vec::new(),
            timestamp: crate::time::Timestamp::from_ms(0),
            signal_key: None,
            extra: serde_json::Map::new(),
        });
        let with = stats_with_delegations(&[], &[dl], &Manifests::new(), None);
        let v = serde_json::to_value(&with).unwrap();
        assert_eq!(v["delegations"]["reports"], 1);
        assert_eq!(v["delegations"]["byStatus"]["COMPLETED"], 0);
        assert_eq!(
            v["delegations"]["delegationSuccessRate"],
            serde_json::Value::Null
        );
    }
}
