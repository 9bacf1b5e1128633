//! The outbox: which deliveries are owed, when each is due, and what a try changes.
//!
//! The ledgers are the log the outbox follows (docs/decisions.md, "The outbox follows the
//! ledgers"): every event a sink can be told of is an entry of a hash-chained ledger (an
//! escalation, an answer, a resolution, a stale mark), so an event that was recorded can never
//! be lost by a process that died before telling anyone: the next pass finds the entry and
//! owes its delivery. The outbox's own state is only what was tried: per delivery its
//! attempts, its next try, who holds it now, and whether it is done.
//!
//! Pure: the shell reads the ledgers and the state, sends, and writes the state back under the
//! store's lock.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ledger::{EntryKind, Ledger, Record, Status};
use crate::monitor::ESCALATED_WITH;
use crate::names::MONITOR;
use crate::notify::config::{EventName, Sink};

/// A delivery a sink is owed: which event of which record, and when it falls due.
struct Owed<'a> {
    event: String,
    name: EventName,
    issue: u32,
    record: &'a Record,
    entry: usize,
    due: i64,
}

/// Retries after a failed try: 10 s, 1 min, 5 min, 30 min, 2 h, then every 6 h.
pub const BACKOFF_MS: [i64; 6] = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000];
/// A delivery not made this long after it was due is `dead`.
pub const DEAD_AFTER_MS: i64 = 24 * 3_600_000;
/// Finished deliveries (delivered, dead, canceled) are kept this long, then forgotten.
pub const KEEP_MS: i64 = 7 * 24 * 3_600_000;
/// How long a deliverer holds a delivery it is sending without renewing it: past this another
/// may take it over (it died, or hangs beyond every timeout). A live deliverer renews its
/// leases every [`RENEW_MS`] while it sends (a command sink may run 30 s), so a dead one's
/// deliveries move to another within this of its death, not minutes later.
pub const LEASE_MS: i64 = 10_000;
/// How often a deliverer renews the leases of the deliveries it is sending.
pub const RENEW_MS: i64 = 3_000;
// A dead deliverer's deliveries move to another within 15 s of its death (docs/notifications.md).
const _: () = assert!(LEASE_MS + RENEW_MS <= 15_000 && RENEW_MS * 3 <= LEASE_MS);
/// The sink name of GitHub Mode's comment deliveries (`github::SINK`, planned by
/// `github::plan`, not from a `[[notify]]` table). Defined here, below `github`, because the
/// outbox keeps that sink's start when it forgets sinks no longer configured.
pub const GITHUB_SINK: &str = "github";

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Pending,
    Delivered,
    Dead,
    /// A ladder step (`after_minutes`) whose record left the state before it was due.
    Canceled,
}

/// One event owed to one sink.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The event's id: the `webhook-id`, the same on every try.
    pub event: String,
    pub sink: String,
    pub name: EventName,
    pub issue: u32,
    pub record: String,
    /// The thread entry the event is about (reminders: the escalation).
    pub entry: usize,
    pub state: State,
    /// When it became due (the entry's time, plus `after_minutes`, or a reminder's time).
    pub due: i64,
    /// When it may be tried next.
    pub next: i64,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_error: Option<String>,
    /// Who is sending it now, until when.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lease: Option<Lease>,
    /// When it was delivered, died or was canceled.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub done: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    pub by: String,
    pub until: i64,
}

/// The outbox's state: when each sink started listening, and every delivery owed or kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outbox {
    /// A sink is told only of events at or after this time (docs/notifications.md, "What a
    /// new sink is owed"): set when a pass first sees the sink, to [`owed_since`] — the
    /// moment it was configured at the latest, and never less than the retry horizon. Adding
    /// a sink to a long-lived workspace does not replay older history to a phone.
    #[serde(default)]
    pub since: BTreeMap<String, i64>,
    /// By `<event>/<sink>`.
    #[serde(default)]
    pub deliveries: BTreeMap<String, Delivery>,
}

/// Where a sink seen for the first time at `now` starts (docs/notifications.md, "What a new
/// sink is owed"): it is owed every event recorded since it was configured — `configured`,
/// the settings file's modification time, is when that happened at the latest — and never
/// less than the events of the last 24 hours (the retry horizon, [`DEAD_AFTER_MS`]), so the
/// escalation that made someone set the sink up is delivered by the first pass that sees it.
/// Starting at the first pass instead lost every event between the edit and that pass.
pub fn owed_since(configured: Option<i64>, now: i64) -> i64 {
    let horizon = now.saturating_sub(DEAD_AFTER_MS);
    configured.map_or(horizon, |at| at.min(horizon))
}

/// An event found in a ledger: its id, what it is, the entry and its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub event: String,
    pub name: EventName,
    pub entry: usize,
    pub at: i64,
}

/// The events of one record's thread, in order.
pub fn events_of(record: &Record) -> Vec<Found> {
    let mut found = Vec::new();
    for (i, entry) in record.thread.iter().enumerate() {
        let name = match entry.kind {
            // A question asked back, escalated with its original (issue 49): the pair is one
            // conversation, told of once, by the original's escalation.
            EntryKind::Escalation
                if entry.from == MONITOR && entry.body.starts_with(ESCALATED_WITH) =>
            {
                continue
            }
            EntryKind::Escalation if entry.body.starts_with("deadlock:") => EventName::Deadlock,
            EntryKind::Escalation if entry.body.starts_with("agent error:") => {
                EventName::RouteFailed
            }
            EntryKind::Escalation => EventName::Escalated,
            // A ladder's next step assigned more people: they are called, as by an escalation.
            EntryKind::Assign => EventName::Escalated,
            EntryKind::Answer => EventName::Answered,
            EntryKind::Resolution => EventName::Resolved,
            EntryKind::Stale => EventName::Stale,
            _ => continue,
        };
        found.push(Found {
            event: format!("evt_{}_{}", record.id, i),
            name,
            entry: i,
            at: entry.timestamp.ms(),
        });
    }
    found
}

/// The status a record is in right after an event of `name`.
fn status_of(name: EventName) -> Option<Status> {
    match name {
        EventName::Escalated | EventName::Deadlock | EventName::RouteFailed => {
            Some(Status::Escalated)
        }
        EventName::Answered => Some(Status::Answered),
        EventName::Resolved => Some(Status::Resolved),
        EventName::Stale => Some(Status::Stale),
        EventName::Reminder | EventName::Test | EventName::Github => None,
    }
}

/// The events that call a person to a record: an escalation of any cause, and its reminders.
pub fn is_escalation(name: EventName) -> bool {
    matches!(
        name,
        EventName::Escalated | EventName::Deadlock | EventName::RouteFailed | EventName::Reminder
    )
}

/// Whether `d` is still worth sending about `record` as it is now (the deliverer asks right
/// before it sends): an escalation or a reminder only while the record is escalated by that
/// escalation — once decided, abandoned, reopened or escalated anew, a push would call a
/// person to something already settled. Other events are facts that stay true.
pub fn still_owed(d: &Delivery, record: &Record) -> bool {
    if !is_escalation(d.name) {
        return true;
    }
    let later_escalation = record
        .thread
        .iter()
        .skip(d.entry + 1)
        .any(|e| e.kind == EntryKind::Escalation);
    record.current_status() == Status::Escalated && !later_escalation
}

/// A sink subscribed to `escalated` hears of every escalation, whatever its cause; one
/// subscribed to `deadlock` or `route-failed` only of those. A sink that speaks for some
/// people (`people`) hears of an escalation only when it is assigned to one of them.
fn subscribed(sink: &Sink, name: EventName, issue: u32, record: &Record, entry: usize) -> bool {
    let wants = |n| sink.wants(n, issue, &record.from, &record.to);
    let wanted = match name {
        EventName::Deadlock | EventName::RouteFailed => wants(name) || wants(EventName::Escalated),
        _ => wants(name),
    };
    if !wanted || !is_escalation(name) {
        return wanted;
    }
    if is_assign(record, entry) {
        // Only those the ladder added are called: everyone else heard of the escalation.
        let added = record
            .thread
            .get(entry)
            .and_then(|e| strings(e, crate::people::ADDED));
        return sink.reaches.is_some() && sink.reaches(added.as_deref());
    }
    sink.reaches(assigned_by(record, entry).as_deref())
}

/// Whether entry `i` of `record` is a ladder's `assign`.
fn is_assign(record: &Record, i: usize) -> bool {
    record
        .thread
        .get(i)
        .is_some_and(|e| e.kind == EntryKind::Assign)
}

fn strings(e: &crate::ledger::Entry, key: &str) -> Option<Vec<String>> {
    let items = e.extra.get(key)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

/// The `assigned` of entry `i` of `record` (docs/protocol.md §37), if it names any.
fn assigned_by(record: &Record, i: usize) -> Option<Vec<String>> {
    let items = record
        .thread
        .get(i)?
        .extra
        .get(crate::people::ASSIGNED)?
        .as_array()?;
    Some(
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

impl Outbox {
    /// Adds what `ledgers` owe `sinks` that the outbox does not hold yet, cancels ladder
    /// steps whose record moved on, and starts the clock of sinks seen for the first time at
    /// [`owed_since`]`(configured, now)` (`configured`: when the settings file that lists the
    /// sinks was last modified, if known). Returns how many deliveries it added.
    pub fn plan(
        &mut self,
        sinks: &[Sink],
        ledgers: &[&Ledger],
        now: i64,
        configured: Option<i64>,
    ) -> usize {
        for sink in sinks {
            self.since
                .entry(sink.name.clone())
                .or_insert_with(|| owed_since(configured, now));
        }
        // GitHub Mode's comments keep their own start (`github::plan`).
        self.since
            .retain(|name, _| name == GITHUB_SINK || sinks.iter().any(|s| &s.name == name));
        let mut added = 0;
        for ledger in ledgers {
            for record in &ledger.clarifications {
                added += self.plan_record(sinks, ledger.issue_number, record, now);
            }
        }
        added
    }

    fn plan_record(&mut self, sinks: &[Sink], issue: u32, record: &Record, now: i64) -> usize {
        let mut added = 0;
        let found = events_of(record);
        for sink in sinks {
            let since = self.since.get(&sink.name).copied().unwrap_or(now);
            for f in &found {
                // A decision is told to a sink that heard of the escalation (the follow-up
                // that closes the push), subscribed to `resolved` or not.
                let follow_up =
                    f.name == EventName::Resolved && self.told_of_escalation(sink, record, f.entry);
                if f.at < since || !(follow_up || subscribed(sink, f.name, issue, record, f.entry))
                {
                    continue;
                }
                // A follow-up is not a ladder step: it goes as soon as the decision is taken;
                // nor is a ladder's assignment, which comes once the ladder has waited.
                let wait = if follow_up || is_assign(record, f.entry) {
                    0
                } else {
                    sink.after_minutes
                };
                let due = f.at + i64::from(wait) * 60_000;
                added += usize::from(self.owe(
                    sink,
                    Owed {
                        event: f.event.clone(),
                        name: f.name,
                        issue,
                        record,
                        entry: f.entry,
                        due,
                    },
                ));
            }
            // Reminders: every `remind_every_minutes` while the record stays escalated.
            let every = i64::from(sink.remind_every_minutes) * 60_000;
            let escalation = found.iter().rev().find(|f| {
                status_of(f.name) == Some(Status::Escalated) && !is_assign(record, f.entry)
            });
            if let (true, true, Some(esc)) =
                (every > 0, record.status == Status::Escalated, escalation)
            {
                if esc.at >= since
                    && sink.wants(EventName::Reminder, issue, &record.from, &record.to)
                    && sink.reaches(assigned_by(record, esc.entry).as_deref())
                {
                    // Only the latest reminder that is due: a hub that was down for a day
                    // sends one reminder, not twenty-four.
                    let k = (now - esc.at) / every;
                    if k >= 1 {
                        let event = format!("{}_r{k}", esc.event);
                        let due = esc.at + k * every;
                        added += usize::from(self.owe(
                            sink,
                            Owed {
                                event,
                                name: EventName::Reminder,
                                issue,
                                record,
                                entry: esc.entry,
                                due,
                            },
                        ));
                    }
                }
            }
        }
        // A ladder step waits for its record to stay in the state; moved on → canceled.
        for d in self.deliveries.values_mut() {
            if d.record != record.id || d.state != State::Pending || d.due <= now {
                continue;
            }
            // A ladder's assignment is not a move: the other ladder steps still wait.
            let later = record
                .thread
                .iter()
                .skip(d.entry + 1)
                .any(|e| e.kind != EntryKind::Assign);
            let moved_on = match status_of(d.name) {
                Some(status) => record.status != status || later,
                None => record.status != Status::Escalated,
            };
            if moved_on {
                d.state = State::Canceled;
                d.done = Some(now);
                d.lease = None;
            }
        }
        added
    }

    /// Whether `sink` was delivered an escalation (or a reminder of one) of `record` from
    /// before entry `before`.
    fn told_of_escalation(&self, sink: &Sink, record: &Record, before: usize) -> bool {
        self.deliveries.values().any(|d| {
            d.record == record.id
                && d.sink == sink.name
                && d.state == State::Delivered
                && d.entry < before
                && is_escalation(d.name)
        })
    }

    /// Owes `sink` the delivery `owed` (the one private constructor of a delivery); `false`
    /// when it was owed already.
    fn owe(&mut self, sink: &Sink, owed: Owed<'_>) -> bool {
        let Owed {
            event,
            name,
            issue,
            record,
            entry,
            due,
        } = owed;
        let key = format!("{event}/{}", sink.name);
        if self.deliveries.contains_key(&key) {
            return false;
        }
        self.deliveries.insert(
            key,
            Delivery {
                event,
                sink: sink.name.clone(),
                name,
                issue,
                record: record.id.clone(),
                entry,
                state: State::Pending,
                due,
                next: due,
                attempts: 0,
                last_error: None,
                lease: None,
                done: None,
            },
        );
        true
    }

    /// The deliveries that may be tried now: pending, due, held by nobody (or by a holder
    /// whose lease ran out).
    pub fn due(&self, now: i64) -> Vec<String> {
        self.deliveries
            .iter()
            .filter(|(_, d)| {
                d.state == State::Pending
                    && d.next <= now
                    && d.lease.as_ref().is_none_or(|l| l.until <= now)
            })
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Takes `key` for `by` until `now + LEASE_MS`; false when it is not free to take. A
    /// GitHub comment delivery is not free while another deliverer holds another version of
    /// the same record's comment ([`Outbox::comment_held`]).
    pub fn lease(&mut self, key: &str, by: &str, now: i64) -> bool {
        let held = self
            .deliveries
            .get(key)
            .and_then(|d| self.comment_held(d, Some(by), now));
        if held.is_some() {
            return false;
        }
        match self.deliveries.get_mut(key) {
            Some(d)
                if d.state == State::Pending
                    && d.next <= now
                    && d.lease.as_ref().is_none_or(|l| l.until <= now) =>
            {
                d.lease = Some(Lease {
                    by: by.to_owned(),
                    until: now + LEASE_MS,
                });
                true
            }
            _ => false,
        }
    }

    /// For a GitHub comment delivery: until when another deliverer (not `by`; anyone for
    /// `None`) holds a delivery of another version of the same record's comment. A record
    /// has one comment, found by its marker or created: two deliverers doing that at once
    /// would both find none and both create one (issue 50), so the comment, not the version,
    /// is held by one deliverer at a time — whose send renders the record as it is then.
    pub fn comment_held(&self, d: &Delivery, by: Option<&str>, now: i64) -> Option<i64> {
        if d.sink != GITHUB_SINK {
            return None;
        }
        self.deliveries
            .values()
            .filter(|o| {
                o.sink == GITHUB_SINK
                    && o.record == d.record
                    && o.event != d.event
                    && o.state == State::Pending
            })
            .filter_map(|o| o.lease.as_ref())
            .filter(|l| l.until > now && by.is_none_or(|b| l.by != b))
            .map(|l| l.until)
            .max()
    }

    /// Extends the leases `by` holds on `keys` to `now + LEASE_MS` (a deliverer still
    /// sending); a lease another has taken over is left alone. How many were renewed.
    pub fn renew(&mut self, keys: &[String], by: &str, now: i64) -> usize {
        let mut renewed = 0;
        for key in keys {
            if let Some(lease) = self
                .deliveries
                .get_mut(key)
                .filter(|d| d.state == State::Pending)
                .and_then(|d| d.lease.as_mut())
                .filter(|l| l.by == by)
            {
                lease.until = lease.until.max(now + LEASE_MS);
                renewed += 1;
            }
        }
        renewed
    }

    /// Records a try of `key` by `by` that ended at `now`: delivered, or failed with `error`
    /// (then the next try follows the backoff, counted from this try — not from the start of
    /// the pass, which may have spent a timeout on every delivery before it — or the delivery
    /// is dead 24 h after it was due).
    pub fn settle(&mut self, key: &str, by: &str, result: Result<(), String>, now: i64) {
        let Some(d) = self.deliveries.get_mut(key) else {
            return;
        };
        if d.lease.as_ref().is_some_and(|l| l.by != by) {
            // Taken over after our lease ran out: the other deliverer's try counts.
            return;
        }
        d.lease = None;
        d.attempts += 1;
        match result {
            Ok(()) => {
                d.state = State::Delivered;
                d.done = Some(now);
                d.last_error = None;
            }
            Err(error) => {
                d.last_error = Some(error);
                let wait = BACKOFF_MS
                    .get(d.attempts.saturating_sub(1) as usize)
                    .copied()
                    .unwrap_or(BACKOFF_MS[5]);
                if now - d.due >= DEAD_AFTER_MS {
                    d.state = State::Dead;
                    d.done = Some(now);
                } else {
                    d.next = (now + wait).min(d.due + DEAD_AFTER_MS);
                }
            }
        }
    }

    /// Holds a pending delivery until `until` at least (GitHub's rate limit is spent until its
    /// reset time: a try before it would only fail again).
    pub fn defer(&mut self, key: &str, until: i64) {
        if let Some(d) = self.deliveries.get_mut(key) {
            if d.state == State::Pending && d.next < until {
                d.next = until;
            }
        }
    }

    /// Drops `key` held by `by` unsent: what it was about is no longer so (docs/notifications.md,
    /// "Nothing stale is pushed"). Canceled, kept like a finished delivery.
    pub fn cancel(&mut self, key: &str, by: &str, now: i64) {
        let Some(d) = self.deliveries.get_mut(key) else {
            return;
        };
        if d.state != State::Pending || d.lease.as_ref().is_some_and(|l| l.by != by) {
            return;
        }
        d.state = State::Canceled;
        d.done = Some(now);
        d.lease = None;
    }

    /// Puts a dead (or failing) delivery back in line for a try now.
    pub fn retry(&mut self, key: &str, now: i64) -> bool {
        match self.deliveries.get_mut(key) {
            Some(d) if matches!(d.state, State::Dead | State::Pending) => {
                d.state = State::Pending;
                d.next = now;
                d.due = now;
                d.done = None;
                d.lease = None;
                true
            }
            _ => false,
        }
    }

    /// Forgets finished deliveries older than a week.
    pub fn prune(&mut self, now: i64) {
        self.deliveries
            .retain(|_, d| d.done.is_none_or(|done| now - done < KEEP_MS));
    }

    /// The earliest time a pending delivery may be tried (a wake-up for the worker).
    pub fn next_due(&self) -> Option<i64> {
        self.deliveries
            .values()
            .filter(|d| d.state == State::Pending)
            .map(|d| {
                let own = d.lease.as_ref().map_or(d.next, |l| l.until.max(d.next));
                // Waits for whoever holds the record's comment (at most its lease).
                self.comment_held(d, None, i64::MIN)
                    .map_or(own, |held| own.max(held))
            })
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::config::parse_sinks;

    const T0: i64 = 1_795_341_600_000; // 2026-11-22T10:00:00Z
    const MIN: i64 = 60_000;

    fn ledger(entries: &[(&str, &str, i64)], status: &str) -> Ledger {
        let thread: Vec<String> = entries
            .iter()
            .map(|(kind, body, at)| {
                format!(
                    r#"{{"round":1,"from":"{}","type":"{kind}","body":"{body}","timestamp":"{}"}}"#,
                    if *kind == "escalation" {
                        "monitor"
                    } else {
                        "engineer"
                    },
                    crate::time::Timestamp::from_ms(*at)
                )
            })
            .collect();
        let text = format!(
            r#"{{"issueNumber":42,"clarifications":[{{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"{status}","round":1,"maxRounds":3,"slaMinutes":30,"thread":[{}]}}]}}"#,
            thread.join(",")
        );
        Ledger::parse("issue-42.json", text.as_bytes(), Some(42))
            .unwrap_or_else(|e| unreachable!("{e}"))
    }

    fn sinks(text: &str) -> Vec<Sink> {
        parse_sinks("config.toml", text.as_bytes()).unwrap_or_else(|e| unreachable!("{e}"))
    }

    const TEAM: &str = "[[notify]]\nname = \"team\"\nkind = \"command\"\ncommand = [\"true\"]\n";

    #[test]
    fn an_escalation_is_owed_once_and_retried_by_the_backoff() {
        let sinks = sinks(TEAM);
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[
                ("question", "Redis?", T0),
                ("escalation", "SLA expired", T0 + 30 * MIN),
            ],
            "escalated",
        );
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 31 * MIN, None), 1);
        assert_eq!(
            outbox.plan(&sinks, &[&l], T0 + 32 * MIN, None),
            0,
            "owed once"
        );
        let now = T0 + 32 * MIN;
        let due = outbox.due(now);
        assert_eq!(due, ["evt_CLR-42-001_1/team"]);
        assert!(outbox.lease(&due[0], "a", now));
        assert!(!outbox.lease(&due[0], "b", now), "one deliverer at a time");
        assert!(outbox.due(now).is_empty());
        outbox.settle(&due[0], "a", Err("500".into()), now);
        assert_eq!(outbox.deliveries[&due[0]].next, now + 10_000);
        assert!(outbox.due(now + 9_999).is_empty());
        assert!(outbox.lease(&due[0], "b", now + 10_000));
        outbox.settle(&due[0], "b", Ok(()), now + 10_000);
        assert_eq!(outbox.deliveries[&due[0]].state, State::Delivered);
        assert_eq!(outbox.deliveries[&due[0]].attempts, 2);
        outbox.prune(now + KEEP_MS + 10_000);
        assert!(outbox.deliveries.is_empty());
    }

    #[test]
    fn a_lease_that_ran_out_is_taken_over() {
        let sinks = sinks(TEAM);
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[("question", "q", T0), ("escalation", "x", T0)],
            "escalated",
        );
        outbox.plan(&sinks, &[&l], T0, None);
        let key = outbox.due(T0).remove(0);
        assert!(outbox.lease(&key, "dead-deliverer", T0));
        assert!(outbox.due(T0 + LEASE_MS - 1).is_empty());
        assert!(outbox.lease(&key, "next", T0 + LEASE_MS));
        outbox.settle(&key, "dead-deliverer", Ok(()), T0 + LEASE_MS + 1);
        assert_eq!(
            outbox.deliveries[&key].state,
            State::Pending,
            "not the holder"
        );
        outbox.settle(&key, "next", Ok(()), T0 + LEASE_MS + 2);
        assert_eq!(outbox.deliveries[&key].state, State::Delivered);
    }

    #[test]
    fn a_sender_renews_its_leases_and_a_dead_ones_run_out_within_seconds() {
        let sinks = sinks(TEAM);
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[("question", "q", T0), ("escalation", "x", T0)],
            "escalated",
        );
        outbox.plan(&sinks, &[&l], T0, None);
        let key = outbox.due(T0).remove(0);
        assert!(outbox.lease(&key, "sender", T0));
        // Still sending: each renewal pushes the lease on; another's renewal does nothing.
        for n in 1..=10 {
            let at = T0 + n * RENEW_MS;
            assert_eq!(outbox.renew(std::slice::from_ref(&key), "sender", at), 1);
            assert_eq!(outbox.renew(std::slice::from_ref(&key), "other", at), 0);
            assert!(outbox.due(at + LEASE_MS - 1).is_empty(), "held at +{n}");
        }
        // The sender died after its last renewal: the lease runs out LEASE_MS later.
        let last = T0 + 10 * RENEW_MS;
        assert_eq!(outbox.next_due(), Some(last + LEASE_MS));
        assert!(outbox.lease(&key, "next", last + LEASE_MS));
        // A failed try counts its backoff from the try, not from when the pass began.
        outbox.settle(
            &key,
            "next",
            Err("timed out".into()),
            last + LEASE_MS + 9_000,
        );
        assert_eq!(
            outbox.deliveries[&key].next,
            last + LEASE_MS + 9_000 + BACKOFF_MS[0]
        );
    }

    #[test]
    fn a_delivery_dies_a_day_after_it_was_due() {
        let sinks = sinks(TEAM);
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[("question", "q", T0), ("escalation", "x", T0)],
            "escalated",
        );
        outbox.plan(&sinks, &[&l], T0, None);
        let key = outbox.due(T0).remove(0);
        let mut now = T0;
        let mut tries = 0;
        while outbox.deliveries[&key].state == State::Pending {
            now = now.max(outbox.deliveries[&key].next);
            assert!(outbox.lease(&key, "a", now));
            outbox.settle(&key, "a", Err("down".into()), now);
            tries += 1;
        }
        assert_eq!(outbox.deliveries[&key].state, State::Dead);
        assert_eq!(now, T0 + DEAD_AFTER_MS);
        assert_eq!(
            tries, 10,
            "10 s, 1 min, 5 min, 30 min, 2 h, then 6 h until 24 h"
        );
        assert!(outbox.retry(&key, now + 1));
        assert_eq!(outbox.due(now + 1), [key]);
    }

    #[test]
    fn ladders_wait_and_cancel_and_old_history_is_not_replayed() {
        let sinks = sinks(
            "[[notify]]\nname = \"lead\"\nkind = \"command\"\ncommand = [\"true\"]\nafter_minutes = 60\n",
        );
        let mut outbox = Outbox::default();
        let old = ledger(
            &[
                ("question", "q", T0 - 3000 * MIN),
                ("escalation", "x", T0 - 2999 * MIN),
            ],
            "escalated",
        );
        assert_eq!(
            outbox.plan(&sinks, &[&old], T0, None),
            0,
            "before the sink existed, and past the retry horizon"
        );

        let l = ledger(
            &[("question", "q", T0), ("escalation", "x", T0 + MIN)],
            "escalated",
        );
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + MIN, None), 1);
        assert!(outbox.due(T0 + 60 * MIN).is_empty(), "before after_minutes");
        assert_eq!(outbox.due(T0 + 61 * MIN).len(), 1, "at after_minutes");

        // Resolved meanwhile: nothing is sent.
        let mut outbox2 = Outbox::default();
        outbox2.plan(&sinks, &[], T0, None);
        outbox2.plan(&sinks, &[&l], T0 + MIN, None);
        let resolved = ledger(
            &[
                ("question", "q", T0),
                ("escalation", "x", T0 + MIN),
                ("resolution", "Redis.", T0 + 10 * MIN),
            ],
            "resolved",
        );
        outbox2.plan(&sinks, &[&resolved], T0 + 10 * MIN, None);
        assert!(outbox2.due(T0 + 61 * MIN).is_empty());
        assert!(outbox2
            .deliveries
            .values()
            .any(|d| d.state == State::Canceled));
    }

    #[test]
    fn a_new_sink_is_owed_what_happened_since_it_was_configured() {
        let sinks = sinks(TEAM);
        let escalated_at = |at: i64| {
            ledger(
                &[("question", "q", at - MIN), ("escalation", "x", at)],
                "escalated",
            )
        };
        // Configured, then an escalation, then the first pass: delivered (issue 49: the
        // first pass used to start the sink's clock, after the escalation).
        let mut outbox = Outbox::default();
        let l = escalated_at(T0 + 5 * MIN);
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 10 * MIN, Some(T0)), 1);
        assert_eq!(outbox.since["team"], T0 + 10 * MIN - DEAD_AFTER_MS);
        assert_eq!(outbox.due(T0 + 10 * MIN), ["evt_CLR-42-001_1/team"]);
        // Without the file's time: the last 24 hours.
        let mut outbox = Outbox::default();
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 10 * MIN, None), 1);
        // Configured three days before the first pass: everything since then is owed, what
        // came before it is not.
        let day = 24 * 60 * MIN;
        let configured = T0 - 3 * day;
        let mut outbox = Outbox::default();
        let since_then = escalated_at(configured + day);
        let before = escalated_at(configured - MIN);
        assert_eq!(outbox.plan(&sinks, &[&since_then], T0, Some(configured)), 1);
        let mut outbox = Outbox::default();
        assert_eq!(outbox.plan(&sinks, &[&before], T0, Some(configured)), 0);
        // The clock starts once: a later edit of the file changes nothing.
        assert_eq!(outbox.plan(&sinks, &[&since_then], T0 + MIN, Some(T0)), 1);
        assert_eq!(outbox.since["team"], configured);
    }

    #[test]
    fn reminders_repeat_while_escalated_one_at_a_time() {
        let sinks = sinks(
            "[[notify]]\nname = \"lead\"\nkind = \"command\"\ncommand = [\"true\"]\nevents = [\"reminder\"]\nremind_every_minutes = 30\n",
        );
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[("question", "q", T0), ("escalation", "x", T0)],
            "escalated",
        );
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 29 * MIN, None), 0);
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 30 * MIN, None), 1);
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 45 * MIN, None), 0);
        assert_eq!(
            outbox.plan(&sinks, &[&l], T0 + 200 * MIN, None),
            1,
            "only the latest"
        );
        let events: Vec<_> = outbox
            .deliveries
            .values()
            .map(|d| d.event.clone())
            .collect();
        assert_eq!(events, ["evt_CLR-42-001_1_r1", "evt_CLR-42-001_1_r6"]);
    }

    #[test]
    fn a_decision_follows_a_delivered_escalation_once_and_a_stale_push_is_dropped() {
        let sinks = sinks(TEAM);
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let escalated = ledger(
            &[("question", "q", T0), ("escalation", "x", T0 + MIN)],
            "escalated",
        );
        outbox.plan(&sinks, &[&escalated], T0 + MIN, None);
        let key = outbox.due(T0 + MIN).remove(0);
        let resolved = ledger(
            &[
                ("question", "q", T0),
                ("escalation", "x", T0 + MIN),
                ("resolution", "Redis.", T0 + 2 * MIN),
            ],
            "resolved",
        );
        let d = outbox.deliveries[&key].clone();
        let record = |l: &Ledger| l.clarifications[0].clone();
        assert!(still_owed(&d, &record(&escalated)));
        assert!(!still_owed(&d, &record(&resolved)), "decided: not pushed");
        // Not delivered, so no follow-up: the sink never heard of it.
        assert_eq!(outbox.plan(&sinks, &[&resolved], T0 + 2 * MIN, None), 0);
        assert!(outbox.lease(&key, "a", T0 + MIN));
        outbox.cancel(&key, "a", T0 + 2 * MIN);
        assert_eq!(outbox.deliveries[&key].state, State::Canceled);
        assert_eq!(outbox.plan(&sinks, &[&resolved], T0 + 3 * MIN, None), 0);

        // Delivered: the decision follows, once, to that sink (not subscribed to `resolved`).
        let mut told = Outbox::default();
        told.plan(&sinks, &[], T0 - MIN, None);
        told.plan(&sinks, &[&escalated], T0 + MIN, None);
        let key = told.due(T0 + MIN).remove(0);
        assert!(told.lease(&key, "a", T0 + MIN));
        told.settle(&key, "a", Ok(()), T0 + MIN);
        assert_eq!(told.plan(&sinks, &[&resolved], T0 + 2 * MIN, None), 1);
        assert_eq!(
            told.plan(&sinks, &[&resolved], T0 + 3 * MIN, None),
            0,
            "once"
        );
        let follow_up = told
            .deliveries
            .values()
            .find(|d| d.name == EventName::Resolved)
            .unwrap_or_else(|| unreachable!());
        assert_eq!((follow_up.sink.as_str(), follow_up.entry), ("team", 2));
    }

    #[test]
    fn filters_and_event_kinds() {
        let sinks = sinks(
            "[[notify]]\nname = \"a\"\nkind = \"command\"\ncommand = [\"true\"]\nevents = [\"answered\", \"resolved\"]\nissues = [7]\n\n[[notify]]\nname = \"b\"\nkind = \"command\"\ncommand = [\"true\"]\nevents = [\"deadlock\"]\n",
        );
        let mut outbox = Outbox::default();
        outbox.plan(&sinks, &[], T0 - MIN, None);
        let l = ledger(
            &[
                ("question", "q", T0),
                ("escalation", "deadlock: engineer ↔ architect", T0 + MIN),
                ("answer", "a", T0 + 2 * MIN),
            ],
            "answered",
        );
        // Issue 42: sink a is for issue 7; sink b hears the deadlock only.
        assert_eq!(outbox.plan(&sinks, &[&l], T0 + 3 * MIN, None), 1);
        let d = outbox
            .deliveries
            .values()
            .next()
            .unwrap_or_else(|| unreachable!());
        assert_eq!((d.sink.as_str(), d.name), ("b", EventName::Deadlock));
    }
}
