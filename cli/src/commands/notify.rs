//! `agentx notify`: the notification sinks of `[[notify]]` (docs/protocol.md §25). `test` sends a test
//! event to one sink now, so a person setting one up sees it arrive (or why it did not).

use std::path::Path;

use agentx_clarify_core::error::shown;
use agentx_clarify_core::notify::outbox::State;
use agentx_clarify_core::notify::{Event, Sink};
use agentx_clarify_core::time::Timestamp;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_notify::home::Home;
use agentx_clarify_workspace::WorkspaceFiles;
use clap::Subcommand;
use serde_json::json;

use crate::print;

#[derive(Subcommand, Debug)]
pub enum Notify {
    /// One delivery pass: find the events the ledgers owe each sink, send what is due, record
    /// each try (for cron and agent hooks when no server runs)
    #[command(
        after_help = "Examples:\n  agentx notify send\n  agentx notify send --json --public-url https://hub.example.com\n  */5 * * * * cd /srv/project && agentx notify send   # crontab\n\nEvery escalation, answer, resolution and stale mark in a ledger is an event; a sink is\ntold of those its events/issues/agents name, from the time it was configured on (the\nsettings file's modification time; never less than the last 24 hours). Failed\ndeliveries are retried after 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, and are dead 24 h\nafter they were due. Several deliverers may run at once: each delivery is sent by one."
    )]
    Send {
        /// The inbox's public URL (as `agentx serve --public-url`): events then carry the
        /// thread's page (`url`), Slack messages link to it and ntfy opens it
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
    },
    /// Pending, failing and dead deliveries (with the last error and the next try)
    #[command(after_help = "Examples:\n  agentx notify status\n  agentx notify status --json")]
    Status,
    /// Put a delivery (or every dead one) back in line for the next `notify send`
    #[command(
        after_help = "Examples:\n  agentx notify retry evt_CLR-42-001_3/team\n  agentx notify retry --dead"
    )]
    Retry {
        /// The delivery (`<event>/<sink>`, as `notify status` lists it)
        #[arg(required_unless_present = "dead", conflicts_with = "dead")]
        id: Option<String>,
        /// Every dead delivery
        #[arg(long)]
        dead: bool,
    },
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
        Notify::Send { public_url } => send(root, now_ms, json, public_url.as_deref()),
        Notify::Status => status(root, now_ms, json),
        Notify::Retry { id, dead } => retry(root, now_ms, json, id.as_deref(), dead),
    }
}

fn test(root: &Path, now_ms: i64, json: bool, name: &str) -> Result<i32, ClarifyError> {
    // The settings alone: a test event touches no state.
    let files = WorkspaceFiles::read(root, false)?;
    let sink = find(files.settings().sinks()?, name)?;
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

fn send(root: &Path, now: i64, json: bool, public_url: Option<&str>) -> Result<i32, ClarifyError> {
    if let Some(url) = public_url {
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(ClarifyError::input(format!(
                "--public-url must be an http(s) URL, e.g. https://hub.example.com; found \"{}\"",
                shown(url)
            )));
        }
    }
    let ws = agentx_clarify_a2a::open_workspace(root)?;
    let report = agentx_clarify_notify::pass_with(&ws, now, public_url)?;
    if json {
        print::json(&json!({
            "ok": true, "added": report.added, "delivered": report.delivered,
            "failed": report.failed.iter().map(|(k, e)| json!({"id": k, "error": e})).collect::<Vec<_>>(),
            "pending": report.pending, "dead": report.dead,
            "nextDue": report.next_due.map(|ms| Timestamp::from_ms(ms).to_string()),
        }));
    } else {
        let mut text = format!(
            "{} delivered, {} failed, {} pending, {} dead",
            report.delivered,
            report.failed.len(),
            report.pending,
            report.dead
        );
        for (key, error) in &report.failed {
            text.push_str(&format!("\n  {key}: {error}"));
        }
        if let Some(ms) = report.next_due {
            text.push_str(&format!("\nnext try due {}", Timestamp::from_ms(ms)));
        }
        print::text(&text);
    }
    Ok(0)
}

/// The outbox as the next pass would see it: what is stored, plus what the ledgers owe that
/// no pass planned yet — a sink configured since the last pass is listed with what it is owed
/// before anything was sent to it (`"planned": false`).
fn status(root: &Path, now: i64, json: bool) -> Result<i32, ClarifyError> {
    let ws = agentx_clarify_a2a::open_workspace(root)?;
    let (outbox, new) = agentx_clarify_notify::preview(&ws, now)?;
    let open: Vec<_> = outbox
        .deliveries
        .iter()
        .filter(|(_, d)| matches!(d.state, State::Pending | State::Dead))
        .collect();
    if json {
        print::json(&json!({
            "ok": true,
            "deliveries": open.iter().map(|(k, d)| json!({
                "id": k, "event": d.event, "sink": d.sink, "type": format!("clarification.{}", d.name.as_str()),
                "issue": d.issue, "record": d.record, "state": d.state,
                "planned": !new.contains(k),
                "failing": d.state == State::Pending && d.attempts > 0,
                "attempts": d.attempts, "lastError": d.last_error,
                "due": Timestamp::from_ms(d.due).to_string(),
                "next": (d.state == State::Pending).then(|| Timestamp::from_ms(d.next).to_string()),
            })).collect::<Vec<_>>(),
            "delivered": outbox.deliveries.values().filter(|d| d.state == State::Delivered).count(),
        }));
        return Ok(0);
    }
    if open.is_empty() {
        print::text(&format!(
            "nothing pending ({} delivered in the last 7 days)",
            outbox
                .deliveries
                .values()
                .filter(|d| d.state == State::Delivered)
                .count()
        ));
        return Ok(0);
    }
    let mut text = String::new();
    for (key, d) in open {
        let what = match (d.state, d.attempts) {
            (State::Dead, _) => String::from("dead"),
            (_, 0) if new.contains(key) => format!(
                "owed, due {} (the next notify send plans it)",
                Timestamp::from_ms(d.next)
            ),
            (_, 0) => format!("pending, due {}", Timestamp::from_ms(d.next)),
            (_, n) => format!(
                "failing ({n} tries), next try {}",
                Timestamp::from_ms(d.next)
            ),
        };
        text.push_str(&format!(
            "{key}  {} on #{}  {what}",
            d.name.as_str(),
            d.issue
        ));
        if let Some(error) = &d.last_error {
            text.push_str(&format!("\n    last error: {error}"));
        }
        text.push('\n');
    }
    print::text(text.trim_end());
    Ok(0)
}

fn retry(
    root: &Path,
    now: i64,
    json: bool,
    id: Option<&str>,
    dead: bool,
) -> Result<i32, ClarifyError> {
    let store = agentx_clarify_a2a::open_workspace(root)?.store()?;
    let retried = Home(&*store).update_outbox(&agentx_clarify_notify::deliverer(), |outbox| {
        let keys: Vec<String> = match id {
            Some(id) => vec![id.to_owned()],
            None if dead => outbox
                .deliveries
                .iter()
                .filter(|(_, d)| d.state == State::Dead)
                .map(|(k, _)| k.clone())
                .collect(),
            None => Vec::new(),
        };
        keys.into_iter()
            .filter(|k| outbox.retry(k, now))
            .collect::<Vec<_>>()
    })?;
    if let (Some(id), true) = (id, retried.is_empty()) {
        return Err(ClarifyError::NotFound { id: id.to_owned() });
    }
    if json {
        print::json(&json!({"ok": true, "retried": retried}));
    } else {
        print::text(&format!(
            "{} delivery(ies) back in line for the next notify send",
            retried.len()
        ));
    }
    Ok(0)
}
