//! Seed 003 §12's metrics and §8's gap scoring, computed purely from ledgers (docs/protocol.md §18).
//!
//! - `delegationSuccessRate` = COMPLETED ÷ delegations;
//! - `avgRoundTripSec` = mean time from request to completion over COMPLETED delegations;
//! - `clarificationReworkRatio` = clarification rounds on the issues that have delegations ÷
//!   those delegations;
//! - `unresolvedCarryover` = COMPLETED delegations whose response passes unresolved items
//!   upstream ÷ COMPLETED delegations (`unresolvedItems` counts the items).
//!
//! Per capability (delegations that name one):
//! - `rejectionRate` = REJECTED_CAPABILITY ÷ its delegations;
//! - `latencyPenaltyRatio` = its mean round trip ÷ the mean round trip of every other
//!   capability, minus 1, at least 0 (1 means twice as slow as the rest of the team: seed
//!   003 §8.1's "2× baseline"). Round trips count completions and timeouts, each divided by
//!   the `latency_weight` the target's manifest declares for the capability (a capability
//!   declared slow is not penalised for being slow). No other capability: 0;
//! - `clarificationCyclesRatio` = clarification rounds on the issues where it was delegated ÷
//!   its delegations;
//! - `score` = 0.4·rejection + 0.3·latency + 0.3·cycles, each ratio clamped to [0, 1]. At
//!   [`GAP_THRESHOLD`] or more the capability is flagged, and flagged capabilities sharing a
//!   first segment make one suggestion record in seed 003 §8.3's shape (snake_case keys, as
//!   the seed writes them), its justification the top-scoring capability's ratios rounded to
//!   two decimals (the latency ratio unclamped, as in the seed).

use crate::sorted_map::SortedMap;

use serde::Serialize;

use super::manifest::Manifests;
use super::{Delegation, DelegationLedger, Status};
use crate::ledger::Ledger;

/// Score from which a capability gap yields a suggestion (seed 003 §8.2).
pub const GAP_THRESHOLD: f64 = 0.55;
const WEIGHTS: (f64, f64, f64) = (0.4, 0.3, 0.3);

/// One capability's gap analysis.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityGap {
    pub capability: String,
    pub delegations: usize,
    pub rejected_capability: usize,
    pub rejection_rate: f64,
    /// Unclamped (the score clamps it).
    pub latency_penalty_ratio: f64,
    /// Unclamped (the score clamps it).
    pub clarification_cycles_ratio: f64,
    pub score: f64,
}

/// The justification of a suggestion (seed 003 §8.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Justification {
    pub rejection_rate: f64,
    pub latency_penalty_ratio: f64,
    pub clarification_cycles_ratio: f64,
    pub score: f64,
}

/// A proposal to add an agent (seed 003 §8.3's record, its keys as the seed spells them).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suggestion {
    pub suggestion_id: String,
    pub proposed_agent: String,
    pub capabilities: Vec<String>,
    pub justification: Justification,
    pub impact_expectation: String,
    pub rfc_reference: Option<String>,
    pub submitted_by: String,
}

/// What `stats` adds when the workspace has delegations.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DelegationMetrics {
    pub total: usize,
    /// Every status, in [`Status::ALL`] order (the enum's order), zeros included; written as
    /// an object keyed by status.
    #[serde(serialize_with = "status_counts")]
    pub by_status: [usize; Status::ALL.len()],
    pub delegation_success_rate: Option<f64>,
    pub avg_round_trip_sec: Option<f64>,
    pub clarification_rework_ratio: Option<f64>,
    pub unresolved_carryover: Option<f64>,
    pub unresolved_items: usize,
    /// Completion reports that closed no delegation.
    pub reports: usize,
    /// Highest score first.
    pub gaps: Vec<CapabilityGap>,
    pub suggestions: Vec<Suggestion>,
}

#[allow(clippy::cast_precision_loss)] // counts far below 2^52
fn ratio(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

#[allow(clippy::cast_precision_loss)]
fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Where `status` counts in `by_status`.
fn slot(status: Status) -> Option<usize> {
    Status::ALL.iter().position(|s| *s == status)
}

/// `{status: count}` in [`Status::ALL`] order.
fn status_counts<S: serde::Serializer>(
    counts: &[usize; Status::ALL.len()],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(Status::ALL.iter().map(|st| st.as_str()).zip(counts))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Clarification rounds per issue (records created at or after `since`).
fn rounds_by_issue(ledgers: &[Ledger], since: Option<i64>) -> SortedMap<u32, u64> {
    let mut out = SortedMap::new();
    for l in ledgers {
        let rounds: u64 = l
            .clarifications
            .iter()
            .filter(|r| since.is_none_or(|s| r.created.as_ref().is_some_and(|c| c.ms() >= s)))
            .map(|r| u64::from(r.folded_round()))
            .sum();
        out.update(l.issue_number, || 0, |n| *n += rounds);
    }
    out
}

/// The metrics over every delegation created at or after `since`, when given.
pub fn metrics(
    ledgers: &[Ledger],
    delegations: &[DelegationLedger],
    manifests: &Manifests,
    since: Option<i64>,
) -> DelegationMetrics {
    let all: Vec<(u32, &Delegation)> = delegations
        .iter()
        .flat_map(|l| l.delegations.iter().map(move |d| (l.issue_number, d)))
        .filter(|(_, d)| since.is_none_or(|s| d.fold().created_at.is_some_and(|c| c.ms() >= s)))
        .collect();
    let reports = delegations
        .iter()
        .flat_map(|l| l.reports.iter())
        .filter(|r| since.is_none_or(|s| r.timestamp.ms() >= s))
        .count();
    let rounds = rounds_by_issue(ledgers, since);
    // `issues` sorted and distinct.
    let rounds_on = |issues: &[u32]| -> usize {
        let n: u64 = issues.iter().filter_map(|i| rounds.get(i)).sum();
        usize::try_from(n).unwrap_or(usize::MAX)
    };

    let mut by_status = [0usize; Status::ALL.len()];
    let mut round_trips = Vec::new();
    let (mut completed, mut carrying, mut unresolved_items) = (0usize, 0usize, 0usize);
    for (_, d) in &all {
        let status = d.current_status();
        if let Some(n) = slot(status).and_then(|i| by_status.get_mut(i)) {
            *n += 1;
        }
        if status == Status::Completed {
            completed += 1;
            round_trips.extend(d.round_trip_sec());
            let unresolved = d.fold().response.map_or(0, |r| r.unresolved.len());
            unresolved_items += unresolved;
            carrying += usize::from(unresolved > 0);
        }
    }
    let issues = distinct_issues(&all);
    let gaps = gaps(&all, manifests, &rounds_on);
    let suggestions = suggestions(&gaps, &all);
    DelegationMetrics {
        total: all.len(),
        by_status,
        delegation_success_rate: ratio(completed, all.len()),
        avg_round_trip_sec: mean(&round_trips),
        clarification_rework_ratio: ratio(rounds_on(&issues), all.len()),
        unresolved_carryover: ratio(carrying, completed),
        unresolved_items,
        reports,
        gaps,
        suggestions,
    }
}

/// The issues of `delegations`, sorted, each once.
fn distinct_issues(delegations: &[(u32, &Delegation)]) -> Vec<u32> {
    let mut issues: Vec<u32> = delegations.iter().map(|(i, _)| *i).collect();
    crate::stable_sort::sort_dedup(&mut issues);
    issues
}

fn gaps(
    all: &[(u32, &Delegation)],
    manifests: &Manifests,
    rounds_on: &dyn Fn(&[u32]) -> usize,
) -> Vec<CapabilityGap> {
    let mut by_cap: SortedMap<&str, Vec<(u32, &Delegation)>> = SortedMap::new();
    for (issue, d) in all {
        if let Some(c) = d.capability.as_deref() {
            by_cap.update(c, Vec::new, |ds| ds.push((*issue, d)));
        }
    }
    // Round trips normalised by the declared latency weight, per capability (in `by_cap`'s
    // order).
    let normalised: Vec<(&str, Vec<f64>)> = by_cap
        .iter()
        .map(|(c, ds)| {
            let times = ds
                .iter()
                .filter_map(|(_, d)| {
                    d.round_trip_sec()
                        .map(|rt| rt / manifests.latency_weight(&d.to, c))
                })
                .collect();
            (*c, times)
        })
        .collect();
    let mut out: Vec<CapabilityGap> = by_cap
        .iter()
        .map(|(c, ds)| {
            let n = ds.len();
            let rejected = ds
                .iter()
                .filter(|(_, d)| d.current_status() == Status::RejectedCapability)
                .count();
            let others: Vec<f64> = normalised
                .iter()
                .filter(|(other, _)| other != c)
                .flat_map(|(_, t)| t.iter().copied())
                .collect();
            let own = normalised
                .iter()
                .find(|(other, _)| other == c)
                .and_then(|(_, t)| mean(t));
            let latency = match (own, mean(&others)) {
                (Some(own), Some(base)) if base > 0.0 => (own / base - 1.0).max(0.0),
                _ => 0.0,
            };
            let issues = distinct_issues(ds);
            let rejection = ratio(rejected, n).unwrap_or(0.0);
            let cycles = ratio(rounds_on(&issues), n).unwrap_or(0.0);
            let (wr, wl, wc) = WEIGHTS;
            let score = wr * rejection.clamp(0.0, 1.0)
                + wl * latency.clamp(0.0, 1.0)
                + wc * cycles.clamp(0.0, 1.0);
            CapabilityGap {
                capability: (*c).to_owned(),
                delegations: n,
                rejected_capability: rejected,
                rejection_rate: rejection,
                latency_penalty_ratio: latency,
                clarification_cycles_ratio: cycles,
                score,
            }
        })
        .collect();
    crate::stable_sort::sort_by(&mut out, |a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.capability.cmp(&b.capability))
    });
    out
}

fn suggestions(gaps: &[CapabilityGap], all: &[(u32, &Delegation)]) -> Vec<Suggestion> {
    // Flagged gaps grouped by the agent they call for, in order of their best score.
    let mut groups: Vec<(String, Vec<&CapabilityGap>)> = Vec::new();
    for g in gaps.iter().filter(|g| g.score >= GAP_THRESHOLD) {
        let segment = g.capability.split('.').next().unwrap_or("");
        let agent = format!("{segment}-agent");
        match groups.iter_mut().find(|(a, _)| *a == agent) {
            Some((_, members)) => members.push(g),
            None => groups.push((agent, vec![g])),
        }
    }
    groups
        .into_iter()
        .enumerate()
        .filter_map(|(i, (agent, members))| {
            let top = members.first()?;
            let caps: Vec<String> = members.iter().map(|g| g.capability.clone()).collect();
            let ds: Vec<&Delegation> = all
                .iter()
                .filter(|(_, d)| d.capability.as_ref().is_some_and(|c| caps.contains(c)))
                .map(|(_, d)| *d)
                .collect();
            // Dated by the latest fact it rests on: no clock needed, the same every run.
            let latest = ds
                .iter()
                .filter_map(|d| d.thread.last().map(|e| e.timestamp.ms()))
                .max()
                .unwrap_or(0);
            let date: String = crate::time::format_ms(latest).chars().take(10).collect();
            Some(Suggestion {
                suggestion_id: format!("gap-{agent}-{date}-{:02}", i + 1),
                proposed_agent: agent,
                impact_expectation: impact(top, &caps),
                capabilities: caps,
                justification: Justification {
                    rejection_rate: round2(top.rejection_rate),
                    latency_penalty_ratio: round2(top.latency_penalty_ratio),
                    clarification_cycles_ratio: round2(top.clarification_cycles_ratio),
                    score: round2(top.score),
                },
                rfc_reference: None,
                submitted_by: most_frequent_delegator(&ds),
            })
        })
        .collect()
}

/// The delegator that asked for these capabilities most often (ties: by name).
fn most_frequent_delegator(ds: &[&Delegation]) -> String {
    let mut counts: SortedMap<&str, usize> = SortedMap::new();
    for d in ds {
        counts.update(d.from.as_str(), || 0, |n| *n += 1);
    }
    let mut best: Option<(&str, usize)> = None;
    for (agent, n) in counts {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((agent, n));
        }
    }
    best.map(|(a, _)| a.to_owned()).unwrap_or_default()
}

/// `x` with `decimals` digits after the point, without the float formatter (kept out of the
/// wasm module; see `toml_read::float_text`).
fn fixed(x: f64, decimals: u32) -> String {
    let scale = 10i64.pow(decimals);
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let n = (x * scale as f64).round() as i64;
    let sign = if n < 0 { "-" } else { "" };
    let (int, frac) = (n.abs() / scale, n.abs() % scale);
    if decimals == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac:0width$}", width = decimals as usize)
    }
}

fn impact(top: &CapabilityGap, caps: &[String]) -> String {
    format!(
        "Take {} off agents that lack it: today {}% of its delegations are rejected for capability, round trips run {}x the rest of the team's, and {} clarification rounds come per delegation",
        caps.join(", "),
        fixed(top.rejection_rate * 100.0, 0),
        fixed(1.0 + top.latency_penalty_ratio, 1),
        fixed(top.clarification_cycles_ratio, 2)
    )
}

impl DelegationMetrics {
    /// Delegations in `status`.
    pub fn count(&self, status: Status) -> usize {
        slot(status)
            .and_then(|i| self.by_status.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// Lines for the text rendering of `stats`.
    pub fn text_lines(&self) -> Vec<String> {
        let pct = |r: Option<f64>| {
            r.map_or_else(
                || String::from("-"),
                |r| format!("{}%", fixed(r * 100.0, 0)),
            )
        };
        let num = |r: Option<f64>, d: u32| r.map_or_else(|| String::from("-"), |r| fixed(r, d));
        let mut out = vec![
            format!(
                "delegations: {} ({} completed, {} rejected, {} timed out, {} failed)",
                self.total,
                self.count(Status::Completed),
                self.count(Status::RejectedCapability)
                    + self.count(Status::RejectedContext),
                self.count(Status::Timeout),
                self.count(Status::FailedExecution)
            ),
            format!(
                "delegation success rate: {}   avg round trip: {} s   clarification rework: {}   unresolved carryover: {}",
                pct(self.delegation_success_rate),
                num(self.avg_round_trip_sec, 0),
                num(self.clarification_rework_ratio, 2),
                pct(self.unresolved_carryover)
            ),
        ];
        for g in &self.gaps {
            out.push(format!(
                "  {}: score {} (rejection {}, latency {}, cycles {}){}",
                g.capability,
                fixed(g.score, 2),
                fixed(g.rejection_rate, 2),
                fixed(g.latency_penalty_ratio, 2),
                fixed(g.clarification_cycles_ratio, 2),
                if g.score >= GAP_THRESHOLD {
                    "  ← gap"
                } else {
                    ""
                }
            ));
        }
        for s in &self.suggestions {
            out.push(format!(
                "suggestion {}: add {} for {}",
                s.suggestion_id,
                s.proposed_agent,
                s.capabilities.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_without_the_float_formatter() {
        assert_eq!(fixed(0.333, 2), "0.33");
        assert_eq!(fixed(2.9, 1), "2.9");
        assert_eq!(fixed(33.33, 0), "33");
        assert_eq!(fixed(0.05, 2), "0.05");
        assert_eq!(fixed(-1.25, 1), "-1.3");
        assert_eq!(fixed(-0.5, 1), "-0.5");
    }
}
