//! What `/metrics` counts from the ledgers (docs/protocol.md §23.2): open records by status,
//! escalations, people's decisions by `via` and how long each took. The inbox's view already
//! reads every ledger once and then each ledger the change feed names (`open_follow.rs`); each
//! reading replaces that issue's tally here, so a scrape sums tallies and never reads the
//! store. The figures are the store's, the same on every replica (aggregate with `max`, not
//! `sum`); ledgers only grow, so the totals only grow, as a counter must.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use agentx_clarify_core::ledger::{EntryKind, Ledger};

/// One issue's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Records by their current status (`Status::as_str`).
    pub by_status: BTreeMap<&'static str, u64>,
    pub escalations: u64,
    /// People's decisions (a `human` resolution entry) by `via` (`none` when it names none).
    pub decisions: BTreeMap<String, u64>,
    /// Seconds from what put each decision before a person — the last escalation before it,
    /// else the record's first entry — to the decision.
    pub decision_secs: Vec<f64>,
}

impl Tally {
    /// The figures of one ledger.
    pub fn of(ledger: &Ledger) -> Tally {
        let mut t = Tally::default();
        for record in &ledger.clarifications {
            *t.by_status
                .entry(record.current_status().as_str())
                .or_default() += 1;
            let mut since = record.thread.first().map(|e| e.timestamp.ms());
            for entry in &record.thread {
                match entry.kind {
                    EntryKind::Escalation => {
                        t.escalations += 1;
                        since = Some(entry.timestamp.ms());
                    }
                    EntryKind::Resolution if entry.from == agentx_clarify_core::names::HUMAN => {
                        let via = entry.extra.get("via").and_then(|v| v.as_str());
                        *t.decisions.entry(via_label(via)).or_default() += 1;
                        if let Some(from) = since {
                            let ms = (entry.timestamp.ms() - from).max(0);
                            t.decision_secs.push(ms as f64 / 1000.0);
                        }
                    }
                    _ => {}
                }
            }
        }
        t
    }

    fn add(&mut self, other: &Tally) {
        for (k, v) in &other.by_status {
            *self.by_status.entry(k).or_default() += v;
        }
        self.escalations += other.escalations;
        for (k, v) in &other.decisions {
            *self.decisions.entry(k.clone()).or_default() += v;
        }
        self.decision_secs.extend_from_slice(&other.decision_secs);
    }
}

/// `via` as a label: the surfaces write short names (`web`, `elicitation`, `github`); anything
/// else is `other`, so a label never takes an unbounded set of values.
fn via_label(via: Option<&str>) -> String {
    match via {
        None => "none".into(),
        Some(v)
            if (1..=32).contains(&v.len())
                && v.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') =>
        {
            v.to_owned()
        }
        Some(_) => "other".into(),
    }
}

/// Every issue's tally, as the view last read it.
#[derive(Default)]
pub struct Tallies {
    by_issue: Mutex<BTreeMap<u32, Tally>>,
    /// Whether the first full read is done (until then the figures are partial).
    complete: std::sync::atomic::AtomicBool,
}

impl Tallies {
    /// Issue `issue`'s ledger as read now (`None`: it has none).
    pub fn set(&self, issue: u32, ledger: Option<&Ledger>) {
        let mut map = self.by_issue.lock().unwrap_or_else(PoisonError::into_inner);
        match ledger {
            Some(l) => map.insert(issue, Tally::of(l)),
            None => map.remove(&issue),
        };
    }

    /// The full read is done: every ledger has its tally.
    pub fn completed(&self) {
        self.complete
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_complete(&self) -> bool {
        self.complete.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The sum over every issue.
    pub fn total(&self) -> Tally {
        let map = self.by_issue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut sum = Tally::default();
        for t in map.values() {
            sum.add(t);
        }
        sum
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_is_counted_by_status_escalation_and_decision() {
        let text = r#"{"issueNumber":7,"clarifications":[
          {"id":"CLR-7-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"Which cache?","timestamp":"2026-11-22T10:00:00.000Z"},
            {"round":1,"from":"monitor","type":"escalation","body":"SLA expired","timestamp":"2026-11-22T10:30:00.000Z"},
            {"round":1,"from":"human","type":"resolution","body":"LRU","timestamp":"2026-11-22T10:40:00.000Z","by":"alice","via":"web"}]},
          {"id":"CLR-7-002","from":"engineer","to":"architect","topic":"Db","blocking":true,"status":"pending","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"Which db?","timestamp":"2026-11-22T10:00:00.000Z"}]}]}"#;
        let ledger = Ledger::parse("issue-7.json", text.as_bytes(), Some(7)).unwrap();
        let t = Tally::of(&ledger);
        assert_eq!(t.by_status.get("resolved"), Some(&1));
        assert_eq!(t.by_status.get("pending"), Some(&1));
        assert_eq!(t.escalations, 1);
        assert_eq!(t.decisions.get("web"), Some(&1));
        assert_eq!(t.decision_secs, vec![600.0]);
        let all = Tallies::default();
        all.set(7, Some(&ledger));
        all.set(8, Some(&ledger));
        assert_eq!(all.total().escalations, 2);
        all.set(8, None);
        assert_eq!(all.total().escalations, 1);
        assert_eq!(via_label(Some("Evil label\n")), "other");
        assert_eq!(via_label(None), "none");
    }
}
