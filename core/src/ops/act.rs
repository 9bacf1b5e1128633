//! Operations on an existing record: answer, follow-up, resolve, abandon, escalate.

use super::transition::{allowed_ops, who_may, Op};
use super::{check_now, Applied};
use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::{EntryKind, Ledger, Status};
use crate::names::{check_agent, check_text, ClarificationId, AGENT_X, HUMAN};
use crate::signing::Signers;

/// An operation on an existing record, with its actor and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Answer {
        from: String,
        body: String,
    },
    FollowUp {
        from: String,
        question: String,
    },
    /// `from` defaults to `human` on an escalated record, else the requester.
    Resolve {
        from: Option<String>,
        message: Option<String>,
    },
    /// `from` defaults to `human`.
    Escalate {
        from: Option<String>,
        message: Option<String>,
    },
    /// `from` defaults to the requester.
    Abandon {
        from: Option<String>,
        message: Option<String>,
    },
    /// An answer carrying a typed `value` (docs/protocol.md §22); without `body` the body is rendered
    /// from the value (`yes`/`no`, the labels joined by `, `).
    AnswerValue {
        from: String,
        body: Option<String>,
        value: Value,
    },
    /// A resolution carrying a typed `value` (docs/protocol.md §22): the decision; `from` as `Resolve`'s.
    ResolveValue {
        from: Option<String>,
        message: Option<String>,
        value: Value,
    },
}

impl Action {
    fn op(&self) -> Op {
        match self {
            Action::Answer { .. } | Action::AnswerValue { .. } => Op::Answer,
            Action::FollowUp { .. } => Op::FollowUp,
            Action::Resolve { .. } | Action::ResolveValue { .. } => Op::Resolve,
            Action::Escalate { .. } => Op::Escalate,
            Action::Abandon { .. } => Op::Abandon,
        }
    }

    fn explicit_actor(&self) -> Option<&str> {
        match self {
            Action::Answer { from, .. }
            | Action::FollowUp { from, .. }
            | Action::AnswerValue { from, .. } => Some(from),
            Action::Resolve { from, .. }
            | Action::Escalate { from, .. }
            | Action::Abandon { from, .. }
            | Action::ResolveValue { from, .. } => from.as_deref(),
        }
    }

    /// The typed value the action carries (docs/protocol.md §22).
    pub fn value(&self) -> Option<&Value> {
        match self {
            Action::AnswerValue { value, .. } | Action::ResolveValue { value, .. } => Some(value),
            _ => None,
        }
    }

    /// (field name, text) to validate.
    fn text(&self) -> Option<(&'static str, &str)> {
        match self {
            Action::Answer { body, .. } => Some(("answer", body)),
            Action::AnswerValue { body, .. } => body.as_deref().map(|b| ("answer", b)),
            Action::FollowUp { question, .. } => Some(("question", question)),
            Action::Resolve { message, .. }
            | Action::Escalate { message, .. }
            | Action::Abandon { message, .. }
            | Action::ResolveValue { message, .. } => message.as_deref().map(|m| ("message", m)),
        }
    }
}

impl Action {
    /// Input validation (the first guard): the id, the actor when given, the text. Shells call
    /// it before reading the ledger the id names, so input errors win over file errors.
    pub fn validate(&self, id: &str, config: &Config) -> Result<ClarificationId, ClarifyError> {
        let parsed = ClarificationId::parse(id)?;
        if let Some(actor) = self.explicit_actor() {
            check_agent(actor)?;
        }
        if let Some((field, text)) = self.text() {
            check_text(field, text, config.max_body_chars as usize)?;
        }
        Ok(parsed)
    }
}

/// Applies `action` to record `id`, unsigned: [`act_with`] with no keys.
pub fn act(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
) -> Result<Applied, ClarifyError> {
    act_with(ledger, id, action, config, now, &Signers::default())
}

/// Applies `action` to record `id`. Guards run in the order of docs/protocol.md §4: input validation,
/// `NOT_FOUND`, `INVALID_TRANSITION`, `NOT_PARTICIPANT`. The entry is signed when `signers`
/// holds the key that may sign for its author (the hub key for `agent-x` and `human`).
pub fn act_with(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    act_by(ledger, id, action, config, now, signers, None)
}

/// The `by` of a person known only as whoever runs an agent's client (docs/protocol.md §24).
pub const OPERATOR_OF: &str = "operator of ";

/// A person acting through a server (docs/protocol.md §23): the entry they write is `from: "human"` with
/// `by` (who) and `via` (which surface, e.g. `web`), both hashed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribution {
    pub by: String,
    pub via: String,
    /// Where the decision was taken, when the surface has an address for it (GitHub Mode:
    /// the comment's URL); written as the entry's `ref`.
    pub reference: Option<String>,
}

impl Attribution {
    /// The entry fields it adds.
    pub fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("by".into(), self.by.clone().into());
        m.insert("via".into(), self.via.clone().into());
        if let Some(r) = &self.reference {
            m.insert("ref".into(), r.clone().into());
        }
        m
    }
}

/// [`act_with`] by a person: the action must be the human's (`from` absent or `human`), and
/// the entry carries `by`/`via`. `None` is [`act_with`].
pub fn act_by(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
    signers: &Signers,
    by: Option<&Attribution>,
) -> Result<Applied, ClarifyError> {
    let written = Written {
        by,
        noted: Map::new(),
    };
    act_noted(ledger, id, action, config, now, signers, written)
}

/// Who writes an entry and what it notes besides the protocol's fields.
#[derive(Clone, Debug, Default)]
pub struct Written<'a> {
    /// The person acting through a door, if one does.
    pub by: Option<&'a Attribution>,
    /// More fields of the entry (a resolution's `supersedes`, docs/protocol.md §36), hashed
    /// with it.
    pub noted: Map<String, Value>,
}

/// [`act_by`] whose entry carries `written.noted` fields too, hashed with it.
pub fn act_noted(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
    signers: &Signers,
    written: Written<'_>,
) -> Result<Applied, ClarifyError> {
    let Written { by, noted } = written;
    if let Some(a) = by {
        check_person(action, a)?;
    }
    check_now(now)?;
    let parsed = action.validate(id, config)?;
    let index = (parsed.issue == ledger.issue_number)
        .then(|| ledger.position(id))
        .flatten()
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let mut ledger = ledger.clone();
    let issue = ledger.issue_number;
    let Some(record) = ledger.clarifications.get_mut(index) else {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    };

    let op = action.op();
    let status = record.current_status();
    let legacy_empty = record.is_legacy_empty();
    let Some(who) = who_may(status, op, legacy_empty) else {
        return Err(ClarifyError::InvalidTransition {
            op: op.as_str().to_owned(),
            id: id.to_owned(),
            status: status.as_str().to_owned(),
            allowed: allowed_ops(status, legacy_empty),
        });
    };
    let actor = actor_of(action, by.is_some(), status, &record.from);
    if !who.admits(&actor, &record.from, &record.to) {
        return Err(ClarifyError::NotParticipant {
            actor,
            op: op.as_str().to_owned(),
            id: id.to_owned(),
            allowed: who.describe(&record.from, &record.to),
        });
    }

    // A person's decision on a record assigned to people is theirs only (docs/protocol.md §37).
    if actor == HUMAN && matches!(op, Op::Resolve | Op::Abandon) {
        let person = by.map(|a| a.by.as_str());
        crate::people::check_decider(record, person, op.as_str())?;
    }
    check_decision_note(action, status, &actor, id)?;
    let Drafted {
        kind,
        author,
        body,
        value,
        error,
    } = draft(action, record, status, actor, id)?;
    // A record that needs several deciders to agree: this decision is an approval, and a
    // resolution only once enough agree (docs/protocol.md §37).
    if let Some(q) = (kind == EntryKind::Resolution && author == HUMAN)
        .then(|| crate::people::quorum_of(record))
        .flatten()
    {
        let approval = crate::people::Approval {
            body: &body,
            value,
            person: by.map_or_else(Map::new, Attribution::fields),
            seconds: None,
        };
        let events = crate::people::approve(record, issue, approval, q, now, signers);
        ledger.seal();
        return Ok(Applied {
            ledger,
            id: id.to_owned(),
            events,
            idempotent: false,
            reused: false,
            error,
        });
    }
    // The person's name goes on their own entry, not on the hub's (max rounds).
    let mut extra = match by {
        Some(a) if author == HUMAN => a.fields(),
        _ => serde_json::Map::new(),
    };
    extra.extend(noted);
    if kind == EntryKind::Escalation {
        let workflow = ledger.workflow.as_deref();
        extra.extend(crate::people::escalation_fields(
            config, workflow, record, now,
        ));
    }
    let entry = crate::ledger::NewEntry {
        kind,
        from: &author,
        body: &body,
        value,
        extra,
    };
    let at = record.append_entry(entry, now, signers);
    let events = Event::for_entry(issue, record, kind, &author, &body, at)
        .into_iter()
        .collect();
    ledger.seal();
    Ok(Applied {
        ledger,
        id: id.to_owned(),
        events,
        idempotent: false,
        reused: false,
        error,
    })
}

/// A person acting through a server: a name (or the operator of an agent's client,
/// docs/protocol.md §24: a decision made through MCP elicitation is `by: "operator of
/// <agent>"`), a surface, and an action that is the human's own.
fn check_person(action: &Action, a: &Attribution) -> Result<(), ClarifyError> {
    check_agent(a.by.strip_prefix(OPERATOR_OF).unwrap_or(&a.by))?;
    check_agent(&a.via)?;
    if action.explicit_actor().is_some_and(|actor| actor != HUMAN) {
        return Err(ClarifyError::input(
            "a person acting through the server writes as 'human' (`from` must be absent or 'human')",
        ));
    }
    Ok(())
}

/// Who acts when the action names no one: a person through a server is `human`; so is
/// whoever resolves an escalated record or escalates; anything else is the requester.
fn actor_of(action: &Action, by_person: bool, status: Status, requester: &str) -> String {
    match action.explicit_actor() {
        Some(a) => a.to_owned(),
        None if by_person => HUMAN.to_owned(),
        None => match action {
            Action::Resolve { .. } | Action::ResolveValue { .. } if status == Status::Escalated => {
                HUMAN.to_owned()
            }
            Action::Escalate { .. } => HUMAN.to_owned(),
            _ => requester.to_owned(),
        },
    }
}

/// A person's decision says something: the asker resumes from it (docs/protocol.md).
fn check_decision_note(
    action: &Action,
    status: Status,
    actor: &str,
    id: &str,
) -> Result<(), ClarifyError> {
    if let Action::Resolve { message, .. } = action {
        if status == Status::Escalated
            && actor == HUMAN
            && message.as_deref().is_none_or(|m| m.trim().is_empty())
        {
            return Err(ClarifyError::input(format!(
                "a decision is needed: resolving escalated {id} as human takes a message (-m TEXT) that the asker resumes from"
            )));
        }
    }
    Ok(())
}

/// The entry an action writes, before it is appended.
struct Drafted {
    kind: EntryKind,
    author: String,
    body: String,
    value: Option<Value>,
    /// Set when the action is refused but still writes an entry (a follow-up past max
    /// rounds escalates, and the caller is told why).
    error: Option<ClarifyError>,
}

/// What entry `action` by `actor` writes on `record` (in `status`).
fn draft(
    action: &Action,
    record: &crate::ledger::Record,
    status: Status,
    actor: String,
    id: &str,
) -> Result<Drafted, ClarifyError> {
    let mut error = None;
    let mut value = None;
    let (kind, author, body) = match action {
        Action::Answer { body, .. } => {
            let (body, v) = record.answer.decide(Some(body), None)?;
            value = v;
            (EntryKind::Answer, actor, body)
        }
        Action::AnswerValue { body, value: v, .. } => {
            let (body, v) = record.answer.decide(body.as_deref(), Some(v))?;
            value = v;
            (EntryKind::Answer, actor, body)
        }
        Action::ResolveValue {
            message, value: v, ..
        } => {
            let (body, v) = record.answer.decision(message.as_deref(), Some(v))?;
            value = v;
            (EntryKind::Resolution, actor, body)
        }
        Action::FollowUp { question, .. } => {
            let round = record.folded_round();
            if round >= record.max_rounds {
                error = Some(ClarifyError::MaxRoundsExceeded {
                    id: id.to_owned(),
                    max: record.max_rounds,
                });
                let reason = format!("max rounds reached ({} of {})", round, record.max_rounds);
                (EntryKind::Escalation, AGENT_X.to_owned(), reason)
            } else {
                (EntryKind::Question, actor, question.clone())
            }
        }
        // A person's decision on an escalated record is what they chose (the kind's one
        // rule, `AnswerSpec::decision`): a note alone does not stand for an option.
        Action::Resolve { message, .. } if status == Status::Escalated && actor == HUMAN => {
            let (body, v) = record.answer.decision(message.as_deref(), None)?;
            value = v;
            (EntryKind::Resolution, actor, body)
        }
        Action::Resolve { message, .. } => (
            EntryKind::Resolution,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("resolved by {actor}")),
        ),
        Action::Escalate { message, .. } => (
            EntryKind::Escalation,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("escalated by {actor}")),
        ),
        Action::Abandon { message, .. } => (
            EntryKind::Abandonment,
            actor.clone(),
            message
                .clone()
                .unwrap_or_else(|| format!("abandoned by {actor}")),
        ),
    };
    Ok(Drafted {
        kind,
        author,
        body,
        value,
        error,
    })
}

/// What a person decided: the note, and the typed value when the record's answer kind has one
/// (docs/protocol.md §22).
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    pub message: Option<String>,
    pub value: Option<Value>,
}

/// A person's decision on an open record (docs/protocol.md §23 "decide"), in one command: an escalated
/// record is resolved by `human`; any other open record is first escalated (`taken by
/// <name>`), then resolved. Both entries carry `by`/`via`. Events of both steps are kept.
pub fn decide(
    ledger: &Ledger,
    id: &str,
    verdict: Verdict,
    config: &Config,
    now: i64,
    signers: &Signers,
    by: &Attribution,
) -> Result<Applied, ClarifyError> {
    let Verdict { message, value } = verdict;
    // A typed decision (docs/protocol.md §22) is checked against the record's answer kind.
    let resolve = match value {
        Some(value) => Action::ResolveValue {
            from: None,
            message,
            value,
        },
        None => Action::Resolve {
            from: None,
            message,
        },
    };
    take_then(ledger, id, &resolve, config, now, signers, by)
}

/// A person's abandonment of an open record (GitHub Mode's `/abandon`, docs/protocol.md §26):
/// as [`decide`], a record that is not escalated is taken first (`taken by <name>`), then
/// abandoned by `human` — that the question is moot is a person's call, whoever holds it.
pub fn decide_abandon(
    ledger: &Ledger,
    id: &str,
    message: Option<String>,
    config: &Config,
    now: i64,
    signers: &Signers,
    by: &Attribution,
) -> Result<Applied, ClarifyError> {
    let abandon = Action::Abandon {
        from: None,
        message,
    };
    take_then(ledger, id, &abandon, config, now, signers, by)
}

/// `action` by `human` on an escalated record; any other open record is escalated first
/// (`taken by <name>`). Both entries carry `by`/`via`; the events of both steps are kept.
fn take_then(
    ledger: &Ledger,
    id: &str,
    action: &Action,
    config: &Config,
    now: i64,
    signers: &Signers,
    by: &Attribution,
) -> Result<Applied, ClarifyError> {
    let escalated = ledger
        .find(id)
        .is_some_and(|r| r.current_status() == Status::Escalated);
    if escalated {
        return act_by(ledger, id, action, config, now, signers, Some(by));
    }
    let take = Action::Escalate {
        from: None,
        message: Some(format!("taken by {}", by.by)),
    };
    let first = act_by(ledger, id, &take, config, now, signers, Some(by))?;
    let mut second = act_by(&first.ledger, id, action, config, now, signers, Some(by))?;
    let mut events = first.events;
    events.append(&mut second.events);
    second.events = events;
    Ok(second)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod attributed {
    use super::*;
    use crate::ops::NewRequest;
    use crate::testkit::{ask, keyring, plain, MIN, T0};

    fn web(by: &str) -> Attribution {
        Attribution {
            by: by.into(),
            via: "web".into(),
            reference: None,
        }
    }

    #[test]
    fn a_persons_decision_is_hashed_signed_and_verifies() {
        let keys = keyring();
        let ledger = ask(
            None,
            &plain("engineer", "architect", "Cache", "Redis?"),
            T0,
            &keys,
        );
        let id = "CLR-42-001";
        let config = Config::default();
        let done = decide(
            &ledger,
            id,
            Verdict {
                message: Some("Redis".into()),
                value: None,
            },
            &config,
            T0 + MIN,
            &keys,
            &web("alice"),
        )
        .unwrap();
        let r = done.ledger.find(id).unwrap();
        assert_eq!(r.current_status(), Status::Resolved);
        let last_two = &r.thread[r.thread.len() - 2..];
        assert_eq!(last_two[0].kind, EntryKind::Escalation);
        assert_eq!(last_two[0].body, "taken by alice");
        for e in last_two {
            assert_eq!(e.from, HUMAN);
            assert_eq!(e.extra["by"], "alice");
            assert_eq!(e.extra["via"], "web");
            // The hub key signs the human's entries.
            assert_eq!(e.signer.as_deref(), Some(AGENT_X));
        }
        let check = |l: &Ledger| {
            crate::verify::check_ledger_with("issue-42.json", l, &keys.public_keys(), true).problems
        };
        let problems = check(&done.ledger);
        assert!(problems.is_empty(), "{problems:?}");
        // The name is covered by the hash: changing it breaks the chain.
        let mut forged = done.ledger.clone();
        let last = forged.clarifications[0].thread.last_mut().unwrap();
        last.extra.insert("by".into(), "mallory".into());
        assert!(!check(&forged).is_empty());
    }

    #[test]
    fn a_person_abandons_an_open_record_by_taking_it_first() {
        let keys = keyring();
        let ledger = ask(None, &plain("engineer", "architect", "C", "Q?"), T0, &keys);
        let id = "CLR-42-001";
        let config = Config::default();
        let by = Attribution {
            by: "mia".into(),
            via: "github".into(),
            reference: Some("https://github.com/a/b/issues/42#issuecomment-1".into()),
        };
        // As an abandonment alone, a person may not: only an escalated record is theirs.
        let plain_abandon = Action::Abandon {
            from: None,
            message: Some("moot".into()),
        };
        assert!(act_by(
            &ledger,
            id,
            &plain_abandon,
            &config,
            T0 + MIN,
            &keys,
            Some(&by)
        )
        .is_err());
        let done = decide_abandon(
            &ledger,
            id,
            Some("moot".into()),
            &config,
            T0 + MIN,
            &keys,
            &by,
        )
        .unwrap();
        let r = done.ledger.find(id).unwrap();
        assert_eq!(r.current_status(), Status::Abandoned);
        let last_two = &r.thread[r.thread.len() - 2..];
        assert_eq!(last_two[0].body, "taken by mia");
        assert_eq!(last_two[1].kind, EntryKind::Abandonment);
        assert_eq!(last_two[1].body, "moot");
        for e in last_two {
            assert_eq!(e.from, HUMAN);
            assert_eq!(e.extra["by"], "mia");
            assert_eq!(e.extra["via"], "github");
        }
        // An escalated record is abandoned in one entry; a closed one refuses.
        let again = decide_abandon(&done.ledger, id, None, &config, T0 + 2 * MIN, &keys, &by);
        assert!(again.is_err());
    }

    #[test]
    fn the_operator_of_an_agent_may_decide_through_elicitation() {
        let keys = keyring();
        let ledger = ask(None, &plain("engineer", "architect", "C", "Q?"), T0, &keys);
        let id = "CLR-42-001";
        let config = Config::default();
        let by = |by: &str| Attribution {
            by: by.into(),
            via: "elicitation".into(),
            reference: None,
        };
        let done = decide(
            &ledger,
            id,
            Verdict {
                message: Some("Blue".into()),
                value: None,
            },
            &config,
            T0 + MIN,
            &keys,
            &by("operator of engineer"),
        )
        .unwrap();
        let last = done.ledger.find(id).unwrap().thread.last().unwrap().clone();
        assert_eq!(last.extra["by"], "operator of engineer");
        assert_eq!(last.extra["via"], "elicitation");
        for bad in ["operator of Not An Agent", "operator of ", "someone else"] {
            let refused = decide(
                &ledger,
                id,
                Verdict {
                    message: Some("Blue".into()),
                    value: None,
                },
                &config,
                T0 + MIN,
                &keys,
                &by(bad),
            );
            assert_eq!(refused.unwrap_err().code(), "INVALID_AGENT", "{bad}");
        }
    }

    #[test]
    fn a_decision_on_a_closed_choice_is_an_option_on_every_path() {
        use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
        let keys = keyring();
        let option = |v: &str, l: &str| AnswerOption {
            value: v.into(),
            label: Some(l.into()),
            description: None,
        };
        let req = NewRequest {
            answer: AnswerSpec {
                kind: AnswerKind::Choice,
                options: vec![option("redis", "Redis"), option("lru", "In-process LRU")],
                allow_other: Some(false),
                ..AnswerSpec::default()
            },
            ..plain("engineer", "architect", "Cache", "Which cache?")
        };
        let ledger = ask(None, &req, T0, &keys);
        let id = "CLR-42-001";
        let config = Config::default();
        let decide_with = |message: &str, value: Option<serde_json::Value>| {
            decide(
                &ledger,
                id,
                Verdict {
                    message: Some(message.into()),
                    value,
                },
                &config,
                T0 + MIN,
                &keys,
                &web("alice"),
            )
        };
        // The web form's, the API's and GitHub's path (decide) and the CLI's (resolve as
        // human on the escalated record) refuse a note alone.
        let refused = decide_with("whatever is faster", None).unwrap_err();
        assert_eq!(refused.code(), "INVALID_ANSWER");
        let escalated = act_with(
            &ledger,
            id,
            &Action::Escalate {
                from: None,
                message: Some("a person decides".into()),
            },
            &config,
            T0 + MIN,
            &keys,
        )
        .unwrap()
        .ledger;
        let cli = act_with(
            &escalated,
            id,
            &Action::Resolve {
                from: None,
                message: Some("whatever is faster".into()),
            },
            &config,
            T0 + 2 * MIN,
            &keys,
        )
        .unwrap_err();
        assert_eq!(cli.code(), "INVALID_ANSWER");
        // An option and a note: both recorded.
        let done = decide_with("see ADR-7", Some(serde_json::json!("lru"))).unwrap();
        let last = done.ledger.find(id).unwrap().thread.last().unwrap().clone();
        assert_eq!(last.kind, EntryKind::Resolution);
        assert_eq!(last.value, Some(serde_json::json!("lru")));
        assert_eq!(last.body, "see ADR-7");
        assert_eq!(last.extra["by"], "alice");
    }

    #[test]
    fn a_person_writes_only_as_human() {
        let keys = keyring();
        let ledger = ask(None, &plain("engineer", "architect", "C", "Q?"), T0, &keys);
        let as_agent = Action::Escalate {
            from: Some("engineer".into()),
            message: None,
        };
        let e = act_by(
            &ledger,
            "CLR-42-001",
            &as_agent,
            &Config::default(),
            T0 + MIN,
            &keys,
            Some(&web("alice")),
        )
        .unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        // Without a person, entries are as before: no `by`, no `via`.
        let plain_act = act_with(
            &ledger,
            "CLR-42-001",
            &Action::Escalate {
                from: None,
                message: None,
            },
            &Config::default(),
            T0 + MIN,
            &keys,
        )
        .unwrap();
        assert!(plain_act
            .ledger
            .find("CLR-42-001")
            .unwrap()
            .thread
            .iter()
            .all(|e| e.extra.is_empty()));
    }
}
