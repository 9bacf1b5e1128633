//! Phase 2: circular clarifications. A record whose last two questions (or last two answers)
//! repeat each other, or a record that asks back what its target asked (the direction flip),
//! is escalated. Similarity is the Jaccard index of word sets, strictly above the threshold.

use std::cmp::Ordering;

use super::similarity::similar;
use super::Pass;
use crate::ledger::{EntryKind, Record};

/// Which kind of entry repeats in the record's last two of that kind, if any.
fn repetition(record: &Record, threshold: f64) -> Option<&'static str> {
    for (kind, what) in [
        (EntryKind::Question, "questions"),
        (EntryKind::Answer, "answers"),
    ] {
        let mut last = record.thread.iter().rev().filter(|e| e.kind == kind);
        if let (Some(b), Some(a)) = (last.next(), last.next()) {
            if similar(&a.body, &b.body, threshold) {
                return Some(what);
            }
        }
    }
    None
}

pub(super) fn run(pass: &mut Pass<'_>) {
    let threshold = pass.config.stuck_similarity;
    for index in 0..pass.ledger.clarifications.len() {
        let Some(record) = pass.ledger.clarifications.get(index) else {
            continue;
        };
        if !record.current_status().is_active() {
            continue;
        }
        if let Some(what) = repetition(record, threshold) {
            flag(
                pass,
                index,
                &format!("circular: the last two {what} repeat each other"),
            );
        }
    }
    direction_flips(pass, threshold);
}

/// "A asks B what B asked A": among active records on this issue in opposite directions with
/// similar topics, the later one (by `created`, then sequence) is escalated. Records are grouped
/// by agent pair, so the cost stays linear in the number of records.
fn direction_flips(pass: &mut Pass<'_>, threshold: f64) {
    let records = &pass.ledger.clarifications;
    // Most issues have no two active records in opposite directions: find out without
    // allocating (a ledger holds a handful of records; large ones take the sorted path below).
    if records.len() <= 32 {
        let active = |r: &&crate::ledger::Record| r.current_status().is_active();
        let any_opposite = records.iter().filter(active).enumerate().any(|(n, a)| {
            records
                .iter()
                .filter(active)
                .skip(n + 1)
                .any(|b| a.from == b.to && a.to == b.from)
        });
        if !any_opposite {
            return;
        }
    }
    let mut active: Vec<usize> = (0..records.len())
        .filter(|&i| {
            records
                .get(i)
                .is_some_and(|r| r.current_status().is_active())
        })
        .collect();
    if active.len() < 2 {
        return;
    }
    // Opposite directions share their unordered agent pair: order by (pair, created, sequence)
    // and look inside each pair's run only, so the cost stays n·log n for any n.
    let key = |i: usize| {
        records.get(i).map(|r| {
            let pair = if r.from <= r.to {
                (r.from.as_str(), r.to.as_str())
            } else {
                (r.to.as_str(), r.from.as_str())
            };
            (
                pair,
                r.created.as_ref().map_or(0, |t| t.ms()),
                r.order_key().0,
            )
        })
    };
    crate::stable_sort::sort_by_key(&mut active, |&i| key(i));
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut start = 0;
    while start < active.len() {
        let pair_of = |i: usize| key(i).map(|k| k.0);
        let first = active.get(start).copied().and_then(pair_of);
        let len = active
            .iter()
            .skip(start)
            .take_while(|&&i| pair_of(i) == first)
            .count()
            .max(1);
        if len >= 2 {
            runs.push(active.iter().skip(start).take(len).copied().collect());
        }
        start += len;
    }
    for run in runs {
        // The earlier records of each direction of the pair, in run order. Only one of the
        // other direction can be asked back (for a record an agent addressed to itself, one of
        // its own), so a run of asks in one direction costs nothing here.
        let (mut forward, mut backward, mut own): (Vec<usize>, Vec<usize>, Vec<usize>) =
            Default::default();
        for later in run {
            let records = &pass.ledger.clarifications;
            let Some(b) = records.get(later) else {
                continue;
            };
            let direction = b.from.cmp(&b.to);
            let candidates = match direction {
                Ordering::Less => &backward,
                Ordering::Greater => &forward,
                Ordering::Equal => &own,
            };
            let earlier = if b.current_status().is_active() {
                candidates.iter().copied().find(|&i| {
                    records.get(i).is_some_and(|a| {
                        a.current_status().is_active()
                            && a.from == b.to
                            && a.to == b.from
                            // A question asked back by a routed agent flips by design.
                            && !crate::replies::linked(a, b)
                            && similar(&a.topic, &b.topic, threshold)
                    })
                })
            } else {
                None
            };
            match direction {
                Ordering::Less => forward.push(later),
                Ordering::Greater => backward.push(later),
                Ordering::Equal => own.push(later),
            }
            if let Some(first) = earlier.and_then(|i| records.get(i)) {
                let reason = format!(
                    "circular: {} asks {} what {} asked {} in {}",
                    b.from, b.to, b.to, b.from, first.id
                );
                flag(pass, later, &reason);
            }
        }
    }
}

fn flag(pass: &mut Pass<'_>, index: usize, reason: &str) {
    pass.escalate(index, reason);
    let id = pass.id(index);
    pass.report.stuck.push(id);
}
