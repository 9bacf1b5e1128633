//! The event a sink is told, and what each kind of sink sends for it.
//!
//! Pure: the shell gives the time, the event's id, the public URL and (for a webhook) signs the
//! body this module renders. Every sink of one event sends the same facts.

use serde_json::{json, Map, Value};

use crate::ledger::{EntryKind, Record};
use crate::notify::config::{EventName, Sink, SinkKind};
use crate::time::Timestamp;

/// One event about one record.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Stable across retries: the receiver deduplicates by it (`webhook-id`).
    pub id: String,
    pub name: EventName,
    pub timestamp: Timestamp,
    /// The `data` object (§ notifications in docs/notifications.md).
    pub data: Value,
}

/// What sends an event where; an HTTP request or a program, fully rendered.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    Http {
        url: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    Command {
        argv: Vec<String>,
        stdin: Vec<u8>,
    },
    /// A mail (`multipart/alternative`); the shell adds the addresses and its ids. `thread`
    /// names the record, so one record's mails thread together (`In-Reply-To`).
    Mail {
        subject: String,
        text: String,
        html: String,
        thread: String,
    },
    /// A Slack app's message; the shell posts it to the sink's channel with its bot token
    /// (or updates the record's earlier messages, `chat.update`).
    Slack(crate::notify::slack_app::Message),
}

impl Event {
    /// The event of `name` about `record` of `issue`. `reason` is why (an escalation's reason,
    /// a route failure's cause); `url` the thread's page, when the hub has a public URL.
    pub fn of_record(
        id: String,
        name: EventName,
        timestamp: Timestamp,
        issue: u32,
        record: &Record,
        reason: Option<&str>,
        url: Option<&str>,
    ) -> Event {
        let last = |kind: EntryKind| {
            record
                .thread
                .iter()
                .rev()
                .find(|e| e.kind == kind)
                .map(|e| e.body.clone())
        };
        let reason = reason
            .map(str::to_owned)
            .or_else(|| last(EntryKind::Escalation));
        let answer = last(EntryKind::Resolution).or_else(|| last(EntryKind::Answer));
        // Who gave that answer or decision (the person behind `human`), and the option chosen.
        let settled = record
            .thread
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EntryKind::Resolution | EntryKind::Answer));
        let by = settled.map(|e| {
            e.extra
                .get("by")
                .and_then(Value::as_str)
                .unwrap_or(&e.from)
                .to_owned()
        });
        let value = settled.and_then(|e| e.value.clone());
        let label = value.as_ref().map(|v| record.answer.render(v));
        let mut data = Map::new();
        data.insert("id".into(), json!(record.id));
        data.insert("issue".into(), json!(issue));
        data.insert("from".into(), json!(record.from));
        data.insert("to".into(), json!(record.to));
        data.insert("topic".into(), json!(record.topic));
        data.insert("status".into(), json!(record.status.as_str()));
        data.insert("severity".into(), json!(record.severity().as_str()));
        data.insert("reason".into(), json!(reason));
        data.insert("question".into(), json!(last(EntryKind::Question)));
        data.insert("answer".into(), json!(answer));
        data.insert("by".into(), json!(by));
        data.insert("value".into(), json!(value));
        data.insert("label".into(), json!(label));
        data.insert("answerKind".into(), json!(record.answer.kind.as_str()));
        data.insert(
            "options".into(),
            if record.answer.options.is_empty() {
                Value::Null
            } else {
                json!(record.answer.options)
            },
        );
        data.insert("url".into(), json!(url));
        // Whom it is assigned to and, where several must agree, how far they are (docs/
        // protocol.md §37): only when people are defined, so other events read as before.
        if let Some(names) = crate::people::assigned(record) {
            data.insert("assigned".into(), json!(names));
        }
        if let Some(s) = crate::people::summary(record) {
            data.insert("approvals".into(), json!(s));
        }
        Event {
            id,
            name,
            timestamp,
            data: Value::Object(data),
        }
    }

    /// `agentx notify test`: an event that names no record.
    pub fn test(id: String, timestamp: Timestamp, sink: &str) -> Event {
        Event {
            id,
            name: EventName::Test,
            timestamp,
            data: json!({
                "id": null, "issue": null, "from": null, "to": null,
                "topic": format!("Test of the notification sink \"{sink}\""),
                "status": null, "severity": null, "reason": "agentx notify test",
                "question": null, "answer": null, "by": null, "value": null, "label": null,
                "answerKind": null, "options": null, "url": null, "actions": [],
            }),
        }
    }

    /// `clarification.<event>`.
    pub fn type_name(&self) -> String {
        format!("clarification.{}", self.name.as_str())
    }

    /// The event as JSON: `{"type", "timestamp", "data"}`.
    pub fn json(&self) -> Value {
        json!({
            "type": self.type_name(),
            "timestamp": self.timestamp.to_string(),
            "data": self.data,
        })
    }

    /// One line for people: `CLR-42-001 escalated: Cache layer (engineer → architect)`; a
    /// decision says who took it and what: `CLR-42-001 decided by alice: In-process LRU`.
    pub fn headline(&self) -> String {
        let text = |k: &str| self.data.get(k).and_then(Value::as_str).unwrap_or("");
        match self.name {
            EventName::Test => text("topic").to_owned(),
            EventName::Resolved => {
                let what = match text("label") {
                    "" => first_line(text("answer"), 80),
                    label => label.to_owned(),
                };
                format!("{} decided by {}: {what}", text("id"), text("by"))
            }
            name => format!(
                "{} {}: {} ({} → {})",
                text("id"),
                name.as_str(),
                text("topic"),
                text("from"),
                text("to")
            ),
        }
    }

    fn detail(&self) -> String {
        let text = |k: &str| self.data.get(k).and_then(Value::as_str);
        let mut lines = Vec::new();
        if self.name == EventName::Resolved {
            // The follow-up is short: what was decided, and the note beside it.
            if let (Some(a), Some(l)) = (text("answer"), text("label")) {
                if a.trim() != l {
                    lines.push(format!("Note: {a}"));
                }
            }
            lines.push(format!("Topic: {}", text("topic").unwrap_or_default()));
            return lines.join("\n");
        }
        if let Some(q) = text("question") {
            lines.push(format!("Question: {q}"));
        }
        // The options, so the person can decide from the push itself which one it is.
        if let Some(options) = self.data.get("options").and_then(Value::as_array) {
            lines.push(String::from("Options:"));
            for o in options {
                let value = o.get("value").and_then(Value::as_str).unwrap_or_default();
                let label = o.get("label").and_then(Value::as_str).unwrap_or(value);
                lines.push(format!("• {label}"));
            }
        }
        if let Some(a) = text("answer") {
            lines.push(format!("Answer: {a}"));
        }
        if let Some(r) = text("reason") {
            lines.push(format!("Reason: {r}"));
        }
        lines.join("\n")
    }

    /// What `sink` sends for this event. The webhook's signature headers are added by the
    /// shell that holds the secret ([`Outgoing::Http`]'s headers then gain three).
    pub fn outgoing(&self, sink: &Sink) -> Outgoing {
        let url = sink.url.clone().unwrap_or_default();
        let link = self.data.get("url").and_then(Value::as_str);
        match sink.kind {
            SinkKind::Webhook => Outgoing::Http {
                url,
                headers: vec![("content-type".into(), "application/json".into())],
                body: self.json().to_string().into_bytes(),
            },
            SinkKind::Slack => {
                let headline = self.headline();
                let mut text = format!("*{}*", escape_slack(&headline));
                let detail = self.detail();
                if !detail.is_empty() {
                    text.push('\n');
                    text.push_str(&escape_slack(&detail));
                }
                let mut blocks = vec![json!({
                    "type": "section",
                    "text": {"type": "mrkdwn", "text": text},
                })];
                if let Some(link) = link {
                    blocks.push(json!({
                        "type": "actions",
                        "elements": [{
                            "type": "button",
                            "text": {"type": "plain_text", "text": "Open the thread"},
                            "url": link,
                        }],
                    }));
                }
                let fallback = match link {
                    Some(link) => format!("{headline} {link}"),
                    None => headline,
                };
                Outgoing::Http {
                    url,
                    headers: vec![("content-type".into(), "application/json".into())],
                    body: json!({"text": fallback, "blocks": blocks})
                        .to_string()
                        .into_bytes(),
                }
            }
            SinkKind::Ntfy => {
                let blocking_escalation = self.name == EventName::Escalated
                    && self.data.get("severity").and_then(Value::as_str) == Some("BLOCK");
                let priority = if blocking_escalation {
                    "high"
                } else {
                    "default"
                };
                // A decision's follow-up replaces the push about that record on phones whose
                // ntfy knows sequence ids (2.16+; older ones show it as a new message).
                let tags = if self.name == EventName::Resolved {
                    "agentx,resolved,white_check_mark".to_owned()
                } else {
                    format!("agentx,{}", self.name.as_str())
                };
                let mut headers = vec![
                    ("Title".to_owned(), encoded_word(&self.headline())),
                    ("Priority".to_owned(), priority.to_owned()),
                    ("Tags".to_owned(), tags),
                ];
                if let Some(id) = self.data.get("id").and_then(Value::as_str) {
                    if is_sequence_id(id) {
                        headers.push(("X-Sequence-ID".to_owned(), id.to_owned()));
                    }
                }
                if let Some(link) = link {
                    headers.push(("Click".to_owned(), header_text(link)));
                }
                if let Some(actions) = ntfy_actions(&self.data) {
                    headers.push(("Actions".to_owned(), actions));
                }
                let detail = self.detail();
                let body = if detail.is_empty() {
                    self.headline()
                } else {
                    detail
                };
                Outgoing::Http {
                    url,
                    headers,
                    body: body.into_bytes(),
                }
            }
            SinkKind::Command => Outgoing::Command {
                argv: sink.command.clone(),
                stdin: self.json().to_string().into_bytes(),
            },
            SinkKind::Email => self.mail(link),
            // Without the record: a message that tells (the deliverer renders the buttons of
            // a record still to decide, `slack_app::message`).
            SinkKind::SlackApp => Outgoing::Slack(crate::notify::slack_app::message(self, None)),
        }
    }

    /// The mail of this event: the headline as the subject; the question, options and reason;
    /// the answer links (each option's, then the answer page) and the thread's link. The
    /// HTML part escapes every ledger text.
    fn mail(&self, link: Option<&str>) -> Outgoing {
        let headline = self.headline();
        let detail = self.detail();
        let actions: Vec<(String, String)> = self
            .data
            .get("actions")
            .and_then(Value::as_array)
            .map(|all| {
                let mut pairs: Vec<(String, String)> = all
                    .iter()
                    .filter_map(|a| {
                        let label = a.get("label").and_then(Value::as_str)?;
                        let url = a.get("url").and_then(Value::as_str)?;
                        Some((label.to_owned(), url.to_owned()))
                    })
                    .collect();
                // The options first, the page ("Answer…") last: the usual choice on top.
                if !pairs.is_empty() {
                    let page = pairs.remove(0);
                    pairs.push(page);
                }
                pairs
            })
            .unwrap_or_default();
        let mut text = format!("{headline}\n\n{detail}\n");
        let mut html = format!(
            "<p><strong>{}</strong></p><p>{}</p>",
            esc_html(&headline),
            esc_html(&detail).replace('\n', "<br>")
        );
        if !actions.is_empty() {
            text.push_str("\nDecide (opening a link shows the question; its button decides):\n");
            html.push_str(
                "<p>Decide (opening a link shows the question; its button decides):</p><ul>",
            );
            for (label, url) in &actions {
                text.push_str(&format!("  {label}: {url}\n"));
                html.push_str(&format!(
                    "<li><a href=\"{}\">{}</a></li>",
                    esc_html(url),
                    esc_html(label)
                ));
            }
            html.push_str("</ul>");
        }
        if let Some(link) = link {
            text.push_str(&format!("\nThe thread: {link}\n"));
            html.push_str(&format!(
                "<p><a href=\"{}\">Open the thread</a></p>",
                esc_html(link)
            ));
        }
        let thread = self
            .data
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or(&self.id)
            .to_owned();
        Outgoing::Mail {
            subject: headline,
            text,
            html,
            thread,
        }
    }
}

/// Text for HTML, element or quoted attribute.
fn esc_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// ntfy's `Actions` header (docs.ntfy.sh, "Action buttons") from `data.actions`: one `http`
/// POST per option when there are at most three (a tap on the lock screen decides), else a
/// `view` of the answer page. `None` without answer links.
fn ntfy_actions(data: &Value) -> Option<String> {
    let actions = data.get("actions").and_then(Value::as_array)?;
    let field = |a: &Value, k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let options: Vec<&Value> = actions
        .iter()
        .filter(|a| a.get("value").is_some())
        .collect();
    let text = if !options.is_empty() && options.len() <= 3 {
        options
            .iter()
            .map(|a| {
                format!(
                    "http, {}, {}, method=POST, clear=true",
                    ntfy_label(&field(a, "label")),
                    field(a, "url")
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        let page = actions.iter().find(|a| a.get("value").is_none())?;
        format!("view, Answer, {}", field(page, "url"))
    };
    Some(text)
}

/// A label fit for ntfy's simple action format: printable ASCII without its separators
/// (`,` `;` and quotes), at most 40 characters; never empty.
fn ntfy_label(label: &str) -> String {
    let kept: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && !matches!(c, ',' | ';' | '"' | '\'' | '=') || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let kept = kept.trim().to_owned();
    if kept.is_empty() {
        "Answer".into()
    } else {
        kept
    }
}

/// Slack's mrkdwn takes `&`, `<` and `>` as markup: escaped as its documentation asks, so a
/// question cannot make a link or a mention.
fn escape_slack(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The first line of `text`, at most `max` characters (`…` when cut).
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// ntfy's sequence ids: `[-_A-Za-z0-9]{1,64}` (a record id always is one).
fn is_sequence_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A header value that keeps every character: plain ASCII as it is, anything else as RFC 2047
/// encoded words (`=?UTF-8?B?…?=`, each under RFC 2047's 75 characters, whole characters per
/// word), which ntfy decodes (docs.ntfy.sh, "Message title"). One line, at most 250
/// characters of text.
pub fn encoded_word(text: &str) -> String {
    use base64::Engine as _;
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(250)
        .collect();
    if line.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) && !line.contains("=?") {
        return line;
    }
    // 45 bytes of UTF-8 are 60 characters of base64: 72 with `=?UTF-8?B?` and `?=`.
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in line.chars() {
        if chunk.len() + c.len_utf8() > 45 {
            words.push(std::mem::take(&mut chunk));
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(chunk);
    }
    words
        .iter()
        .map(|w| {
            format!(
                "=?UTF-8?B?{}?=",
                base64::engine::general_purpose::STANDARD.encode(w.as_bytes())
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A header value: one line of visible ASCII (HTTP headers carry no newline, and ntfy's
/// plain headers are ASCII; other characters become `?`).
fn header_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else if c.is_whitespace() {
                ' '
            } else {
                '?'
            }
        })
        .take(250)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::config::parse_sinks;

    fn record() -> Record {
        let text = r#"{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache <layer>","blocking":true,"status":"escalated","round":1,"maxRounds":3,"slaMinutes":30,"thread":[{"round":1,"from":"engineer","type":"question","body":"Redis or LRU?","timestamp":"2026-11-22T10:00:00.000Z"},{"round":1,"from":"monitor","type":"escalation","body":"SLA expired after 1 retry","timestamp":"2026-11-22T11:00:00.000Z"}]}]}"#;
        let ledger = crate::ledger::Ledger::parse("issue-42.json", text.as_bytes(), Some(42));
        ledger
            .ok()
            .and_then(|l| l.clarifications.into_iter().next())
            .unwrap_or_else(|| unreachable!("the fixture parses"))
    }

    fn sink(kind: &str) -> Sink {
        let text = format!(
            "[[notify]]\nname = \"s\"\nkind = \"{kind}\"\n{}",
            if kind == "command" {
                "command = [\"cat\"]\n"
            } else {
                "url = \"https://hooks.example.com/T/B/secret\"\n"
            }
        );
        parse_sinks("config.toml", text.as_bytes())
            .ok()
            .and_then(|s| s.into_iter().next())
            .unwrap_or_else(|| unreachable!("the fixture parses"))
    }

    fn event() -> Event {
        let now = Timestamp::parse("2026-11-22T11:00:00.000Z").unwrap_or_else(|| unreachable!());
        Event::of_record(
            "evt_1".into(),
            EventName::Escalated,
            now,
            42,
            &record(),
            None,
            Some("https://hub.example.com/clarifications/CLR-42-001"),
        )
    }

    #[test]
    fn ntfy_gets_a_post_per_option_up_to_three_else_a_view() {
        let actions = |n: usize| {
            let mut e = event();
            let mut all = vec![json!({"label": "Answer…", "url": "https://h/a/page"})];
            for i in 0..n {
                all.push(json!({"label": format!("Opt, \"{i}\"; é"), "value": i, "url": format!("https://h/a/{i}")}));
            }
            e.data["actions"] = Value::Array(all);
            match e.outgoing(&sink("ntfy")) {
                Outgoing::Http { headers, .. } => headers
                    .into_iter()
                    .find(|(k, _)| k == "Actions")
                    .map(|(_, v)| v),
                Outgoing::Command { .. } | Outgoing::Mail { .. } | Outgoing::Slack(_) => None,
            }
        };
        assert_eq!(
            actions(2).as_deref(),
            Some("http, Opt_ _0__ _, https://h/a/0, method=POST, clear=true; http, Opt_ _1__ _, https://h/a/1, method=POST, clear=true")
        );
        assert_eq!(
            actions(4).as_deref(),
            Some("view, Answer, https://h/a/page")
        );
        assert_eq!(
            actions(0).as_deref(),
            Some("view, Answer, https://h/a/page")
        );
        // No answer links: no Actions header (the Click opens the thread).
        let plain = event().outgoing(&sink("ntfy"));
        assert!(
            matches!(plain, Outgoing::Http { headers, .. } if !headers.iter().any(|(k, _)| k == "Actions"))
        );
    }

    #[test]
    fn the_event_carries_the_record() {
        let e = event().json();
        assert_eq!(e["type"], "clarification.escalated");
        assert_eq!(e["timestamp"], "2026-11-22T11:00:00.000Z");
        assert_eq!(e["data"]["id"], "CLR-42-001");
        assert_eq!(e["data"]["severity"], "BLOCK");
        assert_eq!(e["data"]["question"], "Redis or LRU?");
        assert_eq!(e["data"]["reason"], "SLA expired after 1 retry");
        assert_eq!(e["data"]["answer"], Value::Null);
        assert_eq!(e["data"]["answerKind"], "text");
    }

    #[test]
    fn each_kind_renders_its_request() {
        let e = event();
        let Outgoing::Http { body, .. } = e.outgoing(&sink("webhook")) else {
            unreachable!()
        };
        assert_eq!(serde_json::from_slice::<Value>(&body).ok(), Some(e.json()));

        let Outgoing::Http { body, .. } = e.outgoing(&sink("slack")) else {
            unreachable!()
        };
        let slack: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert!(slack["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap_or("")
            .contains("Cache &lt;layer&gt;"));
        assert_eq!(
            slack["blocks"][1]["elements"][0]["url"],
            "https://hub.example.com/clarifications/CLR-42-001"
        );

        let Outgoing::Http { headers, body, .. } = e.outgoing(&sink("ntfy")) else {
            unreachable!()
        };
        assert!(headers.contains(&("Priority".into(), "high".into())));
        assert!(headers.contains(&(
            "Click".into(),
            "https://hub.example.com/clarifications/CLR-42-001".into()
        )));
        assert!(String::from_utf8_lossy(&body).contains("Question: Redis or LRU?"));

        let Outgoing::Command { argv, stdin } = e.outgoing(&sink("command")) else {
            unreachable!()
        };
        assert_eq!(argv, ["cat"]);
        assert_eq!(serde_json::from_slice::<Value>(&stdin).ok(), Some(e.json()));
    }

    #[test]
    fn ntfy_titles_keep_every_character_and_a_decision_replaces_the_push() {
        use base64::Engine as _;
        let decode = |header: &str| -> String {
            header
                .split(' ')
                .map(|w| {
                    let b64 = w
                        .strip_prefix("=?UTF-8?B?")
                        .and_then(|w| w.strip_suffix("?="))
                        .unwrap_or_else(|| unreachable!("{w}"));
                    String::from_utf8(
                        base64::engine::general_purpose::STANDARD
                            .decode(b64)
                            .unwrap_or_default(),
                    )
                    .unwrap_or_default()
                })
                .collect()
        };
        let long =
            "Café ☕ — naïve résumé, 日本語のタイトル, and a long tail to split into several words";
        let encoded = encoded_word(long);
        assert!(
            encoded.is_ascii() && encoded.split(' ').all(|w| w.len() <= 75),
            "{encoded}"
        );
        assert_eq!(decode(&encoded), long);
        assert_eq!(encoded_word("plain ascii"), "plain ascii");

        let e = event();
        let Outgoing::Http { headers, body, .. } = e.outgoing(&sink("ntfy")) else {
            unreachable!()
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            decode(&header("Title")),
            "CLR-42-001 escalated: Cache <layer> (engineer → architect)"
        );
        assert_eq!(header("X-Sequence-ID"), "CLR-42-001");
        let _ = body;

        // The decision's follow-up: who decided what, on the same sequence id.
        let text = r#"{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"answerKind":"choice","options":[{"value":"redis","label":"Redis"},{"value":"lru","label":"In-process LRU"}],"allowOther":false,"thread":[{"round":1,"from":"engineer","type":"question","body":"Which cache?","timestamp":"2026-11-22T10:00:00.000Z"},{"round":1,"from":"human","type":"resolution","body":"see ADR-7","value":"lru","timestamp":"2026-11-22T11:00:00.000Z","by":"alice","via":"web"}]}]}"#;
        let record = crate::ledger::Ledger::parse("issue-42.json", text.as_bytes(), Some(42))
            .ok()
            .and_then(|l| l.clarifications.into_iter().next())
            .unwrap_or_else(|| unreachable!());
        let now = Timestamp::parse("2026-11-22T11:00:00.000Z").unwrap_or_else(|| unreachable!());
        let decided = Event::of_record(
            "evt_2".into(),
            EventName::Resolved,
            now.clone(),
            42,
            &record,
            None,
            None,
        );
        assert_eq!(
            decided.headline(),
            "CLR-42-001 decided by alice: In-process LRU"
        );
        assert_eq!(decided.json()["data"]["by"], "alice");
        assert_eq!(decided.json()["data"]["value"], "lru");
        let Outgoing::Http { headers, body, .. } = decided.outgoing(&sink("ntfy")) else {
            unreachable!()
        };
        assert!(headers.contains(&("X-Sequence-ID".into(), "CLR-42-001".into())));
        assert_eq!(
            String::from_utf8_lossy(&body),
            "Note: see ADR-7\nTopic: Cache"
        );
        // An escalation's push lists the options.
        let asked = Event::of_record(
            "evt_3".into(),
            EventName::Escalated,
            now,
            42,
            &record,
            Some("a person decides"),
            None,
        );
        let Outgoing::Http { body, .. } = asked.outgoing(&sink("ntfy")) else {
            unreachable!()
        };
        assert!(String::from_utf8_lossy(&body).contains("Options:\n• Redis\n• In-process LRU"));
    }
}
