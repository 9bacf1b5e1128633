//! `clarify_wait`: a long poll on one record. The ledger is re-read only when it changed
//! (`Hub::version`: the store's change feed, docs/protocol.md §21), and the feed is looked at
//! when it says something may have changed — `agentx serve`'s news, or the store's own wake
//! (file events, `NOTIFY`) — else after the safety tick; only a store that cannot signal is
//! looked at on a short timer. Progress notifications go out about every 5 s when the request
//! carries a progress token, so clients that extend their timeout on progress keep waiting.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{error::RecvError, Receiver};

use crate::hub::Version;

use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;
use crate::input::Until;
use crate::reply;
use crate::server::Server;

/// How often the store's change feed is looked at while waiting, when it cannot signal.
const POLL: Duration = agentx_clarify_store::FALLBACK_TICK;
/// How often a progress notification goes out (when asked for).
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Who to tell about progress, when the request asked.
pub struct Progress {
    pub token: ProgressToken,
    pub peer: Peer<RoleServer>,
}

/// Why a wait stops early: the request was cancelled, or the client closed its input.
pub struct Stop {
    pub request: CancellationToken,
    pub input_closed: CancellationToken,
}

impl Stop {
    fn fired(&self) -> bool {
        self.request.is_cancelled() || self.input_closed.is_cancelled()
    }

    async fn fires(&self) {
        tokio::select! {
            () = self.request.cancelled() => {}
            () = self.input_closed.cancelled() => {}
        }
    }
}

/// Who to ask when the agent's own record waits for a person (docs/protocol.md §24): the client, whose
/// user is that person, when it fills in forms and elicitation is on.
pub struct Elicitor<'a> {
    pub peer: Peer<RoleServer>,
    pub agent: Arc<str>,
    pub server: &'a Server,
}

/// Waits until record `id` leaves pending/stale (with `Until::Decision`, also escalated: a
/// human's decision is awaited), `timeout` passes or `stop` fires (then it answers like a
/// timeout: the status now, `timedOut: true`).
pub async fn wait(
    hub: &Hub,
    id: String,
    until: Until,
    timeout: Duration,
    progress: Option<Progress>,
    stop: Stop,
    elicitor: Option<Elicitor<'_>>,
) -> CallToolResult {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut next_progress = started + PROGRESS_EVERY;
    let mut seen: Option<(u32, Version)> = None;
    // Subscribed before the first read, so no change between the read and the sleep is missed.
    let mut feed = hub.subscribe();
    // Without a server's news, the store's own wake; taken before the first read as well.
    let mut wake = hub.wake().await;
    let tick = agentx_clarify_store::safety_tick();
    loop {
        // Marked seen before the look: a signal after it wakes the wait below.
        if let Some(w) = &mut wake {
            w.borrow_and_update();
        }
        // Look first, then read: a write between the two shows up as a changed version.
        let before = match &seen {
            Some((issue, _)) => Some(hub.version(*issue).await),
            None => None,
        };
        let shown = hub.call("show", json!({ "id": id })).await;
        let Some(record) = shown
            .get("clarification")
            .filter(|_| shown.get("ok") == Some(&Value::Bool(true)))
        else {
            return reply::envelope(shown, |_| String::new());
        };
        if let Some(e) = &elicitor {
            if crate::elicit::wanted(record, &e.agent) && e.server.first_elicitation(&id) {
                let record = record.clone();
                let asked = tokio::select! {
                    d = crate::elicit::ask(&e.peer, &record) => d,
                    () = stop.fires() => None,
                };
                if let Some(input) = asked {
                    let by = format!("operator of {}", e.agent);
                    let decided = hub.decide_as(input, by, "elicitation").await;
                    if decided.get("ok") == Some(&Value::Bool(true)) {
                        continue;
                    }
                    let why = decided.get("error").map(ToString::to_string);
                    tracing::warn!("the decision on {id} from elicitation was refused: {why:?}");
                }
            }
        }
        let status = record
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let waiting = still_waiting(&status, until);
        let timed_out = waiting && (Instant::now() >= deadline || stop.fired());
        if !waiting || timed_out {
            return outcome(
                &id,
                &status,
                until,
                record.clone(),
                timed_out,
                started.elapsed(),
            );
        }
        let issue = match &seen {
            Some((issue, _)) => *issue,
            None => record
                .get("issueNumber")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_default(),
        };
        let before = match before {
            Some(v) => v,
            None => hub.version(issue).await,
        };
        seen = Some((issue, before.clone()));
        // Wait until the ledger changes, the time is up or the call is cancelled. With news
        // or a wake, a signal ends the wait and the timer only keeps time (the deadline, the
        // progress notifications, the safety tick); without, it is the check's timer.
        loop {
            let now = Instant::now();
            let pause = if feed.is_some() || wake.is_some() {
                let mut pause = deadline.saturating_duration_since(now).min(tick);
                if progress.is_some() {
                    pause = pause.min(next_progress.saturating_duration_since(now));
                }
                pause
            } else {
                POLL
            };
            let woke = tokio::select! {
                () = tokio::time::sleep(pause) => false,
                () = stop.fires() => break,
                hit = news(&mut feed, issue) => hit,
                // Something may have changed: the version below says whether this ledger did.
                () = signal(&mut wake) => false,
            };
            let now = Instant::now();
            if woke || now >= deadline {
                break;
            }
            // The check: after a signal, the safety tick, or the fallback's timer.
            if hub.version(issue).await != before {
                break;
            }
            if now >= next_progress {
                next_progress += PROGRESS_EVERY;
                if let Some(p) = &progress {
                    let waited = now.duration_since(started).as_secs_f64().round();
                    let param = ProgressNotificationParam::new(p.token.clone(), waited)
                        .with_total(timeout.as_secs_f64())
                        .with_message(format!("{id} is still {status} after {waited} s"));
                    let _ = p.peer.notify_progress(param).await;
                }
            }
        }
    }
}

/// Resolves when the feed announces a change of `issue` (or lost track: look again); never
/// without a feed, or once the feed has ended.
async fn news(feed: &mut Option<Receiver<Vec<u32>>>, issue: u32) -> bool {
    let Some(rx) = feed else {
        return std::future::pending().await;
    };
    loop {
        match rx.recv().await {
            Ok(issues) if issues.is_empty() || issues.contains(&issue) => return true,
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => return true,
            Err(RecvError::Closed) => return std::future::pending().await,
        }
    }
}

/// Resolves at the store's next signal after the last one seen; never without a wake (or
/// once its store stopped signalling).
async fn signal(wake: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let Some(rx) = wake else {
        return std::future::pending().await;
    };
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Whether a record in `status` is still what the caller waits past.
fn still_waiting(status: &str, until: Until) -> bool {
    match until {
        Until::Answer => status == "pending" || status == "stale",
        Until::Decision => matches!(status, "pending" | "stale" | "escalated"),
    }
}

fn outcome(
    id: &str,
    status: &str,
    until: Until,
    record: Value,
    timed_out: bool,
    waited: Duration,
) -> CallToolResult {
    let answer = current_answer(&record);
    let text = if timed_out {
        format!(
            "{id} is still {status} after {} s; call clarify_wait again to keep waiting",
            waited.as_secs_f64().round()
        )
    } else {
        match (status, &answer) {
            ("answered", Some(a)) => {
                let by = record.get("to").and_then(Value::as_str).unwrap_or_default();
                format!("{id} answered by {by}:\n\n{a}")
            }
            ("pending" | "stale", _) => format!("{id} is still {status}"),
            ("escalated", _) if until == Until::Decision => {
                format!("{id} is still escalated, waiting for a human's decision")
            }
            _ => {
                let last = reply::latest_body(
                    &record,
                    &["resolution", "escalation", "abandonment", "answer"],
                );
                format!("{id} is {status}: {}", last.unwrap_or(""))
            }
        }
    };
    let value = json!({
        "ok": true,
        "id": id,
        "status": status,
        "done": !still_waiting(status, until),
        "timedOut": timed_out,
        "answer": answer,
        "clarification": record,
    });
    reply::envelope(value, |_| text)
}

/// The answer of the record's current round, if it has one (a follow-up opens a new round
/// whose answer is still to come).
fn current_answer(record: &Value) -> Option<String> {
    let round = record.get("round")?;
    record
        .get("thread")?
        .as_array()?
        .iter()
        .rev()
        .find(|e| e.get("type") == Some(&json!("answer")) && e.get("round") == Some(round))
        .and_then(|e| e.get("body"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}
