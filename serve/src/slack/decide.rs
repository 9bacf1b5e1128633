//! What an interaction does once it is known to be Slack's: who the clicker is, whether the
//! record is still theirs to decide, and the decision through the command layer — the same
//! `decide` the inbox and the answer links run, as that person, `via: "slack"`, `ref:
//! "<sink>/<message ts>"`. A refusal is told to the clicker alone and writes nothing; the
//! message itself is updated by the worker's delivery of the decision, as for a decision
//! taken anywhere else.

use std::sync::Arc;

use agentx_clarify_command::{query, Files as _};
use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::notify::slack_app::{Pick, NOTE_BLOCK};
use agentx_clarify_core::notify::slack_interaction::{From, Interaction};
use agentx_clarify_core::notify::Sink;
use agentx_clarify_core::ops::{Attribution, Verdict};
use agentx_clarify_core::Record;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::answer_view::what_happened;
use crate::hub::App;

pub async fn act(app: &Arc<App>, sink: Sink, interaction: Interaction) -> Response {
    match interaction {
        Interaction::Decide { from, pick } => {
            let outcome = match checked(app, &sink, &from, &pick).await {
                Ok((by, r)) => match verdict_of_value(&r, pick.value.as_deref()) {
                    Ok(v) => decide(app, &sink, &from, by, &r, v).await,
                    Err(why) => Err(why),
                },
                Err(why) => Err(why),
            };
            if let Err(why) = outcome {
                tell(&sink, &from, why).await;
            }
            StatusCode::OK.into_response()
        }
        Interaction::Open {
            from,
            pick,
            trigger,
        } => {
            match checked(app, &sink, &from, &pick).await {
                Ok((_, r)) => open(&sink, &from, trigger, r).await,
                Err(why) => tell(&sink, &from, why).await,
            }
            StatusCode::OK.into_response()
        }
        Interaction::Submit {
            from,
            pick,
            chosen,
            text,
        } => {
            let outcome = match checked(app, &sink, &from, &pick).await {
                Ok((by, r)) => match verdict_of_form(&r, &chosen, text) {
                    Ok(v) => decide(app, &sink, &from, by, &r, v).await,
                    Err(why) => Err(why),
                },
                Err(why) => Err(why),
            };
            match outcome {
                // An empty 200 closes the modal; errors keep it open, said under the text box.
                Ok(()) => StatusCode::OK.into_response(),
                Err(why) => axum::Json(json!({
                    "response_action": "errors",
                    "errors": {NOTE_BLOCK: why},
                }))
                .into_response(),
            }
        }
        Interaction::Ignored => StatusCode::OK.into_response(),
    }
}

/// The clicker's name and the record as it is now, or why they may not act on it: they are
/// no person of the workspace, it was decided, or its question changed since the message.
async fn checked(
    app: &Arc<App>,
    sink: &Sink,
    from: &From,
    pick: &Pick,
) -> Result<(String, Record), String> {
    let (user, id, answer_links, sink_name) = (
        from.user.clone(),
        pick.record.clone(),
        sink.answer_links,
        sink.name.clone(),
    );
    let found = app
        .with_store(move |ws| {
            let config = ws.load_config()?;
            let people = config.people.as_ref().map(|p| &p.people).filter(|p| p.is_defined());
            let by = match people {
                Some(p) => p.by_slack(&user).map(str::to_owned).ok_or_else(|| {
                    format!("Your Slack user ({}) is no person of this workspace: its people.toml needs slack = \"{}\" in your [people.<name>].", shown(&user), shown(&user))
                }),
                // No people: whoever holds the channel's message, as an answer link is.
                None if answer_links => Ok(format!("{sink_name}-link")),
                None => Err(format!("This workspace names no people, and the sink \"{sink_name}\" takes no decisions from Slack (answer_links = false).")),
            };
            let (_, record) = query::show_id(ws, &id)?;
            Ok((by, record))
        })
        .await;
    let (by, r) = found.map_err(|e| format!("Not now: {e}"))?;
    let by = by?;
    if let Some(text) = what_happened(&r) {
        return Err(format!("Already {}", lowered(&text)));
    }
    if r.folded_round() != pick.round {
        return Err(
            "The question changed since this message (a follow-up): open the thread to answer it."
                .into(),
        );
    }
    Ok((by, r))
}

fn shown(text: &str) -> String {
    agentx_clarify_core::error::shown(text)
}

/// "Decided by bob at 02:14: Redis" → "decided by bob …", after "Already".
fn lowered(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// A button's value as the record's kind reads it.
fn verdict_of_value(r: &Record, value: Option<&str>) -> Result<Verdict, String> {
    let value = value.ok_or("The button decides nothing.")?;
    let value = match r.answer.kind {
        AnswerKind::Confirm => json!(value == "true"),
        _ => json!(value),
    };
    Ok(Verdict {
        message: None,
        value: Some(value),
    })
}

/// The modal's options and text as a decision (the inbox form's rule; the command checks it
/// again).
fn verdict_of_form(r: &Record, chosen: &[String], text: Option<String>) -> Result<Verdict, String> {
    let kind = r.answer.kind;
    if kind == AnswerKind::Text || chosen.is_empty() {
        let allowed = kind == AnswerKind::Text || r.answer.allows_other();
        return match text {
            Some(t) if allowed => Ok(Verdict {
                message: Some(t),
                value: None,
            }),
            _ if kind == AnswerKind::Text => Err("Write your decision first.".into()),
            _ => Err("Choose one of the options first.".into()),
        };
    }
    let value = match (kind, chosen) {
        (AnswerKind::MultiChoice, all) => json!(all),
        (AnswerKind::Confirm, [one]) => json!(one == "true"),
        (_, [one]) => json!(one),
        _ => return Err("Choose one option.".into()),
    };
    Ok(Verdict {
        message: text,
        value: Some(value),
    })
}

/// Decides `r` as `by`; the refusal's text (a non-decider, a value that is not an option, a
/// decision taken meanwhile) otherwise.
async fn decide(
    app: &Arc<App>,
    sink: &Sink,
    from: &From,
    by: String,
    r: &Record,
    verdict: Verdict,
) -> Result<(), String> {
    let attribution = Attribution {
        by: by.clone(),
        via: "slack".into(),
        reference: Some(format!(
            "{}/{}",
            sink.name,
            from.ts.as_deref().unwrap_or("modal")
        )),
    };
    let id = r.id.clone();
    let done = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            agentx_clarify_command::decide(
                ws,
                now,
                &id,
                verdict.message,
                verdict.value,
                &attribution,
            )
        })
        .await;
    let refused = match done {
        Ok(m) => match m.error {
            None => {
                crate::log::line(&format!(
                    "Slack: {by} decided {} (sink {})",
                    r.id, sink.name
                ));
                return Ok(());
            }
            Some(e) => e,
        },
        Err(e) => e,
    };
    // Decided by someone else meanwhile: say so, as the later click of a link does.
    let id = r.id.clone();
    let now = app.with_store(move |ws| query::show_id(ws, &id)).await;
    match now.ok().and_then(|(_, r)| what_happened(&r)) {
        Some(text) => Err(format!("Already {}", lowered(&text))),
        None => Err(refused.to_string()),
    }
}

/// Tells the clicker alone why nothing happened (`chat.postEphemeral`), best effort: Slack
/// shows nothing for a click that only answers 200.
async fn tell(sink: &Sink, from: &From, text: String) {
    let Some(channel) = from.channel.clone() else {
        return;
    };
    let (sink, user) = (sink.clone(), from.user.clone());
    let sent = tokio::task::spawn_blocking(move || {
        agentx_clarify_notify::slack::ephemeral(&sink, &channel, &user, &text)
    })
    .await;
    if let Ok(Err(e)) = sent {
        crate::log::line(&format!("Slack chat.postEphemeral failed: {e}"));
    }
}

/// Opens the answer modal on `trigger` (valid three seconds: opened at once).
async fn open(sink: &Sink, from: &From, trigger: String, r: Record) {
    let channel = from.channel.clone().unwrap_or_default();
    let ts = from.ts.clone().unwrap_or_default();
    let s = sink.clone();
    let opened = tokio::task::spawn_blocking(move || {
        agentx_clarify_notify::slack::open_modal(&s, &trigger, &r, &channel, &ts)
    })
    .await;
    if let Ok(Err(e)) = opened {
        crate::log::line(&format!("Slack views.open failed: {e}"));
        tell(
            sink,
            from,
            "The answer form could not be opened; open the thread instead.".into(),
        )
        .await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn already_reads_as_one_sentence() {
        assert_eq!(
            lowered("Decided by bob at 02:14: Redis"),
            "decided by bob at 02:14: Redis"
        );
    }
}
