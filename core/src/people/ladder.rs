//! Ladders by person (docs/protocol.md §37): a notification sink's `after_minutes` step may
//! name who is next (`then = "role:cto"`). An escalation nobody has claimed by then is
//! assigned to them too — an `assign` entry by the monitor naming the people added — so the
//! next person may decide it, and a sink that speaks for them hears of it.

use serde_json::Value;

use super::assign::assigned;
use crate::config::Config;
use crate::error::ClarifyError;
use crate::ledger::{EntryKind, Ledger, NewEntry, Record, Status};
use crate::names::MONITOR;
use crate::notify::Sink;
use crate::ops::{check_now, Applied};
use crate::signing::Signers;

/// The field of an `assign` entry naming the people it added.
pub const ADDED: &str = "added";
/// The field of an `assign` entry naming the ladder (sink) that added them.
pub const LADDER: &str = "ladder";

/// One ladder step that has come for a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    pub issue: u32,
    pub id: String,
    pub sink: String,
    pub then: Vec<String>,
    pub after_minutes: u32,
}

/// The latest escalation entry of `record` and its time, if the record is escalated.
fn escalation(record: &Record) -> Option<(usize, i64)> {
    if record.current_status() != Status::Escalated {
        return None;
    }
    let i = record
        .thread
        .iter()
        .rposition(|e| e.kind == EntryKind::Escalation)?;
    Some((i, record.thread.get(i)?.timestamp.ms()))
}

/// Whether `sink`'s ladder already assigned `record` since its latest escalation.
fn laddered(record: &Record, since: usize, sink: &str) -> bool {
    record.thread.iter().skip(since).any(|e| {
        e.kind == EntryKind::Assign && e.extra.get(LADDER).and_then(Value::as_str) == Some(sink)
    })
}

/// Every ladder step due at `now`: a sink with `then` subscribed to the record's escalations,
/// `after_minutes` past the latest one, on a record still escalated, held by nobody and not
/// assigned by that ladder yet.
pub fn due(sinks: &[Sink], ledgers: &[&Ledger], now: i64) -> Vec<Due> {
    candidates(sinks, ledgers)
        .into_iter()
        .filter(|(at, _)| now >= *at)
        .map(|(_, d)| d)
        .collect()
}

/// When the next ladder step comes after `now` (a wake-up time for whoever runs the passes).
pub fn next_step(sinks: &[Sink], ledgers: &[&Ledger], now: i64) -> Option<i64> {
    candidates(sinks, ledgers)
        .into_iter()
        .map(|(at, _)| at)
        .filter(|at| *at > now)
        .min()
}

/// Every ladder step still to apply, with the instant it comes.
fn candidates(sinks: &[Sink], ledgers: &[&Ledger]) -> Vec<(i64, Due)> {
    let mut out = Vec::new();
    for sink in sinks.iter().filter(|s| !s.then.is_empty()) {
        for ledger in ledgers {
            for r in &ledger.clarifications {
                let Some((i, at)) = escalation(r) else {
                    continue;
                };
                let wants = sink.wants(
                    crate::notify::EventName::Escalated,
                    ledger.issue_number,
                    &r.from,
                    &r.to,
                );
                let at_step = at.saturating_add(i64::from(sink.after_minutes) * 60_000);
                if wants
                    && super::holder(r).is_none()
                    && assigned(r).is_some()
                    && !laddered(r, i, &sink.name)
                {
                    let due = Due {
                        issue: ledger.issue_number,
                        id: r.id.clone(),
                        sink: sink.name.clone(),
                        then: sink.then.clone(),
                        after_minutes: sink.after_minutes,
                    };
                    out.push((at_step, due));
                }
            }
        }
    }
    out
}

/// Applies ladder step `due` to `ledger` at `now`: an `assign` entry adding `then`'s people
/// (rotations applied at `now`) to the record's assignees. Writes nothing (`idempotent`) when
/// the step no longer applies — decided, claimed, assigned by this ladder already — or adds
/// nobody new.
pub fn assign_more(
    ledger: &Ledger,
    due: &Due,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    check_now(now)?;
    let mut ledger = ledger.clone();
    let unchanged = |ledger: Ledger| Applied {
        ledger,
        id: due.id.clone(),
        events: Vec::new(),
        idempotent: true,
        reused: false,
        error: None,
    };
    let Some(settings) = config.people.as_ref() else {
        return Ok(unchanged(ledger));
    };
    let Some(record) = ledger.clarifications.iter_mut().find(|r| r.id == due.id) else {
        return Err(ClarifyError::NotFound { id: due.id.clone() });
    };
    let Some((i, _)) = escalation(record) else {
        return Ok(unchanged(ledger));
    };
    let before = assigned(record).unwrap_or_default();
    if super::holder(record).is_some() || laddered(record, i, &due.sink) {
        return Ok(unchanged(ledger));
    }
    let added: Vec<String> = settings
        .people
        .expand(&due.then, now)
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    if added.is_empty() {
        return Ok(unchanged(ledger));
    }
    let mut all = before;
    all.extend(added.iter().cloned());
    let body = format!(
        "unclaimed after {} minutes: {} assigned too ({} is next on the ladder of {})",
        due.after_minutes,
        added.join(", "),
        due.then.join(", "),
        due.sink
    );
    let mut extra = serde_json::Map::new();
    extra.insert(super::ASSIGNED.into(), all.into());
    extra.insert(ADDED.into(), added.into());
    extra.insert(LADDER.into(), due.sink.clone().into());
    let entry = NewEntry {
        kind: EntryKind::Assign,
        from: MONITOR,
        body: &body,
        value: None,
        extra,
    };
    record.append_entry(entry, now, signers);
    ledger.seal();
    Ok(Applied {
        ledger,
        id: due.id.clone(),
        events: Vec::new(),
        idempotent: false,
        reused: false,
        error: None,
    })
}
