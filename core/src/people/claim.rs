//! Claims and handoffs (docs/protocol.md §37): a person takes an escalated record ("alice is
//! on it"), hands it to another at the end of a shift, and a claim not acted on in time
//! lapses — the monitor writes that, and the record is assigned again. Each is an entry of
//! the record's thread, hashed and signed like every entry; the record stays escalated.
//!
//! The lapse instant is written on the claim itself (`until`), so the monitor's wake-up and
//! the stores' indexes of due times read it from the ledger alone, and a later edit of
//! `claim_timeout_minutes` changes later claims only — as `assigned` does for escalations.

use serde_json::{Map, Value};

use super::assign::{assigned, escalation_fields};
use crate::config::Config;
use crate::error::ClarifyError;
use crate::ledger::{EntryKind, Ledger, NewEntry, Record, Status};
use crate::names::{check_agent, check_text, ClarificationId, HUMAN, MONITOR};
use crate::ops::{check_now, Applied, Attribution};
use crate::signing::Signers;
use crate::time::{format_ms, parse_ms};

/// `[people] claim_timeout_minutes` when the settings say nothing.
pub const DEFAULT_CLAIM_TIMEOUT_MINUTES: u32 = 60;

/// The field of a claim or handoff that says when it lapses.
pub const UNTIL: &str = "until";

/// The field of a handoff that names who takes the record over.
pub const HANDED_TO: &str = "to";

/// Who holds an escalated record: the person of its latest claim or handoff since its
/// latest escalation or lapse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub person: String,
    /// When they took it (the claim's or handoff's time).
    pub since: i64,
    /// When the monitor ends the claim if nobody decided by then.
    pub until: Option<i64>,
}

fn text<'e>(extra: &'e Map<String, Value>, key: &str) -> Option<&'e str> {
    extra.get(key).and_then(Value::as_str)
}

/// The holder of `record`, if it is escalated and someone holds it.
pub fn holder(record: &Record) -> Option<Holder> {
    if record.current_status() != Status::Escalated {
        return None;
    }
    let e = record.thread.last()?;
    let person = match e.kind {
        EntryKind::Claim => text(&e.extra, "by")?,
        EntryKind::Handoff => text(&e.extra, HANDED_TO)?,
        _ => return None,
    };
    Some(Holder {
        person: person.to_owned(),
        since: e.timestamp.ms(),
        until: text(&e.extra, UNTIL).and_then(parse_ms),
    })
}

/// When the monitor ends `record`'s claim (its holder's `until`), if it is held.
pub fn lapse_due(record: &Record) -> Option<i64> {
    holder(record)?.until
}

/// Who may decide `record` besides its assignees: its holder, if any.
pub(crate) fn holder_name(record: &Record) -> Option<String> {
    holder(record).map(|h| h.person)
}

/// A person's operation on one record: which record, by whom, under which settings, when,
/// with which keys — what claim, handoff and approve all take.
#[derive(Clone, Copy, Debug)]
pub struct PersonCall<'a> {
    pub id: &'a str,
    pub by: &'a Attribution,
    pub config: &'a Config,
    pub now: i64,
    pub signers: &'a Signers,
}

impl PersonCall<'_> {
    /// The guards every person's operation on an escalated record runs first, in the order
    /// of §4: the input (`now`, the id, the person's name and door, the note), `NOT_FOUND`,
    /// then `INVALID_TRANSITION` for a record that is not escalated. A copy of the ledger to
    /// change and the record's index in it. `input` checks the operation's own input, after
    /// the person's.
    pub(crate) fn escalated(
        &self,
        ledger: &Ledger,
        op: &str,
        message: Option<&str>,
        input: impl FnOnce() -> Result<(), ClarifyError>,
    ) -> Result<(Ledger, usize), ClarifyError> {
        check_now(self.now)?;
        let parsed = ClarificationId::parse(self.id)?;
        check_agent(&self.by.by)?;
        check_agent(&self.by.via)?;
        input()?;
        if let Some(m) = message {
            check_text("message", m, self.config.max_body_chars as usize)?;
        }
        let (ledger, index) = crate::ops::located(ledger, &parsed, self.id)?;
        if let Some(record) = ledger.clarifications.get(index) {
            crate::ops::only_escalated(record, op)?;
        }
        Ok((ledger, index))
    }
}

/// What a person does to an escalated record.
#[derive(Clone, Copy, Debug)]
pub enum Taking<'a> {
    /// Takes it: `by` is on it.
    Claim,
    /// Hands it to `to`.
    Handoff { to: &'a str },
}

impl Taking<'_> {
    fn op(self) -> &'static str {
        match self {
            Taking::Claim => "claim",
            Taking::Handoff { .. } => "handoff",
        }
    }
}

/// `by` claims or hands over escalated record `id` of `ledger` at `now`. Guards in the order
/// of every operation (§4): input, `NOT_FOUND`, `INVALID_TRANSITION` (only an escalated
/// record), then who: a record assigned to people is claimed by one of them (or its holder),
/// and held by another it is theirs to hand over (`NOT_ALLOWED`). Claiming what one holds
/// already writes nothing (`idempotent`).
pub fn take(
    ledger: &Ledger,
    call: PersonCall<'_>,
    taking: Taking<'_>,
    message: Option<&str>,
) -> Result<Applied, ClarifyError> {
    let PersonCall {
        id,
        by,
        config,
        now,
        signers,
    } = call;
    let target = || match taking {
        Taking::Handoff { to } => check_handoff_target(config, &by.by, to),
        Taking::Claim => Ok(()),
    };
    let (mut ledger, index) = call.escalated(ledger, taking.op(), message, target)?;
    let Some(record) = ledger.clarifications.get_mut(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };
    let held = holder(record);
    if let (Taking::Claim, Some(h)) = (taking, &held) {
        if h.person == by.by {
            return Ok(unchanged(ledger, id));
        }
    }
    if let Some(h) = held.filter(|h| h.person != by.by) {
        return Err(ClarifyError::Claimed {
            id: id.to_owned(),
            holder: h.person,
            since: format_ms(h.since),
        });
    }
    super::check_decider(record, Some(&by.by), taking.op())?;
    let at = record.clamp_now(now);
    let minutes = i64::from(config.claim_timeout_minutes);
    let mut extra = by.fields();
    let (kind, body) = match taking {
        Taking::Claim => (EntryKind::Claim, format!("{} is on it", by.by)),
        Taking::Handoff { to } => {
            extra.insert(HANDED_TO.into(), to.into());
            (EntryKind::Handoff, format!("handed to {to}"))
        }
    };
    extra.insert(UNTIL.into(), format_ms(at + minutes * 60_000).into());
    let body = message.map_or(body, str::to_owned);
    let entry = NewEntry {
        kind,
        from: HUMAN,
        body: &body,
        value: None,
        extra,
    };
    record.append_entry(entry, at, signers);
    ledger.seal();
    Ok(Applied {
        ledger,
        id: id.to_owned(),
        events: Vec::new(),
        idempotent: false,
        reused: false,
        error: None,
    })
}

fn unchanged(ledger: Ledger, id: &str) -> Applied {
    Applied {
        ledger,
        id: id.to_owned(),
        events: Vec::new(),
        idempotent: true,
        reused: false,
        error: None,
    }
}

/// A handoff goes to someone else, and to a person of `people.toml` once people are defined.
fn check_handoff_target(config: &Config, by: &str, to: &str) -> Result<(), ClarifyError> {
    check_agent(to)?;
    if to == by {
        return Err(ClarifyError::input(format!(
            "'{to}' cannot hand a record to themselves: name who takes it over (--to)"
        )));
    }
    if let Some(why) = config
        .people
        .as_ref()
        .and_then(|p| super::token_refusal(&p.people, to))
    {
        return Err(ClarifyError::input(why));
    }
    Ok(())
}

/// The monitor's lapse phase: every held record whose `until` has come is assigned again
/// (`assigned` at `now`, rotations applied: the night's on-call person takes over from the
/// day's). Returns the ids it lapsed.
pub(crate) fn lapse(
    ledger: &mut Ledger,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Vec<String> {
    let workflow = ledger.workflow.clone();
    let mut lapsed = Vec::new();
    for record in &mut ledger.clarifications {
        let Some(h) = holder(record).filter(|h| h.until.is_some_and(|t| now >= t)) else {
            continue;
        };
        let minutes = h.until.map_or(0, |t| (t - h.since) / 60_000);
        let body = format!(
            "{}'s claim lapsed: not decided within {minutes} minutes",
            h.person
        );
        let mut extra = escalation_fields(config, workflow.as_deref(), record, now);
        if extra.is_empty() {
            // Without people now, the record keeps whom it was assigned to.
            if let Some(names) = assigned(record) {
                extra.insert(super::ASSIGNED.into(), names.into());
            }
        }
        let entry = NewEntry {
            kind: EntryKind::Lapse,
            from: MONITOR,
            body: &body,
            value: None,
            extra,
        };
        record.append_entry(entry, now, signers);
        lapsed.push(record.id.clone());
    }
    lapsed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Statuses;
    use crate::monitor::monitor_ledger;
    use crate::ops::{act, act_by, request, Action};
    use crate::people::{People, PeopleSettings};
    use crate::testkit::{plain, MIN, T0};
    use crate::workflow::Workflows;

    // Alice is on call for the first day from T0, bob the next.
    fn team() -> String {
        format!(
            "[people.alice]\n[people.bob]\n[people.carol]\n[[rotations]]\nrole = \"lead\"\npeople = [\"alice\", \"bob\"]\nevery = \"1d\"\nstart = \"{}\"\n",
            format_ms(T0)
        )
    }

    fn config() -> Config {
        let workflows = Workflows::defaults();
        let team = People::parse("people.toml", &team(), &[]).unwrap();
        Config {
            people: PeopleSettings::shared(team, &workflows),
            default_deciders: Some(vec!["role:lead".into()]),
            ..Config::default()
        }
    }

    fn escalated(config: &Config, at: i64) -> Ledger {
        let req = plain("engineer", "architect", "Cache", "Redis?");
        let ledger = request(None, &req, config, &Workflows::defaults(), at)
            .unwrap()
            .ledger;
        let escalate = Action::Escalate {
            from: None,
            message: None,
        };
        act(&ledger, "CLR-42-001", &escalate, config, at + MIN)
            .unwrap()
            .ledger
    }

    fn person(name: &str) -> Attribution {
        Attribution {
            by: name.into(),
            via: "web".into(),
            reference: None,
        }
    }

    fn resolve(config: &Config, ledger: &Ledger, who: &str, at: i64) -> Result<Ledger, String> {
        let action = Action::Resolve {
            from: None,
            message: Some("Redis.".into()),
        };
        let by = person(who);
        let s = Signers::default();
        act_by(ledger, "CLR-42-001", &action, config, at, &s, Some(&by))
            .map(|a| a.ledger)
            .map_err(|e| e.code().to_owned())
    }

    #[test]
    fn whom_a_record_is_handed_to_decides_it_and_a_lapse_assigns_the_next_shift() {
        let config = config();
        let s = Signers::default();
        let hours = 60 * MIN;
        // Escalated late on alice's day: hers.
        let ledger = escalated(&config, T0 + 20 * hours);
        assert_eq!(
            crate::people::assigned(&ledger.clarifications[0]),
            Some(vec!["alice".to_owned()])
        );
        assert_eq!(
            resolve(&config, &ledger, "carol", T0 + 21 * hours),
            Err("NOT_ALLOWED".into())
        );
        let at = T0 + 21 * hours;
        let alice = person("alice");
        let handed = take(
            &ledger,
            PersonCall {
                id: "CLR-42-001",
                by: &alice,
                config: &config,
                now: at,
                signers: &s,
            },
            Taking::Handoff { to: "carol" },
            None,
        )
        .unwrap()
        .ledger;
        let record = &handed.clarifications[0];
        assert_eq!(holder(record).map(|h| h.person), Some("carol".to_owned()));
        assert_eq!(lapse_due(record), Some(at + 60 * MIN));
        assert_eq!(crate::monitor::due_at(record), Some(at + 60 * MIN));
        assert!(crate::monitor::may_act(&handed));
        assert!(resolve(&config, &handed, "carol", at + MIN).is_ok());

        // Not acted on: at until the monitor ends it — after midnight, so bob's shift.
        let mut late = config.clone();
        late.claim_timeout_minutes = 240;
        let handed = take(
            &ledger,
            PersonCall {
                id: "CLR-42-001",
                by: &alice,
                config: &late,
                now: at,
                signers: &s,
            },
            Taking::Handoff { to: "carol" },
            None,
        )
        .unwrap()
        .ledger;
        let until = at + 240 * MIN;
        let before = monitor_ledger(handed.clone(), &Statuses::default(), &late, until - 1);
        assert!(!before.changed);
        let out = monitor_ledger(handed, &Statuses::default(), &late, until);
        assert_eq!(out.report.lapsed, vec!["CLR-42-001".to_owned()]);
        let record = &out.ledger.clarifications[0];
        let last = record.thread.last().unwrap();
        assert_eq!(last.kind, EntryKind::Lapse);
        assert_eq!(
            crate::people::assigned(record),
            Some(vec!["bob".to_owned()])
        );
        assert_eq!(holder(record), None);
        assert!(!crate::monitor::may_act(&out.ledger));
        assert_eq!(
            resolve(&late, &out.ledger, "carol", until + MIN),
            Err("NOT_ALLOWED".into())
        );
        assert!(resolve(&late, &out.ledger, "bob", until + MIN).is_ok());
        let found = crate::verify::check_ledger("issue-42.json", &out.ledger);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn without_people_anyone_claims_and_the_record_stays_anyones() {
        let config = Config::default();
        let ledger = escalated(&config, T0);
        let s = Signers::default();
        let claimed = take(
            &ledger,
            PersonCall {
                id: "CLR-42-001",
                by: &person("dana"),
                config: &config,
                now: T0 + 2 * MIN,
                signers: &s,
            },
            Taking::Claim,
            None,
        )
        .unwrap()
        .ledger;
        let last = claimed.clarifications[0].thread.last().unwrap();
        assert_eq!(last.body, "dana is on it");
        assert!(last.extra.get(crate::people::ASSIGNED).is_none());
        // A claim is a signal to others, not a lock on deciding: nobody was assigned.
        assert!(resolve(&config, &claimed, "erin", T0 + 3 * MIN).is_ok());
        let out = monitor_ledger(
            claimed,
            &Statuses::default(),
            &config,
            T0 + 2 * MIN + 60 * MIN,
        );
        let last = out.ledger.clarifications[0].thread.last().unwrap();
        assert_eq!(last.kind, EntryKind::Lapse);
        assert!(last.extra.get(crate::people::ASSIGNED).is_none());
    }
}
