//! Elicitation (docs/protocol.md §24): when an agent waits on its own record that a person must decide,
//! the person nearest to it is often the one running its client. If that client declared form
//! elicitation, `clarify_wait` asks them with `elicitation/create`: a form built from the
//! record's answer kind. `accept` resolves the record as a person (`by`: the name they gave in
//! the form, else `"operator of <agent>"`; `via: "elicitation"`); `decline` and `cancel` write
//! nothing. `[mcp] elicit = "never"` asks nobody; an escalation a person made is never put to
//! the asking agent's client.
//!
//! To a 2025-06-18 / 2025-11-25 client the form goes as a server-to-client request
//! (`elicitation/create`, rmcp's `elicitation` feature); to a 2026-07-28 client, which takes no
//! such request, as the input-required result of the `clarify_wait` call itself, with a sealed
//! `requestState` (`crate::mrtr`). Both decide the same way ([`accepted`]).

use std::time::Duration;

use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::names::{check_agent, is_reserved, HUMAN};
use agentx_clarify_core::ops::{Attribution, OPERATOR_OF};
use agentx_clarify_core::people::check_decider;
use agentx_clarify_core::{EntryKind, Record, Status};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, ProtocolVersion,
};
use rmcp::service::ElicitationMode;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{json, Map, Value};

use agentx_clarify_command::Files as _;

use crate::hub::Decided;

/// How long a person may take over the form (the client may cancel the call sooner).
pub(crate) const FORM_FOR: Duration = Duration::from_secs(10 * 60);
/// Longest free-text answer offered by the form (the store checks `max_body_chars` anyway).
const MAX_TEXT: u32 = 2000;
/// Longest name a person may give for themselves (an agent name's limit).
const MAX_NAME: u32 = 64;

/// Whether `ctx`'s request speaks 2026-07-28 or later: no server-to-client request may
/// reach its client outside an input-required result (the spec's `basic/patterns/mrtr`).
pub fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether `peer`'s client said it fills in forms.
pub fn supported(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// Whether `record` may be put to the person at `agent`'s client (docs/protocol.md §24): it is
/// `agent`'s own, escalated without a decision, and the escalation was not a person's. A
/// person who escalated handed the decision to someone else: putting it back to the asking
/// agent's own client (whose operator may be the agent itself) would undo that, whatever
/// `[mcp] elicit` says (issue 48 item 8).
pub fn wanted(record: &Record, agent: &str, operator: Option<&str>) -> bool {
    record.current_status() == Status::Escalated
        && record.from == agent
        && !escalated_by_person(record)
        && operator_decides(record, operator)
}

/// A record assigned to people (docs/protocol.md §37) is put to the client only when its
/// token names the operator and they are among those who may decide it: otherwise the
/// asking agent's own operator would decide an escalation that belongs to someone else.
fn operator_decides(record: &Record, operator: Option<&str>) -> bool {
    if agentx_clarify_core::people::assigned(record).is_none() {
        return true;
    }
    operator.is_some_and(|o| check_decider(record, Some(o), "resolve").is_ok())
}

fn escalated_by_person(record: &Record) -> bool {
    record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Escalation)
        .is_some_and(|e| e.from == HUMAN)
}

/// What the person at the client decided: the decision, and their name when they gave one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answered {
    pub decided: Decided,
    /// The name the person gave in the form (an agent-name-shaped word), else `None`: the
    /// decision is then the operator's of the asking agent.
    pub person: Option<String>,
}

/// What the person decided; `None` when they declined, cancelled, did not answer in time or
/// the client failed.
pub async fn ask(
    peer: &Peer<RoleServer>,
    record: &Record,
    operator: Option<&str>,
) -> Option<Answered> {
    let id = record.id.clone();
    let params = form(record, operator)?;
    let answered = match peer
        .create_elicitation_with_timeout(params, Some(FORM_FOR))
        .await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::info!("elicitation of {id} got no answer: {e}");
            return None;
        }
    };
    accepted(record, answered)
}

/// The form that puts `record` to a person: the same for a mid-call `elicitation/create`
/// (2025-era clients) and an input-required result (2026-07-28, `crate::mrtr`). `None` (logged)
/// only if rmcp would not carry it.
/// With a known `operator` the form asks for no name: the token says who they are.
pub(crate) fn form(record: &Record, operator: Option<&str>) -> Option<ElicitRequestParams> {
    let mut schema = schema(record);
    if operator.is_some() {
        if let Some(p) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            p.remove("person");
        }
    }
    let schema: ElicitationSchema = match serde_json::from_value(schema) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("elicitation form of {}: {e}", record.id);
            return None;
        }
    };
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(record),
        requested_schema: schema,
    })
}

/// The decision in the person's answer to the form; `None` for a decline, a cancel or a form
/// that holds no decision.
pub(crate) fn accepted(record: &Record, answered: ElicitResult) -> Option<Answered> {
    if answered.action != ElicitationAction::Accept {
        return None;
    }
    let content = answered.content.unwrap_or(Value::Null);
    decision(record, &content)
}

fn latest(record: &Record, kind: EntryKind) -> Option<&str> {
    record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == kind)
        .map(|e| e.body.as_str())
}

/// The form's text: the question, its context and why it was escalated.
fn message(record: &Record) -> String {
    let mut out = format!(
        "{} asked {} ({}): {}\n\n{}",
        record.from,
        record.to,
        record.id,
        record.topic,
        latest(record, EntryKind::Question).unwrap_or_default()
    );
    if let Some(context) = record.context.as_deref().filter(|c| !c.is_empty()) {
        out.push_str(&format!("\n\nContext: {context}"));
    }
    if let Some(why) = latest(record, EntryKind::Escalation) {
        out.push_str(&format!("\n\nEscalated to a person: {why}"));
    }
    out.push_str("\n\nYour decision is recorded in the clarification ledger as yours.");
    out
}

fn options(record: &Record) -> Vec<Value> {
    record
        .answer
        .options
        .iter()
        .map(|o| json!({ "const": o.value, "title": o.shown() }))
        .collect()
}

/// The form (a flat object of primitive fields, as elicitation requires) for the record's
/// answer kind, with an optional field for the person's name.
fn schema(record: &Record) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let spec = &record.answer;
    let other = json!({
        "type": "string",
        "title": "Other answer",
        "description": "An answer outside the options (leave the choice empty)",
        "maxLength": MAX_TEXT,
    });
    let note = json!({
        "type": "string",
        "title": "Why (optional)",
        "maxLength": MAX_TEXT,
    });
    match spec.kind {
        AnswerKind::Confirm => {
            properties.insert(
                "decision".into(),
                json!({ "type": "boolean", "title": "Yes", "description": "Checked: yes; unchecked: no" }),
            );
            properties.insert("message".into(), note);
            required.push("decision");
        }
        AnswerKind::Choice => {
            properties.insert(
                "choice".into(),
                json!({ "type": "string", "title": "Decision", "oneOf": options(record) }),
            );
            if spec.allows_other() {
                properties.insert("other".into(), other);
            } else {
                required.push("choice");
            }
            properties.insert("message".into(), note);
        }
        AnswerKind::MultiChoice => {
            properties.insert(
                "choices".into(),
                json!({
                    "type": "array",
                    "title": "Decision",
                    "items": { "anyOf": options(record) },
                    "minItems": spec.min(),
                    "maxItems": spec.max(),
                }),
            );
            if spec.allows_other() {
                properties.insert("other".into(), other);
            } else {
                required.push("choices");
            }
            properties.insert("message".into(), note);
        }
        AnswerKind::Text => {
            properties.insert(
                "answer".into(),
                json!({ "type": "string", "title": "Decision", "maxLength": MAX_TEXT }),
            );
            required.push("answer");
        }
    }
    properties.insert(
        "person".into(),
        json!({
            "type": "string",
            "title": "Your name (optional)",
            "description": format!(
                "Recorded as who decided (lowercase letters, digits, -); empty: the operator of {}",
                record.from
            ),
            "maxLength": MAX_NAME,
        }),
    );
    json!({ "type": "object", "properties": properties, "required": required })
}

/// The decision in the accepted form; `None` when it holds none. A name that is not a valid
/// agent-style name is left out (the decision is then the operator's), never refused: the
/// person decided, and their decision is what counts.
fn decision(record: &Record, content: &Value) -> Option<Answered> {
    let field = |key: &str| content.get(key).filter(|v| !v.is_null());
    let text = |key: &str| {
        field(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let decided = match record.answer.kind {
        AnswerKind::Confirm => Decided {
            value: Some(Value::Bool(field("decision")?.as_bool()?)),
            message: text("message"),
        },
        kind @ (AnswerKind::Choice | AnswerKind::MultiChoice) => {
            let key = if kind == AnswerKind::Choice {
                "choice"
            } else {
                "choices"
            };
            let chosen = field(key).filter(|v| v.as_array().is_none_or(|a| !a.is_empty()));
            match (chosen, text("other")) {
                (Some(v), _) => Decided {
                    value: Some(v.clone()),
                    message: text("message"),
                },
                (None, Some(other)) => Decided {
                    value: None,
                    message: Some(other),
                },
                (None, None) => return None,
            }
        }
        AnswerKind::Text => Decided {
            value: None,
            message: Some(text("answer")?),
        },
    };
    let person = text("person").filter(|p| check_agent(p).is_ok() && !is_reserved(p));
    Some(Answered { decided, person })
}

/// Writes the decision the person at `agent`'s client gave on record `id` (docs/protocol.md
/// §24): as themselves when the form names them, else as whoever runs the agent's client,
/// `via: "elicitation"`. A refusal (the record changed meanwhile) is logged and returned.
pub(crate) async fn decide(
    hub: &crate::hub::Hub,
    id: &str,
    agent: &str,
    operator: Option<&str>,
    answered: crate::elicit::Answered,
) -> Result<(), String> {
    let by = match operator {
        // The token names the operator: the decision is theirs, whatever the form said.
        Some(o) => o.to_owned(),
        None => typed_or_operator(hub, agent, answered.person).await,
    };
    let by = Attribution {
        by,
        via: String::from("elicitation"),
        reference: None,
    };
    let why = match hub.decide_as(id.to_owned(), answered.decided, by).await {
        Ok(m) => match m.error {
            None => return Ok(()),
            Some(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    tracing::warn!("the decision on {id} from elicitation was refused: {why}");
    Err(why)
}

/// Without a known operator, the name typed in the form — unless the workspace defines
/// people: a typed name is no proof of being one of them, so the decision is then "operator
/// of <agent>", who is never a person a record is assigned to (docs/protocol.md §37).
async fn typed_or_operator(hub: &crate::hub::Hub, agent: &str, typed: Option<String>) -> String {
    let people = hub
        .with_store("people", |store, _| {
            Ok(store.load_config()?.people.is_some())
        })
        .await;
    match typed {
        Some(name) if matches!(people, Ok(false)) => name,
        _ => format!("{OPERATOR_OF}{agent}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(extra: &str, thread: &str) -> Record {
        let text = format!(
            r#"{{"issueNumber":1,"clarifications":[{{"id":"CLR-1-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"escalated","round":1,"maxRounds":3,"slaMinutes":30{extra},"thread":[{{"round":1,"from":"engineer","type":"question","body":"Which?","timestamp":"2026-11-22T10:00:00.000Z"}},{thread}]}}]}}"#
        );
        let ledger =
            agentx_clarify_core::Ledger::parse("issue-1.json", text.as_bytes(), Some(1)).unwrap();
        ledger.clarifications[0].clone()
    }

    const BY_AGENT: &str = r#"{"round":1,"from":"engineer","type":"escalation","body":"away","timestamp":"2026-11-22T10:01:00.000Z"}"#;
    const BY_PERSON: &str = r#"{"round":1,"from":"human","type":"escalation","body":"the lead decides","timestamp":"2026-11-22T10:01:00.000Z","by":"alice","via":"web"}"#;
    const OPTS: &str =
        r#","answerKind":"choice","options":[{"value":"redis","label":"Redis"},{"value":"lru"}]"#;

    #[test]
    fn every_kind_makes_a_form_rmcp_accepts() {
        for extra in [
            "",
            r#","answerKind":"confirm""#,
            OPTS,
            r#","answerKind":"choice","options":[{"value":"redis"},{"value":"lru"}],"allowOther":false"#,
            r#","answerKind":"multi_choice","options":[{"value":"redis"},{"value":"lru"}],"maxSelect":2"#,
        ] {
            let s = schema(&record(extra, BY_AGENT));
            let parsed: Result<ElicitationSchema, _> = serde_json::from_value(s.clone());
            assert!(parsed.is_ok(), "{s}: {parsed:?}");
            assert_eq!(s["properties"]["person"]["type"], "string");
        }
    }

    #[test]
    fn the_form_becomes_a_decision() {
        let choice = record(OPTS, BY_AGENT);
        let got = decision(&choice, &json!({"choice": "lru"})).unwrap();
        assert_eq!(got.decided.value, Some(json!("lru")));
        assert_eq!(got.person, None);
        let other = decision(&choice, &json!({"other": "memcached", "person": "alice"})).unwrap();
        assert_eq!(other.decided.message.as_deref(), Some("memcached"));
        assert_eq!(other.person.as_deref(), Some("alice"));
        assert_eq!(decision(&choice, &json!({})), None);
        let text = record("", BY_AGENT);
        assert_eq!(decision(&text, &json!({"answer": "  "})), None);
        let named = decision(
            &text,
            &json!({"answer": "Blue-green", "person": "Not A Name"}),
        );
        assert_eq!(named.unwrap().person, None, "an invalid name is left out");
        let yes = record(r#","answerKind":"confirm""#, BY_AGENT);
        let no = decision(&yes, &json!({"decision": false})).unwrap();
        assert_eq!(no.decided.value, Some(json!(false)));
    }

    #[test]
    fn an_escalation_a_person_made_is_never_elicited() {
        assert!(wanted(&record("", BY_AGENT), "engineer", None));
        assert!(
            !wanted(&record("", BY_AGENT), "architect", None),
            "not the requester"
        );
        assert!(!wanted(&record("", BY_PERSON), "engineer", None));
    }
}
