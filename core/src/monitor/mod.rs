//! The monitor (docs/protocol.md §7): pure (ledgers, statuses, config, now) → new ledgers, events, report.
//!
//! Phases run in order — stale, stuck, deadlock, abandoned — each on the state the previous
//! one left, so no record is escalated twice and a second run at the same `now` finds nothing.
//! Every rule looks at one issue at a time (deadlocks are per issue), so a ledger can be
//! monitored on its own: the CLI re-runs [`monitor_ledger`] under the ledger's lock on a fresh
//! read before writing, never writing from a stale copy.

mod abandoned;
mod deadlock;
pub mod follow;
mod graph;
mod report;
mod similarity;
mod stale;
mod stuck;

pub use deadlock::{find_cycle_breaks, CycleBreak, WaitEdge};
pub use graph::{wait_for_graph, WaitCycle, WaitForEdge, WaitForGraph};
pub use report::{DeadlockReport, EscalatedReport, Report, ReportError};
pub use similarity::{jaccard, tokens};
pub use stale::{due_at, ESCALATED_WITH};

use crate::agents::Statuses;
use crate::config::Config;
use crate::events::Event;
use crate::ledger::{EntryKind, Ledger};
use crate::names::MONITOR;
use crate::signing::Signers;

/// The next wake-up (the `poll_timeout` of sans-IO libraries): the earliest instant, not
/// before `now`, at which the passing of time alone makes the monitor act on one of
/// `ledgers` — a pending record's SLA running out, a record found stale (`now` then), a
/// claim's `until` (docs/protocol.md §37).
/// `None`: time alone will never make it act; only a change (a write, a status) can, and
/// whoever watches the files runs the monitor on changes anyway.
pub fn next_wakeup<'a>(ledgers: impl IntoIterator<Item = &'a Ledger>, now: i64) -> Option<i64> {
    ledgers
        .into_iter()
        .flat_map(|l| l.clarifications.iter())
        .filter_map(due_at)
        .map(|t| t.max(now))
        .min()
}

/// Whether the monitor can act on `ledger` at some `now`, under some statuses, before anyone
/// writes to it: it has an active record (pending, stale or answered) — docs/protocol.md §19's "can need
/// action" (and a held escalated record, whose claim lapses). Every phase looks only at active records: stale at pending and stale ones (legacy
/// round-0 records included), stuck at active ones, deadlock at blocking pending and stale ones,
/// abandonment at active ones. A ledger without one is left exactly as it is by every pass, so
/// a store's index of the ledgers for which this holds lets the monitor that follows a command
/// skip finished work.
pub fn may_act(ledger: &Ledger) -> bool {
    ledger.clarifications.iter().any(watched)
}

/// Whether the monitor can act on `record` by itself: it is active, or an escalated record
/// someone holds, whose claim lapses (docs/protocol.md §37).
pub fn watched(record: &crate::ledger::Record) -> bool {
    record.current_status().is_active() || crate::people::lapse_due(record).is_some()
}

/// What one ledger's monitor pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerOutcome {
    pub ledger: Ledger,
    pub changed: bool,
    pub events: Vec<Event>,
    pub report: Report,
}

/// What a monitor pass over a workspace did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Every ledger after the pass, ascending by issue.
    pub ledgers: Vec<Ledger>,
    /// Issues whose ledger changed (to be written).
    pub changed: Vec<u32>,
    pub events: Vec<Event>,
    pub report: Report,
}

/// The working state of one ledger's pass.
pub(crate) struct Pass<'a> {
    pub ledger: &'a mut Ledger,
    pub statuses: &'a Statuses,
    pub config: &'a Config,
    pub now: i64,
    /// The monitor's entries are signed with the hub key when it is held.
    pub signers: &'a Signers,
    pub events: Vec<Event>,
    pub report: Report,
    pub changed: bool,
}

impl Pass<'_> {
    /// Appends a monitor entry to record `index`.
    pub(crate) fn append(&mut self, index: usize, kind: EntryKind, body: &str) {
        let issue = self.ledger.issue_number;
        let Some(record) = self.ledger.clarifications.get_mut(index) else {
            return;
        };
        let extra = match kind {
            EntryKind::Escalation => {
                let workflow = self.ledger.workflow.as_deref();
                crate::people::escalation_fields(self.config, workflow, record, self.now)
            }
            _ => serde_json::Map::new(),
        };
        let entry = crate::ledger::NewEntry {
            kind,
            from: MONITOR,
            body,
            value: None,
            extra,
        };
        let at = record.append_entry(entry, self.now, self.signers);
        if let Some(event) = Event::for_entry(issue, record, kind, MONITOR, body, at) {
            self.events.push(event);
        }
        self.changed = true;
    }

    /// Escalates record `index` and lists it in `escalated`.
    pub(crate) fn escalate(&mut self, index: usize, reason: &str) {
        self.append(index, EntryKind::Escalation, reason);
        if let Some(r) = self.ledger.clarifications.get(index) {
            self.report.escalated.push(EscalatedReport {
                id: r.id.clone(),
                reason: reason.to_owned(),
            });
        }
    }

    pub(crate) fn id(&self, index: usize) -> String {
        self.ledger
            .clarifications
            .get(index)
            .map(|r| r.id.clone())
            .unwrap_or_default()
    }
}

/// Runs every phase over one ledger, unsigned: [`monitor_ledger_with`] with no keys.
pub fn monitor_ledger(
    ledger: Ledger,
    statuses: &Statuses,
    config: &Config,
    now: i64,
) -> LedgerOutcome {
    monitor_ledger_with(ledger, statuses, config, now, &Signers::default())
}

/// Runs every phase over one ledger; its entries are signed with the hub key `agent-x` when
/// `signers` holds it.
pub fn monitor_ledger_with(
    mut ledger: Ledger,
    statuses: &Statuses,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> LedgerOutcome {
    let (changed, events, report) = run_phases(&mut ledger, statuses, config, now, signers);
    LedgerOutcome {
        ledger,
        changed,
        events,
        report,
    }
}

/// The phases, in order, on a ledger in place (a workspace pass moves no ledger around).
fn run_phases(
    ledger: &mut Ledger,
    statuses: &Statuses,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> (bool, Vec<Event>, Report) {
    let mut pass = Pass {
        ledger,
        statuses,
        config,
        now,
        signers,
        events: Vec::new(),
        report: Report::default(),
        changed: false,
    };
    stale::run(&mut pass);
    stuck::run(&mut pass);
    deadlock::run(&mut pass);
    abandoned::run(&mut pass);
    let lapsed = crate::people::lapse(pass.ledger, pass.config, pass.now, pass.signers);
    if !lapsed.is_empty() {
        pass.changed = true;
        pass.report.lapsed.extend(lapsed);
    }
    if pass.changed {
        pass.ledger.seal();
        pass.report.sort();
    }
    (pass.changed, pass.events, pass.report)
}

/// Runs the monitor over a workspace, unsigned: [`monitor_with`] with no keys.
pub fn monitor(
    ledgers: Vec<Ledger>,
    errors: Vec<ReportError>,
    statuses: &Statuses,
    config: &Config,
    now: i64,
) -> Outcome {
    monitor_with(ledgers, errors, statuses, config, now, &Signers::default())
}

/// Runs the monitor over a workspace. `errors` are ledgers that could not be read, reported
/// and skipped. Entries are signed with the hub key when `signers` holds it.
pub fn monitor_with(
    ledgers: Vec<Ledger>,
    errors: Vec<ReportError>,
    statuses: &Statuses,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Outcome {
    let mut ledgers = ledgers;
    crate::stable_sort::sort_by_key(&mut ledgers, |l| l.issue_number);
    let (mut changed_issues, mut events, mut report) = (Vec::new(), Vec::new(), Report::default());
    for ledger in &mut ledgers {
        let (changed, found, one) = run_phases(ledger, statuses, config, now, signers);
        if changed {
            changed_issues.push(ledger.issue_number);
            events.extend(found);
            report.merge(one);
        }
    }
    let mut out = Outcome {
        ledgers,
        changed: changed_issues,
        events,
        report,
    };
    out.report.errors = errors;
    crate::stable_sort::sort_by(&mut out.report.errors, |a, b| a.file.cmp(&b.file));
    out
}

#[cfg(test)]
mod tests;
