//! Quorum (docs/protocol.md §37): a step may ask that several of a record's deciders agree
//! before its escalation is decided (`quorum = 2`, `quorum_block` for a `BLOCK` record). The
//! escalation carries the number it needs (`quorum`, hashed and signed with `assigned`); each
//! person's decision is then an `approval` entry, and the approval that brings a decision to
//! that many distinct people also writes the `resolution`, naming them (`approvedBy`).
//!
//! Approvals agree when they carry the same typed value (choice, confirm, multi_choice) or,
//! for a text question, the same text — "approve as written" (`seconds`: the person whose
//! decision it takes up) counts for that person's text. A person's latest approval is theirs;
//! a different one from another decider is a dissent, shown beside the others.

use serde_json::{Map, Value};

use crate::events::Event;
use crate::ledger::{EntryKind, NewEntry, Record};
use crate::names::HUMAN;
use crate::signing::Signers;

/// The field of an escalation (or lapse) naming how many must agree.
pub const QUORUM: &str = "quorum";
/// The field of an approval that takes up another person's decision as written.
pub const SECONDS: &str = "seconds";
/// The field of a quorum's resolution naming who agreed.
pub const APPROVED_BY: &str = "approvedBy";

/// How many distinct deciders must agree on `record`'s decision: the `quorum` of its latest
/// escalation or lapse; `None` for one (no quorum, or a record escalated without people).
pub fn quorum_of(record: &Record) -> Option<u32> {
    let e = record
        .thread
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EntryKind::Escalation | EntryKind::Lapse))?;
    let q = e.extra.get(QUORUM)?.as_u64()?;
    u32::try_from(q).ok().filter(|q| *q > 1)
}

/// One decision proposed on a record and who approves it, in the order first proposed.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    pub value: Option<Value>,
    pub text: String,
    /// Whoever approves it now (their latest approval), in the order they did.
    pub by: Vec<String>,
}

/// The approvals of `record` since its latest escalation, grouped by decision.
pub fn proposals(record: &Record) -> Vec<Proposal> {
    let start = record
        .thread
        .iter()
        .rposition(|e| e.kind == EntryKind::Escalation)
        .map_or(0, |i| i + 1);
    // Each person's latest approval, as (person, value, text) in the order they were given.
    let mut latest: Vec<(String, Option<Value>, String)> = Vec::new();
    for e in record.thread.iter().skip(start) {
        if e.kind != EntryKind::Approval {
            continue;
        }
        let Some(person) = e.extra.get("by").and_then(Value::as_str) else {
            continue;
        };
        let seconded = e.extra.get(SECONDS).and_then(Value::as_str);
        let (value, text) = match seconded.and_then(|s| latest.iter().find(|(p, ..)| p == s)) {
            Some((_, v, t)) => (v.clone(), t.clone()),
            None => (e.value.clone(), e.body.clone()),
        };
        latest.retain(|(p, ..)| p != person);
        latest.push((person.to_owned(), value, text));
    }
    let mut out: Vec<Proposal> = Vec::new();
    for (person, value, text) in latest {
        let same = |p: &&mut Proposal| match (&p.value, &value) {
            (Some(a), Some(b)) => a == b,
            (None, None) => p.text == text,
            _ => false,
        };
        match out.iter_mut().find(|p| same(p)) {
            Some(p) => p.by.push(person),
            None => out.push(Proposal {
                value,
                text,
                by: vec![person],
            }),
        }
    }
    out
}

/// The approval state in words: "1 of 2 approved (alice); waiting on bob or carol".
pub fn summary(record: &Record) -> Option<String> {
    let q = quorum_of(record)?;
    let proposals = proposals(record);
    // The most approved, the first proposed among equals.
    let best = proposals.iter().rev().max_by_key(|p| p.by.len());
    let have = best.map_or(0, |p| p.by.len());
    let agreed = best.map_or(String::new(), |p| format!(" ({})", p.by.join(", ")));
    let voted: Vec<&String> = proposals.iter().flat_map(|p| &p.by).collect();
    let waiting: Vec<String> = super::assigned(record)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| !voted.contains(&n))
        .collect();
    let waiting = if waiting.is_empty() {
        String::new()
    } else {
        format!("; waiting on {}", waiting.join(" or "))
    };
    let dissent = proposals.len().saturating_sub(1);
    let dissent = match dissent {
        0 => String::new(),
        n => format!("; {n} other decision{}", if n == 1 { "" } else { "s" }),
    };
    Some(format!("{have} of {q} approved{agreed}{dissent}{waiting}"))
}

/// A person's decision as an approval: what the answer kind's rule read (`body`, `value`),
/// the person's entry fields (`by`, `via`), and whose decision it takes up as written.
pub(crate) struct Approval<'a> {
    pub body: &'a str,
    pub value: Option<Value>,
    pub person: Map<String, Value>,
    pub seconds: Option<&'a str>,
}

/// A person's decision on record `record` (of issue `issue`) that needs `q` of its deciders:
/// their `approval` entry, then — when it brings its decision to `q` distinct people — the
/// `resolution`, by them, naming who agreed. The resolution's events, none before the quorum.
pub(crate) fn approve(
    record: &mut Record,
    issue: u32,
    approval: Approval<'_>,
    q: u32,
    now: i64,
    signers: &Signers,
) -> Vec<Event> {
    let Approval {
        body,
        value,
        person,
        seconds,
    } = approval;
    let mut extra = person.clone();
    if let Some(s) = seconds {
        extra.insert(SECONDS.into(), s.into());
    }
    let entry = NewEntry {
        kind: EntryKind::Approval,
        from: HUMAN,
        body,
        value,
        extra,
    };
    let at = record.append_entry(entry, now, signers);
    let by = person.get("by").and_then(Value::as_str).unwrap_or_default();
    let Some(agreed) = proposals(record)
        .into_iter()
        .find(|p| p.by.iter().any(|b| b == by))
        .filter(|p| p.by.len() >= q as usize)
    else {
        return Vec::new();
    };
    let mut extra = person;
    extra.insert(
        APPROVED_BY.into(),
        Value::Array(agreed.by.iter().cloned().map(Value::String).collect()),
    );
    let entry = NewEntry {
        kind: EntryKind::Resolution,
        from: HUMAN,
        body: &agreed.text,
        value: agreed.value,
        extra,
    };
    let at = record.append_entry(entry, at, signers);
    Event::for_entry(
        issue,
        record,
        EntryKind::Resolution,
        HUMAN,
        &agreed.text,
        at,
    )
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::ops::{act, act_by, request, Action, Attribution};
    use crate::people::{People, PeopleSettings};
    use crate::testkit::{plain, MIN, T0};
    use crate::workflow::Workflows;

    const FEATURE: &str = "[[steps]]\nid = \"architecture\"\nagent = \"architect\"\ndeciders = [\"role:lead\"]\nquorum = 3\n[[steps]]\nid = \"implementation\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n";

    fn config() -> Config {
        let mut workflows = Workflows::new();
        workflows.insert_text("feature", FEATURE);
        let team = "[people.alice]\nroles = [\"lead\"]\n[people.bob]\nroles = [\"lead\"]\n";
        let team = People::parse("people.toml", team, &[]).unwrap();
        Config {
            people: PeopleSettings::shared(team, &workflows),
            ..Config::default()
        }
    }

    fn resolve(config: &Config, ledger: &crate::Ledger, who: &str, at: i64) -> crate::Ledger {
        let action = Action::Resolve {
            from: None,
            message: Some("Redis.".into()),
        };
        let by = Attribution {
            by: who.into(),
            via: "web".into(),
            reference: None,
        };
        act_by(
            ledger,
            "CLR-42-001",
            &action,
            config,
            at,
            &Signers::default(),
            Some(&by),
        )
        .unwrap()
        .ledger
    }

    #[test]
    fn a_persons_resolution_is_an_approval_until_enough_agree() {
        let config = config();
        let mut workflows = Workflows::new();
        workflows.insert_text("feature", FEATURE);
        let req = plain("engineer", "architect", "Cache", "Redis?");
        let ledger = request(None, &req, &config, &workflows, T0).unwrap().ledger;
        let escalate = Action::Escalate {
            from: None,
            message: None,
        };
        let ledger = act(&ledger, "CLR-42-001", &escalate, &config, T0 + MIN)
            .unwrap()
            .ledger;
        // Three asked, two assigned: the quorum is never more than can agree.
        let record = &ledger.clarifications[0];
        assert_eq!(record.thread[1].extra[QUORUM], serde_json::json!(2));
        assert_eq!(quorum_of(record), Some(2));
        let once = resolve(&config, &ledger, "alice", T0 + 2 * MIN);
        let record = &once.clarifications[0];
        assert_eq!(record.current_status(), crate::Status::Escalated);
        assert_eq!(record.thread.last().unwrap().kind, EntryKind::Approval);
        // The same person again changes nothing but their own approval.
        let again = resolve(&config, &once, "alice", T0 + 3 * MIN);
        assert_eq!(
            again.clarifications[0].current_status(),
            crate::Status::Escalated
        );
        let twice = resolve(&config, &again, "bob", T0 + 4 * MIN);
        let record = &twice.clarifications[0];
        assert_eq!(record.current_status(), crate::Status::Resolved);
        let last = record.thread.last().unwrap();
        assert_eq!(last.kind, EntryKind::Resolution);
        assert_eq!(last.extra[APPROVED_BY], serde_json::json!(["alice", "bob"]));
        let found = crate::verify::check_ledger("issue-42.json", &twice);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }
}
