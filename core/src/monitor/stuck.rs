//! Phase 2: circular clarifications. A record whose last two questions (or last two answers)
//! repeat each other, or a record that asks back what its target asked (the direction flip),
//! is escalated. Similarity is the Jaccard index of word sets, strictly above the threshold.

use std::collections::BTreeMap;

use super::Pass;
use crate::ledger::{EntryKind, Record};

/// Lowercased words: maximal runs of characters for which `char::is_alphanumeric` holds
/// (so `café` stays `café`), sorted and deduplicated.
pub fn tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut words: Vec<String> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    crate::order::sort_dedup(&mut words);
    words
}

/// |A ∩ B| / |A ∪ B| of two sorted, deduplicated word lists; two empty sets are identical.
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)] // word counts far below 2^52
    let sim = common as f64 / union as f64;
    sim
}

fn similar(a: &str, b: &str, threshold: f64) -> bool {
    jaccard(&tokens(a), &tokens(b)) > threshold
}

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
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (index, r) in pass.ledger.clarifications.iter().enumerate() {
        if r.current_status().is_active() {
            let key = if r.from <= r.to {
                (r.from.clone(), r.to.clone())
            } else {
                (r.to.clone(), r.from.clone())
            };
            groups.entry(key).or_default().push(index);
        }
    }
    for mut members in groups.into_values() {
        if members.len() < 2 {
            continue;
        }
        let records = &pass.ledger.clarifications;
        crate::order::sort_by_key(&mut members, |&i| {
            records
                .get(i)
                .map(|r| (r.created.as_ref().map_or(0, |t| t.ms()), r.order_key().0))
        });
        for (pos, &later) in members.iter().enumerate() {
            let records = &pass.ledger.clarifications;
            let Some(b) = records.get(later) else {
                continue;
            };
            let earlier = members.iter().take(pos).copied().find(|&i| {
                records.get(i).is_some_and(|a| {
                    a.current_status().is_active()
                        && a.from == b.to
                        && a.to == b.from
                        && similar(&a.topic, &b.topic, threshold)
                })
            });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unicode_words() {
        assert_eq!(
            tokens("Café, CAFÉ! naïve-résumé 42"),
            vec!["42", "café", "naïve", "résumé"]
        );
        assert_eq!(tokens("  ...  "), Vec::<String>::new());
    }

    #[test]
    fn jaccard_bounds() {
        let t = |s: &str| tokens(s);
        assert!((jaccard(&t("a b c d"), &t("a b c d e")) - 0.8).abs() < 1e-12);
        assert!(
            jaccard(&t("a b c d"), &t("a b c d e")) <= 0.8,
            "exactly at threshold is not above it"
        );
        assert!((jaccard(&t(""), &t("")) - 1.0).abs() < f64::EPSILON);
        assert!(jaccard(&t("x"), &t("")).abs() < f64::EPSILON);
        assert!(
            (jaccard(&t("caf"), &t("café"))).abs() < f64::EPSILON,
            "café is not caf"
        );
    }
}
