//! `agentx notify`: the notification sinks of `[[notify]]` (SPEC §25). `test` sends a test
//! event to one sink now, so a person setting one up sees it arrive (or why it did not).

use std::path::Path;

use agentx_clarify_core::notify::{Event, Sink};
use agentx_clarify_core::time::Timestamp;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::DiskStore;
use clap::Subcommand;
use serde_json::json;

use crate::print;

#[derive(Subcommand, Debug)]
pub enum Notify {
    /// Send a test event to one sink now and say whether it was delivered
    #[command(
        after_help = "Examples:\n  agentx notify test team\n  AGENTX_TEAM_SECRET=whsec_… agentx notify test team --json\n\nThe sink is a [[notify]] table of .agentx/config.toml. A webhook's test event is signed\nlike every event (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature),\nits type is clarification.test. Exit 0: delivered (2xx, or the command exited 0)."
    )]
    Test {
        /// The sink's `name`
        name: String,
    },
}

pub fn run(root: &Path, now_ms: i64, json: bool, cmd: Notify) -> Result<i32, ClarifyError> {
    match cmd {
        Notify::Test { name } => test(root, now_ms, json, &name),
    }
}

fn test(root: &Path, now_ms: i64, json: bool, name: &str) -> Result<i32, ClarifyError> {
    let sinks = DiskStore::new(root).notify_sinks()?;
    let sink = find(&sinks, name)?;
    let secret = agentx_clarify_notify::secret_of(sink, |var| std::env::var(var).ok())
        .map_err(|e| config_error(&e.to_string()))?;
    let timestamp = Timestamp::from_ms(now_ms);
    let event = Event::test(format!("msg_test_{now_ms}"), timestamp, &sink.name);
    // The signature's time is the real time of sending, whatever `--now` says: receivers
    // refuse a `webhook-timestamp` far from their clock (replay protection).
    let sent_at = agentx_clarify_store::clock::system_now_ms() / 1000;
    let sent = agentx_clarify_notify::send(sink, &event, secret.as_deref(), sent_at);
    match sent {
        Ok(delivered) => {
            let ms = delivered.elapsed.as_millis();
            if json {
                print::json(&json!({
                    "ok": true, "sink": sink.name, "kind": sink.kind,
                    "destination": sink.destination(), "event": event.id,
                    "status": delivered.status, "ms": ms,
                }));
            } else {
                print::text(&format!(
                    "delivered a test event to {} ({} {}): {} in {ms} ms",
                    sink.name,
                    sink.kind.as_str(),
                    sink.destination(),
                    if delivered.status == 0 {
                        String::from("exit 0")
                    } else {
                        delivered.status.to_string()
                    }
                ));
            }
            Ok(0)
        }
        Err(agentx_clarify_notify::SendError::Config(message)) => Err(config_error(&message)),
        Err(agentx_clarify_notify::SendError::Failed(message)) => Err(ClarifyError::Io {
            message: format!(
                "the test event was not delivered to {} ({} {}): {message}",
                sink.name,
                sink.kind.as_str(),
                sink.destination()
            ),
        }),
    }
}

fn find<'s>(sinks: &'s [Sink], name: &str) -> Result<&'s Sink, ClarifyError> {
    sinks.iter().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = sinks.iter().map(|s| s.name.as_str()).collect();
        ClarifyError::InvalidInput {
            message: if known.is_empty() {
                format!(
                    "no notification sink is named \"{}\": .agentx/config.toml has no [[notify]] table",
                    shown(name)
                )
            } else {
                format!(
                    "no notification sink is named \"{}\"; configured: {}",
                    shown(name),
                    known.join(", ")
                )
            },
        }
    })
}

fn config_error(message: &str) -> ClarifyError {
    ClarifyError::ConfigInvalid {
        file: String::from(".agentx/config.toml"),
        location: None,
        message: message.to_owned(),
    }
}

/// A name as typed, fit for a message: at most 80 characters, control characters escaped.
fn shown(name: &str) -> String {
    name.chars().take(80).flat_map(char::escape_debug).collect()
}
