//! Elicitation (docs/protocol.md §24): when an agent waits on its own record that a person must decide,
//! the person nearest to it is often the one running its client. If that client declared form
//! elicitation, `clarify_wait` asks them with `elicitation/create`: a form built from the
//! record's answer kind. `accept` resolves the record as a person (`by: "operator of
//! <agent>"`, `via: "elicitation"`); `decline` and `cancel` write nothing.
//!
//! This is the 2025-06-18 / 2025-11-25 server-to-client request (rmcp's `elicitation`
//! feature), which the clients in use answer today (Claude Code, VS Code, Cursor, the
//! TypeScript SDK); the 2026-07-28 input-required result is not offered (see
//! docs/decisions.md).

use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::{json, Map, Value};

use crate::reply;

/// How long a person may take over the form (the client may cancel the call sooner).
pub(crate) const FORM_FOR: Duration = Duration::from_secs(10 * 60);
/// Longest free-text answer offered by the form (the store checks `max_body_chars` anyway).
const MAX_TEXT: u32 = 2000;

/// Whether `peer`'s client said it fills in forms.
pub fn supported(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// Whether `record` is `agent`'s own and escalated without a decision.
pub fn wanted(record: &Value, agent: &str) -> bool {
    record.get("status").and_then(Value::as_str) == Some("escalated")
        && record.get("from").and_then(Value::as_str) == Some(agent)
}

/// What the person decided, as the input of the command layer's `decide`; `None` when they
/// declined, cancelled, did not answer in time or the client failed.
pub async fn ask(peer: &Peer<RoleServer>, record: &Value) -> Option<Value> {
    let id = record.get("id").and_then(Value::as_str)?.to_owned();
    let schema: ElicitationSchema = match serde_json::from_value(schema(record)) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("elicitation form of {id}: {e}");
            return None;
        }
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(record),
        requested_schema: schema,
    };
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
    if answered.action != ElicitationAction::Accept {
        return None;
    }
    let content = answered.content.unwrap_or(Value::Null);
    decision(record, &id, &content)
}

/// The form's text: the question, its context and why it was escalated.
fn message(record: &Value) -> String {
    let text = |key: &str| record.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut out = format!(
        "{} asked {} ({}): {}\n\n{}",
        text("from"),
        text("to"),
        text("id"),
        text("topic"),
        reply::latest_body(record, &["question"]).unwrap_or_default()
    );
    if !text("context").is_empty() {
        out.push_str(&format!("\n\nContext: {}", text("context")));
    }
    if let Some(why) = reply::latest_body(record, &["escalation"]) {
        out.push_str(&format!("\n\nEscalated to a person: {why}"));
    }
    out.push_str("\n\nYour decision is recorded in the clarification ledger as yours.");
    out
}

fn options(record: &Value) -> Vec<Value> {
    record
        .get("options")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .map(|o| {
                    let value = o.get("value").cloned().unwrap_or(Value::Null);
                    let title = o.get("label").cloned().unwrap_or_else(|| value.clone());
                    json!({ "const": value, "title": title })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn kind(record: &Value) -> &str {
    record
        .get("answerKind")
        .and_then(Value::as_str)
        .unwrap_or("text")
}

fn allow_other(record: &Value) -> bool {
    record
        .get("allowOther")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// The form (a flat object of primitive fields, as elicitation requires) for the record's
/// answer kind.
fn schema(record: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
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
    match kind(record) {
        "confirm" => {
            properties.insert(
                "decision".into(),
                json!({ "type": "boolean", "title": "Yes", "description": "Checked: yes; unchecked: no" }),
            );
            properties.insert("message".into(), note);
            required.push("decision");
        }
        "choice" => {
            properties.insert(
                "choice".into(),
                json!({ "type": "string", "title": "Decision", "oneOf": options(record) }),
            );
            if allow_other(record) {
                properties.insert("other".into(), other);
            } else {
                required.push("choice");
            }
            properties.insert("message".into(), note);
        }
        "multi_choice" => {
            let all = options(record);
            let min = record.get("minSelect").and_then(Value::as_u64).unwrap_or(1);
            let max = record
                .get("maxSelect")
                .and_then(Value::as_u64)
                .unwrap_or(all.len() as u64);
            properties.insert(
                "choices".into(),
                json!({
                    "type": "array",
                    "title": "Decision",
                    "items": { "anyOf": all },
                    "minItems": min,
                    "maxItems": max,
                }),
            );
            if allow_other(record) {
                properties.insert("other".into(), other);
            } else {
                required.push("choices");
            }
            properties.insert("message".into(), note);
        }
        _ => {
            properties.insert(
                "answer".into(),
                json!({ "type": "string", "title": "Decision", "maxLength": MAX_TEXT }),
            );
            required.push("answer");
        }
    }
    json!({ "type": "object", "properties": properties, "required": required })
}

/// `decide`'s input from the accepted form; `None` when it holds no decision.
fn decision(record: &Value, id: &str, content: &Value) -> Option<Value> {
    let field = |key: &str| content.get(key).filter(|v| !v.is_null());
    let text = |key: &str| {
        field(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let mut input = Map::new();
    input.insert("id".into(), Value::from(id));
    match kind(record) {
        "confirm" => {
            input.insert("value".into(), Value::Bool(field("decision")?.as_bool()?));
            if let Some(m) = text("message") {
                input.insert("message".into(), Value::from(m));
            }
        }
        "choice" | "multi_choice" => {
            let key = if kind(record) == "choice" {
                "choice"
            } else {
                "choices"
            };
            let chosen = field(key).filter(|v| v.as_array().is_none_or(|a| !a.is_empty()));
            match (chosen, text("other")) {
                (Some(v), _) => {
                    input.insert("value".into(), v.clone());
                    if let Some(m) = text("message") {
                        input.insert("message".into(), Value::from(m));
                    }
                }
                (None, Some(other)) => {
                    input.insert("message".into(), Value::from(other));
                }
                (None, None) => return None,
            }
        }
        _ => {
            input.insert("message".into(), Value::from(text("answer")?));
        }
    }
    Some(Value::Object(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(extra: Value) -> Value {
        let mut r = json!({"id": "CLR-1-001", "from": "engineer", "to": "architect",
            "status": "escalated", "topic": "Cache", "thread": []});
        if let (Value::Object(r), Value::Object(e)) = (&mut r, extra) {
            r.extend(e);
        }
        r
    }

    #[test]
    fn every_kind_makes_a_form_rmcp_accepts() {
        let opts = json!([{"value": "redis", "label": "Redis"}, {"value": "lru"}]);
        for r in [
            record(json!({})),
            record(json!({"answerKind": "confirm"})),
            record(json!({"answerKind": "choice", "options": opts})),
            record(json!({"answerKind": "choice", "options": opts, "allowOther": false})),
            record(json!({"answerKind": "multi_choice", "options": opts, "maxSelect": 2})),
        ] {
            let s = schema(&r);
            let parsed: Result<ElicitationSchema, _> = serde_json::from_value(s.clone());
            assert!(parsed.is_ok(), "{s}: {parsed:?}");
        }
    }

    #[test]
    fn the_form_becomes_a_decision() {
        let opts = json!([{"value": "redis"}, {"value": "lru"}]);
        let choice = record(json!({"answerKind": "choice", "options": opts}));
        assert_eq!(
            decision(&choice, "CLR-1-001", &json!({"choice": "lru"})),
            Some(json!({"id": "CLR-1-001", "value": "lru"}))
        );
        assert_eq!(
            decision(&choice, "CLR-1-001", &json!({"other": "memcached"})),
            Some(json!({"id": "CLR-1-001", "message": "memcached"}))
        );
        assert_eq!(decision(&choice, "CLR-1-001", &json!({})), None);
        let text = record(json!({}));
        assert_eq!(decision(&text, "CLR-1-001", &json!({"answer": "  "})), None);
        let yes = record(json!({"answerKind": "confirm"}));
        assert_eq!(
            decision(&yes, "CLR-1-001", &json!({"decision": false})),
            Some(json!({"id": "CLR-1-001", "value": false}))
        );
    }
}
