//! A `slack-app` sink's messages (docs/notifications.md, "Slack as an app"): Block Kit with the
//! question, its context and one button per option — a select menu beyond five — and an
//! "Answer…" button that opens a modal for a text answer or a note. Once the record is decided
//! (here or anywhere else) its messages are updated to say who decided what, without buttons.
//!
//! Pure: the shell posts what this renders (`chat.postMessage`, `chat.update`, `views.open`)
//! and reads back what Slack sends (`slack_interaction.rs`). Every ledger text is escaped for
//! mrkdwn, and plain-text fields are cut to Slack's limits, so a question cannot make a link,
//! a mention or a message Slack refuses.

use serde_json::{json, Value};

use crate::kinds::AnswerKind;
use crate::ledger::Record;
use crate::notify::event::Event;

/// The `action_id` of a button or menu that decides.
pub const DECIDE: &str = "agentx-decide";
/// The `action_id` of the button that opens the answer modal.
pub const ANSWER: &str = "agentx-answer";
/// The `action_id` of the link to the thread (Slack sends its clicks too; nothing to do).
pub const OPEN: &str = "agentx-open";
/// The modal's `callback_id`, and the ids of its inputs.
pub const MODAL: &str = "agentx-answer";
pub const CHOICE_BLOCK: &str = "choice";
pub const NOTE_BLOCK: &str = "note";
/// Buttons in a message before a select menu takes their place.
pub const MAX_BUTTONS: usize = 5;
/// Options a select menu holds (Slack's limit).
const MAX_MENU: usize = 100;

/// A message: the notification's `text` (Slack's fallback) and its `blocks`.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub text: String,
    pub blocks: Value,
}

/// What a button, a menu option or a modal names: the record, its round, and the value
/// (`"CLR-42-001|1|redis"`; option values never hold `|`). A follow-up asks anew, and a
/// message of the earlier round no longer decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pick {
    pub record: String,
    pub round: u32,
    pub value: Option<String>,
}

impl Pick {
    pub fn encode(&self) -> String {
        match &self.value {
            Some(v) => format!("{}|{}|{v}", self.record, self.round),
            None => format!("{}|{}", self.record, self.round),
        }
    }

    pub fn decode(text: &str) -> Option<Pick> {
        let mut parts = text.splitn(3, '|');
        let record = parts.next().filter(|r| !r.is_empty())?.to_owned();
        let round = parts.next()?.parse().ok()?;
        let value = parts.next().map(str::to_owned);
        Some(Pick {
            record,
            round,
            value,
        })
    }
}

/// The message of `event`. With `ask` (the record, still a person's to decide) it carries the
/// buttons; without, it only tells.
pub fn message(event: &Event, ask: Option<&Record>) -> Message {
    let data = &event.data;
    let text = |k: &str| data.get(k).and_then(Value::as_str);
    if let Some(told) = settled(event) {
        return told;
    }
    let headline = event.headline();
    let mut blocks = vec![section(&format!("*{}*", escape(&headline)))];
    if let Some(q) = text("question") {
        blocks.push(section(&escape(q)));
    }
    let mut context = Vec::new();
    if let Some(r) = text("reason") {
        context.push(format!("Why: {}", escape(r)));
    }
    if let Some(names) = data.get("assigned").and_then(Value::as_array) {
        let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
        if !names.is_empty() {
            context.push(format!("Assigned to {}", escape(&names.join(", "))));
        }
    }
    if let Some(s) = data.get("approvals").and_then(|a| a.get("summary")) {
        if let Some(s) = s.as_str() {
            context.push(escape(s));
        }
    }
    if !context.is_empty() {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": cut(&context.join(" · "), 3000)}],
        }));
    }
    let mut elements = ask.map(choices).unwrap_or_default();
    if let Some(r) = ask {
        let pick = Pick {
            record: r.id.clone(),
            round: r.folded_round(),
            value: None,
        };
        elements.push(json!({
            "type": "button", "action_id": ANSWER, "value": pick.encode(),
            "text": {"type": "plain_text", "text": "Answer…"},
        }));
    }
    if let Some(link) = text("url") {
        elements.push(json!({
            "type": "button", "action_id": OPEN, "url": link,
            "text": {"type": "plain_text", "text": "Open the thread"},
        }));
    }
    if !elements.is_empty() {
        blocks.push(json!({"type": "actions", "block_id": "agentx", "elements": elements}));
    }
    Message {
        text: cut(&headline, 3000),
        blocks: Value::Array(blocks),
    }
}

/// The message of a decided (or otherwise closed) record: who decided what, and when — what
/// its earlier messages are updated to. `None` while the record is open.
fn settled(event: &Event) -> Option<Message> {
    let data = &event.data;
    let text = |k: &str| data.get(k).and_then(Value::as_str);
    let status = text("status")?;
    if !matches!(status, "resolved" | "abandoned" | "answered") {
        return None;
    }
    let at = crate::time::hh_mm(event.timestamp.ms());
    let what = text("label")
        .or(text("answer"))
        .map(|a| a.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let by = text("by").unwrap_or("someone");
    let said = match status {
        "resolved" => format!("Decided by {by}: {what} — {at} UTC"),
        "answered" => format!("Answered by {by}: {what} — {at} UTC"),
        other => format!("{} — {at} UTC", capitalised(other)),
    };
    let id = text("id").unwrap_or_default();
    let topic = text("topic").unwrap_or_default();
    let mut blocks = vec![section(&format!(
        ":white_check_mark: *{}*",
        escape(&format!("{id} {topic}"))
    ))];
    blocks.push(section(&escape(&said)));
    if let Some(q) = text("question") {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": cut(&escape(q), 3000)}],
        }));
    }
    Some(Message {
        text: cut(&said, 3000),
        blocks: Value::Array(blocks),
    })
}

fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The buttons (or the menu) of a record's options: yes and no for a confirm, each option of a
/// single choice; a multi-choice and a text answer are given in the modal.
fn choices(r: &Record) -> Vec<Value> {
    let pick = |value: &str| {
        Pick {
            record: r.id.clone(),
            round: r.folded_round(),
            value: Some(value.to_owned()),
        }
        .encode()
    };
    let options: Vec<(String, String)> = match r.answer.kind {
        AnswerKind::Confirm => vec![("Yes".into(), "true".into()), ("No".into(), "false".into())],
        AnswerKind::Choice => r
            .answer
            .options
            .iter()
            .map(|o| (o.shown().to_owned(), o.value.clone()))
            .collect(),
        AnswerKind::MultiChoice | AnswerKind::Text => return Vec::new(),
    };
    if options.len() <= MAX_BUTTONS {
        return options
            .iter()
            .map(|(label, value)| {
                json!({
                    "type": "button", "action_id": format!("{DECIDE}-{value}"),
                    "value": pick(value), "text": {"type": "plain_text", "text": cut(label, 75)},
                })
            })
            .collect();
    }
    let menu: Vec<Value> = options
        .iter()
        .take(MAX_MENU)
        .map(|(label, value)| option(label, &pick(value)))
        .collect();
    vec![json!({
        "type": "static_select", "action_id": DECIDE,
        "placeholder": {"type": "plain_text", "text": "Decide…"},
        "options": menu,
    })]
}

fn option(label: &str, value: &str) -> Value {
    json!({"text": {"type": "plain_text", "text": cut(label, 75)}, "value": value})
}

/// The modal of "Answer…": the question, the options (a menu, several for a multi-choice)
/// and a text box — the decision of a text question, a note beside a chosen option.
/// `private_metadata` carries the pick and the message it came from, so the submission names
/// its record, round and message.
pub fn modal(r: &Record, channel: &str, ts: &str) -> Value {
    let pick = Pick {
        record: r.id.clone(),
        round: r.folded_round(),
        value: None,
    };
    let question = r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == crate::ledger::EntryKind::Question)
        .map(|e| e.body.as_str())
        .unwrap_or_default();
    let mut blocks = vec![section(&escape(question))];
    let options: Vec<Value> = match r.answer.kind {
        AnswerKind::Confirm => vec![option("Yes", "true"), option("No", "false")],
        AnswerKind::Choice | AnswerKind::MultiChoice => r
            .answer
            .options
            .iter()
            .take(MAX_MENU)
            .map(|o| option(o.shown(), &o.value))
            .collect(),
        AnswerKind::Text => Vec::new(),
    };
    let text_only = options.is_empty();
    if !text_only {
        let kind = if r.answer.kind == AnswerKind::MultiChoice {
            "multi_static_select"
        } else {
            "static_select"
        };
        blocks.push(json!({
            "type": "input", "block_id": CHOICE_BLOCK, "optional": r.answer.allows_other(),
            "label": {"type": "plain_text", "text": "Decision"},
            "element": {"type": kind, "action_id": CHOICE_BLOCK, "options": options,
                        "placeholder": {"type": "plain_text", "text": "Choose…"}},
        }));
    }
    let label = if text_only {
        "Your decision"
    } else if r.answer.allows_other() {
        "A note, or your own answer"
    } else {
        "A note (optional)"
    };
    blocks.push(json!({
        "type": "input", "block_id": NOTE_BLOCK, "optional": !text_only,
        "label": {"type": "plain_text", "text": label},
        "element": {"type": "plain_text_input", "action_id": NOTE_BLOCK, "multiline": true},
    }));
    json!({
        "type": "modal",
        "callback_id": MODAL,
        "private_metadata": format!("{}|{channel}|{ts}", pick.encode()),
        "title": {"type": "plain_text", "text": cut(&format!("Answer {}", r.id), 24)},
        "submit": {"type": "plain_text", "text": "Decide"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks,
    })
}

fn section(text: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": cut(text, 3000)}})
}

/// Slack's mrkdwn takes `&`, `<` and `>` as markup: escaped as its documentation asks.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// At most `max` characters (`…` when cut), as Slack's field limits count them.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(max.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pick_round_trips_and_refuses_what_is_not_one() {
        let p = Pick {
            record: "CLR-42-001".into(),
            round: 2,
            value: Some("redis".into()),
        };
        assert_eq!(p.encode(), "CLR-42-001|2|redis");
        assert_eq!(Pick::decode(&p.encode()), Some(p));
        assert_eq!(Pick::decode("CLR-1-001|1").unwrap().value, None);
        assert!(Pick::decode("CLR-1-001|x").is_none() && Pick::decode("|1").is_none());
    }

    fn record(kind: &str, options: usize) -> Record {
        let opts: Vec<String> = (0..options)
            .map(|i| format!(r#"{{"value":"o{i}","label":"Option <{i}>"}}"#))
            .collect();
        let answer = match (kind, opts.is_empty()) {
            ("text", _) => String::new(),
            (_, true) => format!(r#","answerKind":"{kind}""#),
            _ => format!(r#","answerKind":"{kind}","options":[{}]"#, opts.join(",")),
        };
        let text = format!(
            r#"{{"issueNumber":4,"clarifications":[{{"id":"CLR-4-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"escalated","round":1,"maxRounds":3,"slaMinutes":30{answer},"thread":[{{"round":1,"from":"engineer","type":"question","body":"Which <!here> cache?","timestamp":"2026-11-22T10:00:00.000Z"}},{{"round":1,"from":"monitor","type":"escalation","body":"a person decides","timestamp":"2026-11-22T11:00:00.000Z"}}]}}]}}"#
        );
        crate::ledger::Ledger::parse("issue-4.json", text.as_bytes(), Some(4))
            .unwrap()
            .clarifications
            .remove(0)
    }

    fn event(r: &Record) -> Event {
        let at = crate::time::Timestamp::parse("2026-11-22T11:00:00.000Z").unwrap();
        Event::of_record(
            "evt".into(),
            crate::notify::EventName::Escalated,
            at,
            4,
            r,
            None,
            Some("https://hub.example.com/clarifications/CLR-4-001"),
        )
    }

    fn elements(m: &Message) -> Vec<Value> {
        let blocks = m.blocks.as_array().unwrap();
        let actions = blocks.iter().find(|b| b["type"] == "actions").unwrap();
        actions["elements"].as_array().unwrap().clone()
    }

    #[test]
    fn buttons_up_to_five_options_a_menu_beyond_and_only_answer_for_text() {
        let r = record("choice", 5);
        let m = message(&event(&r), Some(&r));
        let e = elements(&m);
        assert_eq!(e.len(), 7, "five options, Answer…, the thread");
        assert_eq!(e[0]["value"], "CLR-4-001|1|o0");
        assert_eq!(
            e[0]["text"]["text"], "Option <0>",
            "plain text is not markup"
        );
        assert_eq!(e[5]["action_id"], ANSWER);
        assert!(e[6]["url"].as_str().unwrap().ends_with("/CLR-4-001"));
        let text = m.blocks.to_string();
        assert!(text.contains("Which &lt;!here&gt; cache?") && !text.contains("<!here>"));
        let r = record("choice", 6);
        let e = elements(&message(&event(&r), Some(&r)));
        assert_eq!(e[0]["type"], "static_select");
        assert_eq!(e[0]["options"].as_array().unwrap().len(), 6);
        let r = record("confirm", 0);
        let e = elements(&message(&event(&r), Some(&r)));
        assert_eq!(
            (e[0]["value"].as_str(), e[1]["value"].as_str()),
            (Some("CLR-4-001|1|true"), Some("CLR-4-001|1|false"))
        );
        let r = record("text", 0);
        let e = elements(&message(&event(&r), Some(&r)));
        assert_eq!(e[0]["action_id"], ANSWER);
        // Without the record (nobody may decide it now): no buttons that decide.
        let e = elements(&message(&event(&r), None));
        assert_eq!(e.len(), 1);
        assert_eq!(e[0]["action_id"], OPEN);
    }

    #[test]
    fn a_decided_record_says_who_decided_what_and_when_without_buttons() {
        let r = record("choice", 2);
        let mut e = event(&r);
        e.data["status"] = json!("resolved");
        e.data["by"] = json!("alice");
        e.data["label"] = json!("Option <1>");
        let m = message(&e, Some(&r));
        assert_eq!(m.text, "Decided by alice: Option <1> — 11:00 UTC");
        assert!(!m.blocks.to_string().contains("actions"));
        assert!(m.blocks.to_string().contains("Option &lt;1&gt;"));
    }

    #[test]
    fn the_modal_names_its_record_and_message() {
        let r = record("multi_choice", 3);
        let v = modal(&r, "C1", "1.2");
        assert_eq!(v["private_metadata"], "CLR-4-001|1|C1|1.2");
        assert_eq!(v["blocks"][1]["element"]["type"], "multi_static_select");
        assert_eq!(v["blocks"][2]["block_id"], NOTE_BLOCK);
        let t = modal(&record("text", 0), "C1", "1.2");
        assert_eq!(
            t["blocks"][1]["optional"], false,
            "a text answer is the decision"
        );
    }

    #[test]
    fn markup_is_escaped_and_long_text_cut() {
        assert_eq!(escape("<@U1> & <!here>"), "&lt;@U1&gt; &amp; &lt;!here&gt;");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
