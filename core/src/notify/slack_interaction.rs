//! What Slack sends to `/slack/interactions` (docs/notifications.md, "Slack as an app"), read
//! into what it asks for: a button or menu that decides, the "Answer…" button (open the
//! modal), or the modal's submission. The signature is checked by the shell before this reads
//! a byte; this only reads, and refuses what is not one of ours.

use serde::Deserialize;
use serde_json::Value;

use crate::notify::slack_app::{Pick, ANSWER, CHOICE_BLOCK, DECIDE, MODAL, NOTE_BLOCK};

/// The message an interaction came from: where to answer the clicker (`chat.postEphemeral`)
/// and which message is the record's.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct From {
    /// The Slack user who clicked or submitted (`U…`).
    pub user: String,
    pub channel: Option<String>,
    pub ts: Option<String>,
}

/// One interaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Interaction {
    /// A button or a menu option: decide `pick.value`.
    Decide { from: From, pick: Pick },
    /// "Answer…": open the modal with `trigger` (Slack's `trigger_id`, valid 3 s).
    Open {
        from: From,
        pick: Pick,
        trigger: String,
    },
    /// The modal submitted: the options chosen (none for a text answer) and the text.
    Submit {
        from: From,
        pick: Pick,
        chosen: Vec<String>,
        text: Option<String>,
    },
    /// Something of no consequence (the thread's link clicked, a modal closed).
    Ignored,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type")]
    kind: String,
    user: User,
    #[serde(default)]
    trigger_id: Option<String>,
    #[serde(default)]
    channel: Option<Id>,
    #[serde(default)]
    container: Option<Container>,
    #[serde(default)]
    actions: Vec<Action>,
    #[serde(default)]
    view: Option<View>,
}

#[derive(Deserialize)]
struct User {
    id: String,
}

#[derive(Deserialize)]
struct Id {
    id: String,
}

#[derive(Deserialize)]
struct Container {
    #[serde(default)]
    message_ts: Option<String>,
    #[serde(default)]
    channel_id: Option<String>,
}

#[derive(Deserialize)]
struct Action {
    action_id: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    selected_option: Option<Chosen>,
}

#[derive(Deserialize)]
struct Chosen {
    value: String,
}

#[derive(Deserialize)]
struct View {
    #[serde(default)]
    callback_id: String,
    #[serde(default)]
    private_metadata: String,
    #[serde(default)]
    state: Option<ViewState>,
}

#[derive(Deserialize)]
struct ViewState {
    #[serde(default)]
    values: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Input>>,
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    selected_option: Option<Chosen>,
    #[serde(default)]
    selected_options: Vec<Chosen>,
}

/// Reads one interaction payload (the JSON of the form's `payload` field).
pub fn read(payload: &Value) -> Result<Interaction, String> {
    let p: Payload = serde_json::from_value(payload.clone())
        .map_err(|e| format!("not a Slack interaction payload: {e}"))?;
    let container = p.container.as_ref();
    let from = From {
        user: p.user.id.clone(),
        channel: p
            .channel
            .as_ref()
            .map(|c| c.id.clone())
            .or_else(|| container.and_then(|c| c.channel_id.clone())),
        ts: container.and_then(|c| c.message_ts.clone()),
    };
    match p.kind.as_str() {
        "block_actions" => action(&p, from),
        "view_submission" => submission(&p, from),
        _ => Ok(Interaction::Ignored),
    }
}

fn action(p: &Payload, from: From) -> Result<Interaction, String> {
    let Some(a) = p.actions.first() else {
        return Ok(Interaction::Ignored);
    };
    let chosen = a
        .selected_option
        .as_ref()
        .map(|o| o.value.as_str())
        .or(a.value.as_deref());
    let pick = || {
        chosen
            .and_then(Pick::decode)
            .ok_or_else(|| String::from("the action names no record"))
    };
    if a.action_id == ANSWER {
        let trigger = p
            .trigger_id
            .clone()
            .ok_or("no trigger_id to open a modal")?;
        return Ok(Interaction::Open {
            from,
            pick: pick()?,
            trigger,
        });
    }
    if a.action_id == DECIDE || a.action_id.starts_with(&format!("{DECIDE}-")) {
        let pick = pick()?;
        if pick.value.is_none() {
            return Err("the action decides no value".into());
        }
        return Ok(Interaction::Decide { from, pick });
    }
    Ok(Interaction::Ignored)
}

fn submission(p: &Payload, mut from: From) -> Result<Interaction, String> {
    let Some(view) = p.view.as_ref().filter(|v| v.callback_id == MODAL) else {
        return Ok(Interaction::Ignored);
    };
    // `<record>|<round>|<channel>|<ts>`: the message the modal was opened from.
    let mut parts = view.private_metadata.splitn(4, '|');
    let (record, round) = (parts.next(), parts.next());
    let pick = Pick::decode(&format!("{}|{}", record.unwrap_or(""), round.unwrap_or("")))
        .ok_or("the modal names no record")?;
    from.channel = parts.next().filter(|c| !c.is_empty()).map(str::to_owned);
    from.ts = parts.next().filter(|t| !t.is_empty()).map(str::to_owned);
    let values = view.state.as_ref().map(|s| &s.values);
    let input = |block: &str| values.and_then(|v| v.get(block)).and_then(|b| b.get(block));
    let chosen = input(CHOICE_BLOCK)
        .map(|i| {
            let mut all: Vec<String> = i.selected_options.iter().map(|o| o.value.clone()).collect();
            all.extend(i.selected_option.as_ref().map(|o| o.value.clone()));
            all
        })
        .unwrap_or_default();
    let text = input(NOTE_BLOCK)
        .and_then(|i| i.value.as_ref())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    Ok(Interaction::Submit {
        from,
        pick,
        chosen,
        text,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_button_a_menu_the_answer_button_and_a_submission_are_read() {
        let click = json!({"type": "block_actions", "user": {"id": "U1"}, "trigger_id": "t",
            "channel": {"id": "C1"}, "container": {"message_ts": "1.2"},
            "actions": [{"action_id": "agentx-decide-redis", "value": "CLR-4-001|1|redis"}]});
        let Interaction::Decide { from, pick } = read(&click).unwrap() else {
            panic!()
        };
        assert_eq!(
            (from.user.as_str(), from.ts.as_deref()),
            ("U1", Some("1.2"))
        );
        assert_eq!(pick.value.as_deref(), Some("redis"));
        let menu = json!({"type": "block_actions", "user": {"id": "U1"},
            "actions": [{"action_id": "agentx-decide", "selected_option": {"value": "CLR-4-001|1|lru"}}]});
        assert!(
            matches!(read(&menu).unwrap(), Interaction::Decide { pick, .. } if pick.value.as_deref() == Some("lru"))
        );
        let open = json!({"type": "block_actions", "user": {"id": "U1"}, "trigger_id": "tr",
            "actions": [{"action_id": "agentx-answer", "value": "CLR-4-001|1"}]});
        assert!(
            matches!(read(&open).unwrap(), Interaction::Open { trigger, .. } if trigger == "tr")
        );
        let submit = json!({"type": "view_submission", "user": {"id": "U2"}, "view": {
            "callback_id": "agentx-answer", "private_metadata": "CLR-4-001|1|C1|1.2",
            "state": {"values": {"choice": {"choice": {"selected_option": {"value": "redis"}}},
                                 "note": {"note": {"value": "  fast  "}}}}}});
        let Interaction::Submit {
            from, chosen, text, ..
        } = read(&submit).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (from.channel.as_deref(), from.ts.as_deref()),
            (Some("C1"), Some("1.2"))
        );
        assert_eq!(
            (chosen, text.as_deref()),
            (vec!["redis".to_owned()], Some("fast"))
        );
        let link = json!({"type": "block_actions", "user": {"id": "U1"},
            "actions": [{"action_id": "agentx-open"}]});
        assert_eq!(read(&link).unwrap(), Interaction::Ignored);
        assert!(read(&json!({"type": "block_actions"})).is_err());
        let no_value = json!({"type": "block_actions", "user": {"id": "U1"},
            "actions": [{"action_id": "agentx-decide", "value": "CLR-4-001|1"}]});
        assert!(read(&no_value).is_err());
    }
}
