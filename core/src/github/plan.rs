//! The outbox deliveries of the comments (kind `github`, sink name `github`): one per version
//! of a record (its thread's length), so every change is owed an edit; an older version not
//! sent yet is superseded (each delivery renders the record as it is when sent).

use std::collections::BTreeSet;

use crate::ledger::Ledger;
use crate::notify::outbox::{Delivery, State, GITHUB_SINK};
use crate::notify::{EventName, Outbox};

/// The sink name of the comment deliveries in the outbox (`notify status` lists them so).
pub const SINK: &str = GITHUB_SINK;

/// The `via` of an entry taken from a GitHub comment (the sync writes it).
pub const VIA: &str = "github";

/// Adds the comment updates `ledgers` owe GitHub. Records that were open when GitHub Mode
/// was set up (the outbox's first pass) get their comment; closed ones from before are left
/// alone — except, whenever their last entry is stamped, a record that has a comment owed or
/// sent (it keeps getting every version) and a record decided on GitHub (the person who typed
/// the decision sees it taken). A writer stamps an entry before it writes it, so a decision
/// written while the first pass reads the ledgers can be stamped before that pass set `since`
/// and still be news. Returns how many deliveries it added.
pub fn plan(outbox: &mut Outbox, ledgers: &[&Ledger], now: i64) -> usize {
    let since = *outbox.since.entry(SINK.to_owned()).or_insert(now);
    // Read once, not per record: every pass looks at each closed record from before `since`.
    let followed: BTreeSet<String> = outbox
        .deliveries
        .values()
        .filter(|d| d.sink == SINK)
        .map(|d| d.record.clone())
        .collect();
    let mut added = 0;
    for ledger in ledgers {
        for record in &ledger.clarifications {
            let len = record.thread.len();
            let at = record.thread.last().map_or(now, |e| e.timestamp.ms());
            let decided_here = || {
                record
                    .thread
                    .last()
                    .and_then(|e| e.extra.get("via"))
                    .and_then(serde_json::Value::as_str)
                    == Some(VIA)
            };
            if at < since
                && !record.current_status().is_open()
                && !followed.contains(&record.id)
                && !decided_here()
            {
                continue;
            }
            let event = format!("gh_{}_{len}", record.id);
            let key = format!("{event}/{SINK}");
            if outbox.deliveries.contains_key(&key) {
                continue;
            }
            // Superseded: a pending edit of an older version nobody holds now.
            for d in outbox.deliveries.values_mut() {
                if d.sink == SINK
                    && d.record == record.id
                    && d.state == State::Pending
                    && d.lease.as_ref().is_none_or(|l| l.until <= now)
                {
                    d.state = State::Canceled;
                    d.done = Some(now);
                    d.lease = None;
                }
            }
            outbox.deliveries.insert(
                key,
                Delivery {
                    event,
                    sink: SINK.to_owned(),
                    name: EventName::Github,
                    issue: ledger.issue_number,
                    record: record.id.clone(),
                    entry: len.saturating_sub(1),
                    state: State::Pending,
                    due: at.max(since),
                    next: at.max(since),
                    attempts: 0,
                    last_error: None,
                    lease: None,
                    done: None,
                },
            );
            added += 1;
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(entries: usize) -> Ledger {
        let thread: Vec<String> = (0..entries)
            .map(|i| {
                let kind = if i % 2 == 0 { "question" } else { "answer" };
                let from = if i % 2 == 0 { "engineer" } else { "architect" };
                format!(
                    r#"{{"round":{},"from":"{from}","type":"{kind}","body":"b{i}","timestamp":"2026-11-22T10:0{i}:00.000Z"}}"#,
                    i / 2 + 1
                )
            })
            .collect();
        let status = if entries % 2 == 1 {
            "pending"
        } else {
            "answered"
        };
        let text = format!(
            r#"{{"issueNumber":42,"clarifications":[{{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"{status}","round":1,"maxRounds":3,"slaMinutes":30,"thread":[{}]}}]}}"#,
            thread.join(",")
        );
        Ledger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap()
    }

    #[test]
    fn one_delivery_per_version_and_older_ones_superseded() {
        let t0 = 1_795_341_600_000;
        let mut outbox = Outbox::default();
        let l1 = ledger(1);
        assert_eq!(plan(&mut outbox, &[&l1], t0), 1);
        assert_eq!(plan(&mut outbox, &[&l1], t0), 0);
        let l2 = ledger(2);
        assert_eq!(plan(&mut outbox, &[&l2], t0 + 1), 1);
        let states: Vec<_> = outbox.deliveries.values().map(|d| d.state).collect();
        assert_eq!(states, [State::Canceled, State::Pending]);
        assert_eq!(outbox.due(t0 + 10 * 60_000).len(), 1);
    }

    #[test]
    fn one_deliverer_at_a_time_holds_a_records_comment() {
        use crate::notify::outbox::LEASE_MS;
        // After both versions' entries (10:00 and 10:01).
        let t0 = 1_795_341_600_000 + 120_000;
        let mut outbox = Outbox::default();
        plan(&mut outbox, &[&ledger(1)], t0);
        let v1 = "gh_CLR-42-001_1/github";
        assert!(outbox.lease(v1, "a", t0));
        // A new version while `a` sends the first: owed, but not `b`'s to send meanwhile
        // (both would find no comment and both create one).
        plan(&mut outbox, &[&ledger(2)], t0 + 1);
        let v2 = "gh_CLR-42-001_2/github";
        assert_eq!(outbox.due(t0 + 1), [v2]);
        assert!(!outbox.lease(v2, "b", t0 + 1));
        assert_eq!(
            outbox.next_due(),
            Some(t0 + LEASE_MS),
            "wakes when a's hold ends"
        );
        // `a` itself may go on with it; once `a` is done, anyone.
        let mut same = outbox.clone();
        assert!(same.lease(v2, "a", t0 + 1));
        outbox.settle(v1, "a", Ok(()), t0 + 2);
        assert_eq!(outbox.next_due(), Some(t0), "due since it was owed");
        assert!(outbox.lease(v2, "b", t0 + 2));
        // A holder that died: its hold ends with its lease.
        let mut dead = Outbox::default();
        plan(&mut dead, &[&ledger(1)], t0);
        assert!(dead.lease(v1, "a", t0));
        plan(&mut dead, &[&ledger(2)], t0 + 1);
        assert!(!dead.lease(v2, "b", t0 + LEASE_MS - 1));
        assert!(dead.lease(v2, "b", t0 + LEASE_MS));
    }

    #[test]
    fn a_record_followed_gets_a_closing_version_stamped_before_the_setup() {
        // GitHub Mode's first pass at `setup` reads the record open (one entry); an answer
        // stamped a moment before `setup` lands after that read: it is still owed its edit.
        let setup = 1_795_341_600_000 + 90_000;
        let mut outbox = Outbox::default();
        assert_eq!(plan(&mut outbox, &[&ledger(1)], setup), 1);
        let resolved = Ledger::parse(
            "issue-42.json",
            br#"{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[{"round":1,"from":"engineer","type":"question","body":"b0","timestamp":"2026-11-22T10:00:00.000Z"},{"round":1,"from":"human","type":"resolution","body":"Ship it.","timestamp":"2026-11-22T10:01:00.000Z"}]}]}"#,
            Some(42),
        )
        .unwrap();
        let record = &resolved.clarifications[0];
        assert!(!record.current_status().is_open());
        assert!(record.thread[1].timestamp.ms() < setup);
        assert_eq!(plan(&mut outbox, &[&resolved], setup + 1), 1);
        // A record closed before the setup and never followed is left alone...
        let mut other = Outbox::default();
        assert_eq!(plan(&mut other, &[&resolved], setup), 0);
        // ...unless it was decided on GitHub: the decision was written as the first pass read.
        let text = String::from_utf8(resolved.to_pretty_json().into_bytes())
            .unwrap()
            .replace(
                r#""body": "Ship it.","#,
                r#""body": "Ship it.", "by": "ann", "via": "github","#,
            );
        let from_github = Ledger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap();
        let mut other = Outbox::default();
        assert_eq!(plan(&mut other, &[&from_github], setup), 1);
    }
}
