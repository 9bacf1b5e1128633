//! Sends notification events to their sinks: the shell half of notifications (the core decides
//! who is told what and renders it: `agentx_clarify_core::notify`).
//!
//! - A webhook's body is signed as Standard Webhooks 1.0 says: `webhook-id` (the event's id,
//!   the same on every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature:
//!   v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, with the key of a `whsec_` secret.
//! - Nothing this crate returns or prints carries a secret or a URL beyond its host: errors
//!   from the HTTP client are stripped of their URL.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod github;
pub mod home;
pub mod links;
mod mail;
mod pass;
pub mod slack;

pub use pass::{deliverer, pass, pass_with, preview, PassReport};

use std::time::{Duration, Instant};

use agentx_clarify_core::notify::{Event, Outgoing, SecretFrom, Sink, SinkKind};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long one HTTP delivery may take, connect to last byte.
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a `command` sink may run.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a delivery did not happen. The text names no secret and no URL past its host.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SendError {
    /// The sink's configuration cannot be used (a missing secret, a secret that is not one).
    #[error("{0}")]
    Config(String),
    /// Tried and failed: retried later.
    #[error("{0}")]
    Failed(String),
}

/// A delivery that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// The HTTP status, or the command's exit status 0.
    pub status: u16,
    pub elapsed: Duration,
}

/// The key of a Standard Webhooks secret: `whsec_` followed by base64 (the prefix is optional,
/// as the official libraries take it).
pub fn webhook_key(secret: &str) -> Result<Vec<u8>, SendError> {
    let text = secret.trim();
    let text = text.strip_prefix("whsec_").unwrap_or(text);
    match STANDARD.decode(text) {
        Ok(key) if !key.is_empty() => Ok(key),
        _ => Err(SendError::Config(
            "the webhook secret is not a Standard Webhooks secret (whsec_ followed by base64)"
                .into(),
        )),
    }
}

/// `v1,<base64 signature>` of one message.
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes a key of any length: new_from_slice cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The secret of a sink, read from where the configuration says; `env` reads a variable (the
/// shell's environment, passed in so tests need not set process-wide state).
pub fn secret_of(
    sink: &Sink,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, SendError> {
    match &sink.secret {
        None => Ok(None),
        Some(SecretFrom::Inline(s)) => Ok(Some(s.clone())),
        Some(SecretFrom::Env(name)) => match env(name) {
            Some(v) if !v.trim().is_empty() => Ok(Some(v)),
            _ => Err(SendError::Config(format!(
                "the secret of sink \"{}\" is read from the environment variable {name}, which is not set",
                sink.name
            ))),
        },
    }
}

/// Sends `event` to `sink` once. `secret` is the webhook's (see [`secret_of`]); `now_secs` the
/// Unix time of the signature.
pub fn send(
    sink: &Sink,
    event: &Event,
    secret: Option<&str>,
    now_secs: i64,
) -> Result<Delivered, SendError> {
    let started = Instant::now();
    match event.outgoing(sink) {
        Outgoing::Http {
            url,
            mut headers,
            body,
        } => {
            if sink.kind == SinkKind::Webhook {
                if let Some(secret) = secret {
                    let key = webhook_key(secret)?;
                    headers.push(("webhook-id".into(), event.id.clone()));
                    headers.push(("webhook-timestamp".into(), now_secs.to_string()));
                    headers.push((
                        "webhook-signature".into(),
                        sign(&key, &event.id, now_secs, &body),
                    ));
                } else {
                    // Unsigned webhooks still say which event this is, for deduplication.
                    headers.push(("webhook-id".into(), event.id.clone()));
                    headers.push(("webhook-timestamp".into(), now_secs.to_string()));
                }
            }
            post(&url, &headers, body).map(|status| Delivered {
                status,
                elapsed: started.elapsed(),
            })
        }
        Outgoing::Command { argv, stdin } => run(&argv, &stdin).map(|()| Delivered {
            status: 0,
            elapsed: started.elapsed(),
        }),
        Outgoing::Mail {
            subject,
            text,
            html,
            thread,
        } => {
            let mail = mail::Mail {
                event: &event.id,
                subject: &subject,
                text: &text,
                html: &html,
                thread: &thread,
            };
            mail::send(sink, &mail, &|v| std::env::var(v).ok()).map(|()| Delivered {
                status: 250,
                elapsed: started.elapsed(),
            })
        }
        // `agentx notify test`: a message that tells (a record's deliveries go through
        // `slack::deliver`, which adds the buttons and remembers the message).
        Outgoing::Slack(message) => slack::post(sink, &message).map(|_| Delivered {
            status: 200,
            elapsed: started.elapsed(),
        }),
    }
}

fn post(url: &str, headers: &[(String, String)], body: Vec<u8>) -> Result<u16, SendError> {
    let client = reqwest::blocking::Client::builder()
        .timeout(HTTP_TIMEOUT)
        .connect_timeout(HTTP_TIMEOUT)
        // A redirect would carry the signed body somewhere the configuration does not name.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("agentx-clarify/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| SendError::Failed(format!("HTTP client: {}", e.without_url())))?;
    let mut request = client.post(url).body(body);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let response = request
        .send()
        .map_err(|e| SendError::Failed(describe(&e.without_url())))?;
    let status = response.status();
    if status.is_success() {
        Ok(status.as_u16())
    } else {
        Err(SendError::Failed(format!("the receiver answered {status}")))
    }
}

/// An HTTP client error in a few words, its causes included (reqwest's own text is only the
/// outermost, "error sending request").
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        String::from("timed out")
    } else if e.is_connect() {
        String::from("could not connect")
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// What of a command sink's stderr is kept for its error message.
const STDERR_KEPT: usize = 4096;

/// Runs a command sink through the runner crate, as a routed agent runs: its own process
/// group (the timeout kills its children too), the event written to its stdin under the
/// deadline and its output drained meanwhile — a program that does not read its stdin, or
/// writes much to stderr before it does, cannot hang the deliverer (an event over 64 KiB, a
/// pipe's buffer, once did).
fn run(argv: &[String], stdin: &[u8]) -> Result<(), SendError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(SendError::Config("the command sink has no program".into()));
    };
    let mut spec = agentx_clarify_runner::Spec::new(program, COMMAND_TIMEOUT);
    spec.args = args.to_vec();
    spec.stdin = Some(stdin.to_vec());
    spec.cap = STDERR_KEPT;
    let out = agentx_clarify_runner::run(&spec).map_err(|e| SendError::Failed(e.to_string()))?;
    if out.timed_out {
        return Err(SendError::Failed(format!(
            "{program} did not finish within {} s",
            COMMAND_TIMEOUT.as_secs()
        )));
    }
    if out.exit.success() {
        return Ok(());
    }
    // Kept in the outbox and shown on the inbox: what looks like a secret is hidden before
    // the text is cut (issue 48).
    let err = agentx_clarify_core::origin::redacted(out.stderr_text().trim(), 200);
    Err(SendError::Failed(if err.is_empty() {
        format!("{program} exited with {}", out.exit)
    } else {
        format!("{program} exited with {}: {err}", out.exit)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference test suite: this secret,
    /// id, timestamp and payload sign to this signature.
    #[test]
    fn signs_like_the_reference_libraries() {
        let key = webhook_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_or_default();
        let signature = sign(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn refuses_what_is_not_a_secret() {
        assert!(webhook_key("whsec_!!!").is_err());
        assert!(webhook_key("").is_err());
    }
}
