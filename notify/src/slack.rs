//! The `slack-app` sink's side of Slack's Web API (docs/notifications.md, "Slack as an app"):
//! `chat.postMessage` of a record's Block Kit message, `chat.update` of every message of a
//! record once it is decided — here, in the inbox or anywhere else, so no card in the channel
//! offers a decision that was already taken — `views.open` of the answer modal and
//! `chat.postEphemeral` to tell one clicker why nothing happened; and the check of an
//! interaction's `X-Slack-Signature`.
//!
//! The messages posted are kept in the `slack-messages` state document (a file of the state
//! directory or a row of PostgreSQL), so the server that sees the decision updates the message
//! another one posted. The bot token is read from the sink's `token_env` at each call and
//! never appears in an error.

use agentx_clarify_command::store::docs::{self, SLACK_MESSAGES};
use agentx_clarify_command::store::State;
use agentx_clarify_core::notify::config::SlackApp;
use agentx_clarify_core::notify::slack_app::{self, Message};
use agentx_clarify_core::notify::{Event, Sink};
use agentx_clarify_core::{ClarifyError, Config, Record};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::SendError;

const LOCK_OWNER: &str = "agentx-slack";
/// How old an interaction's timestamp may be (Slack's own advice: five minutes).
pub const MAX_AGE_SECS: i64 = 300;
/// Messages of records closed this long ago are forgotten.
const KEPT_MS: i64 = 7 * 24 * 3_600_000;

/// One message a sink posted about a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Posted {
    pub sink: String,
    pub record: String,
    pub channel: String,
    pub ts: String,
    /// Epoch ms of posting.
    pub at: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Messages {
    #[serde(default)]
    messages: Vec<Posted>,
}

fn settings(sink: &Sink) -> Result<&SlackApp, SendError> {
    sink.slack
        .as_ref()
        .ok_or_else(|| SendError::Config(format!("\"{}\" is not a slack-app sink", sink.name)))
}

/// A variable the sink names, set and not blank.
fn var(name: &str, what: &str, sink: &str) -> Result<String, SendError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
        _ => Err(SendError::Config(format!(
            "the {what} of sink \"{sink}\" is read from the environment variable {name}, which is not set"
        ))),
    }
}

/// The signing secret of `sink`, for `/slack/interactions`.
pub fn signing_secret(sink: &Sink) -> Result<String, SendError> {
    let s = settings(sink)?;
    var(&s.signing_secret_env, "signing secret", &sink.name)
}

/// One Web API call: `POST <api>/<method>` with the bot token, JSON both ways. Slack answers
/// 200 with `ok: false` for a refusal: that is a failure too, with Slack's error code.
pub fn call(sink: &Sink, method: &str, body: &Value) -> Result<Value, SendError> {
    let s = settings(sink)?;
    let token = var(&s.token_env, "bot token", &sink.name)?;
    let client = reqwest::blocking::Client::builder()
        .timeout(crate::HTTP_TIMEOUT)
        .connect_timeout(crate::HTTP_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("agentx-clarify/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| SendError::Failed(format!("HTTP client: {}", e.without_url())))?;
    let response = client
        .post(format!("{}/{method}", s.api_url))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json; charset=utf-8")
        .body(body.to_string())
        .send()
        .map_err(|e| {
            SendError::Failed(format!(
                "Slack {method}: {}",
                crate::describe(&e.without_url())
            ))
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(SendError::Failed(format!(
            "Slack {method}: answered {status}"
        )));
    }
    let text = response
        .text()
        .map_err(|e| SendError::Failed(format!("Slack {method}: {}", e.without_url())))?;
    let reply: Value = serde_json::from_str(&text)
        .map_err(|_| SendError::Failed(format!("Slack {method}: the answer is not JSON")))?;
    if reply.get("ok") == Some(&Value::Bool(true)) {
        return Ok(reply);
    }
    let error = reply
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("no reason given");
    Err(SendError::Failed(format!(
        "Slack {method}: {}",
        agentx_clarify_core::error::shown(error)
    )))
}

/// `chat.postMessage` of `m` to the sink's channel: where it went (`channel`, `ts`).
pub fn post(sink: &Sink, m: &Message) -> Result<(String, String), SendError> {
    let s = settings(sink)?;
    let reply = call(
        sink,
        "chat.postMessage",
        &json!({"channel": s.channel, "text": m.text, "blocks": m.blocks, "unfurl_links": false}),
    )?;
    let field = |k: &str| reply.get(k).and_then(Value::as_str).map(str::to_owned);
    match (field("channel"), field("ts")) {
        (Some(channel), Some(ts)) => Ok((channel, ts)),
        _ => Err(SendError::Failed(
            "Slack chat.postMessage: no channel and ts in the answer".into(),
        )),
    }
}

/// `chat.postEphemeral`: a line only `user` sees, in `channel`.
pub fn ephemeral(sink: &Sink, channel: &str, user: &str, text: &str) -> Result<(), SendError> {
    call(
        sink,
        "chat.postEphemeral",
        &json!({"channel": channel, "user": user, "text": text}),
    )
    .map(|_| ())
}

/// `views.open` of the answer modal for `r`, opened from the message `channel`/`ts`.
pub fn open_modal(
    sink: &Sink,
    trigger: &str,
    r: &Record,
    channel: &str,
    ts: &str,
) -> Result<(), SendError> {
    let view = slack_app::modal(r, channel, ts);
    call(
        sink,
        "views.open",
        &json!({"trigger_id": trigger, "view": view}),
    )
    .map(|_| ())
}

/// Sends `event` about `record` through a slack-app sink: a new message while a person may
/// decide the record (its buttons with it), remembered; once the record is decided, every
/// message posted about it is updated to say so (a message of its own when none was posted).
pub fn deliver<S: State + ?Sized>(
    store: &S,
    config: &Config,
    sink: &Sink,
    event: &Event,
    record: &Record,
    now: i64,
) -> Result<(), String> {
    let open = !record.current_status().is_terminal() && crate::links::decidable(record);
    let mut before: Vec<Posted> =
        posted(store, &sink.name, &record.id).map_err(|e| e.to_string())?;
    if open {
        let m = slack_app::message(event, Some(record));
        let (channel, ts) = post(sink, &m).map_err(|e| e.to_string())?;
        let p = Posted {
            sink: sink.name.clone(),
            record: record.id.clone(),
            channel,
            ts,
            at: now,
        };
        return remember(store, config, p, now).map_err(|e| e.to_string());
    }
    let m = slack_app::message(event, None);
    if before.is_empty() {
        return post(sink, &m).map(|_| ()).map_err(|e| e.to_string());
    }
    before.sort_by_key(|p| p.at);
    for p in &before {
        call(
            sink,
            "chat.update",
            &json!({"channel": p.channel, "ts": p.ts, "text": m.text, "blocks": m.blocks}),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The messages `sink` posted about `record`.
pub fn posted<S: State + ?Sized>(
    store: &S,
    sink: &str,
    record: &str,
) -> Result<Vec<Posted>, ClarifyError> {
    let doc: Messages = docs::read_json(store, SLACK_MESSAGES)?;
    Ok(doc
        .messages
        .into_iter()
        .filter(|p| p.sink == sink && p.record == record)
        .collect())
}

fn remember<S: State + ?Sized>(
    store: &S,
    config: &Config,
    p: Posted,
    now: i64,
) -> Result<(), ClarifyError> {
    docs::update_json(
        store,
        SLACK_MESSAGES,
        config,
        LOCK_OWNER,
        |doc: &mut Messages| {
            doc.messages.retain(|m| {
                m.at.saturating_add(KEPT_MS) > now && !(m.channel == p.channel && m.ts == p.ts)
            });
            doc.messages.push(p);
        },
    )
}

/// Whether `signature` (`X-Slack-Signature`, `v0=<hex>`) is `secret`'s HMAC-SHA256 of
/// `v0:<timestamp>:<body>`, and `timestamp` (`X-Slack-Request-Timestamp`, Unix seconds) is
/// within five minutes of `now_secs` — Slack's scheme, as its SDKs verify it. The comparison
/// takes the same time wherever the first wrong byte is.
pub fn verify(
    secret: &str,
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now_secs: i64,
) -> Result<(), &'static str> {
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| "no valid X-Slack-Request-Timestamp")?;
    if (now_secs - at).abs() > MAX_AGE_SECS {
        return Err("the request's timestamp is more than five minutes away");
    }
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return Err("no signing secret");
    };
    mac.update(b"v0:");
    mac.update(timestamp.trim().as_bytes());
    mac.update(b":");
    mac.update(body);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let expected = format!("v0={expected}");
    let given = signature.trim();
    let same = given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0;
    if same {
        Ok(())
    } else {
        Err("the signature is not the signing secret's")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slack's own example ("Verifying requests from Slack"): this secret, timestamp and body
    /// sign to this signature.
    #[test]
    fn verifies_slacks_documented_example() {
        let secret = "8f742231b10e8888abcd99yyyzzz85a5";
        let ts = "1531420618";
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let sig = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(verify(secret, ts, body, sig, 1_531_420_618), Ok(()));
        assert!(verify(secret, ts, body, sig, 1_531_420_618 + 301).is_err());
        assert!(verify("other", ts, body, sig, 1_531_420_618).is_err());
        assert!(verify(secret, ts, b"x", sig, 1_531_420_618).is_err());
    }
}
