//! `POST /slack/interactions` (docs/notifications.md, "Slack as an app"): what a person does
//! on a `slack-app` sink's message — a button, the menu, the "Answer…" modal.
//!
//! Nothing is read before the request is Slack's: `X-Slack-Signature` must be a configured
//! sink's signing secret's HMAC-SHA256 of `v0:<timestamp>:<body>`, compared in constant time,
//! and the timestamp within five minutes of the server's clock; otherwise 401 and the ledger
//! untouched. A signature seen before (a replayed request) is refused too. Wrong signatures
//! are counted as failed sign-ins are. The clicker is then the person whose `slack = "U…"`
//! in `people.toml` is their Slack user, and decides through the command layer under the
//! same decider rules as the inbox (`via: "slack"`); anything refused is told to them alone
//! (`chat.postEphemeral`, or the modal's error).

mod decide;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use agentx_clarify_core::notify::slack_interaction::{self, Interaction};
use agentx_clarify_core::notify::{Sink, SinkKind};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::hub::App;

/// The signatures of the last five minutes: one request is taken once on this server (on
/// another, the ledger's own rules hold — a decided record is not decided again).
#[derive(Default)]
pub struct Seen(Mutex<HashMap<String, i64>>);

impl Seen {
    /// Whether `signature` is new (and now seen), at `now_secs`.
    fn first(&self, signature: &str, now_secs: i64) -> bool {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|_, at| now_secs - *at <= agentx_clarify_notify::slack::MAX_AGE_SECS * 2);
        all.insert(signature.to_owned(), now_secs).is_none()
    }
}

fn refused(status: StatusCode, text: &str) -> Response {
    (status, text.to_owned()).into_response()
}

pub async fn interactions(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    const COUNTED: &str = "slack";
    if app.link_failures.blocked(peer.ip(), COUNTED) {
        return refused(
            StatusCode::TOO_MANY_REQUESTS,
            "too many bad signatures; wait a minute",
        );
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (timestamp, signature) = (
        header("x-slack-request-timestamp"),
        header("x-slack-signature"),
    );
    let now_secs = agentx_clarify_store::clock::system_now_ms() / 1000;
    let sink = match signed_by(&app, &timestamp, &body, &signature, now_secs).await {
        Ok(sink) => sink,
        Err(why) => {
            crate::log::line(&format!(
                "refused a Slack request from {}: {why}",
                peer.ip()
            ));
            if app.link_failures.failed(peer.ip(), COUNTED) {
                tokio::time::sleep(crate::sessions::SLOW_FOR).await;
            }
            return refused(StatusCode::UNAUTHORIZED, why);
        }
    };
    if !app.slack_seen.first(&signature, now_secs) {
        crate::log::line(&format!(
            "refused a replayed Slack request from {}",
            peer.ip()
        ));
        return refused(StatusCode::UNAUTHORIZED, "this request was already taken");
    }
    let fields = crate::answers::form_fields(&body);
    let Some(payload) = fields.iter().find(|(k, _)| k == "payload").map(|(_, v)| v) else {
        return refused(StatusCode::BAD_REQUEST, "no payload");
    };
    let read = serde_json::from_str(payload)
        .map_err(|e| e.to_string())
        .and_then(|p| slack_interaction::read(&p));
    match read {
        Ok(Interaction::Ignored) => StatusCode::OK.into_response(),
        Ok(interaction) => decide::act(&app, sink, interaction).await,
        Err(why) => refused(StatusCode::BAD_REQUEST, &why),
    }
}

/// The slack-app sink whose signing secret signed the request, or why none did.
async fn signed_by(
    app: &Arc<App>,
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now_secs: i64,
) -> Result<Sink, &'static str> {
    if timestamp.is_empty() || signature.is_empty() {
        return Err("no X-Slack-Signature and X-Slack-Request-Timestamp");
    }
    let sinks = app
        .with_store(|ws| {
            let all = ws.files.settings().sinks()?;
            Ok(all
                .iter()
                .filter(|s| s.kind == SinkKind::SlackApp)
                .cloned()
                .collect::<Vec<_>>())
        })
        .await
        .map_err(|_| "the settings cannot be read")?;
    let mut why = "no slack-app sink is configured";
    for sink in sinks {
        let Ok(secret) = agentx_clarify_notify::slack::signing_secret(&sink) else {
            why = "the signing secret's variable is not set";
            continue;
        };
        match agentx_clarify_notify::slack::verify(&secret, timestamp, body, signature, now_secs) {
            Ok(()) => return Ok(sink),
            Err(e) => why = e,
        }
    }
    Err(why)
}
