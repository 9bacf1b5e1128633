//! `clarify_wait`: a long poll on one record. The ledger is re-read only when it changed
//! (`Hub::version`: the store's change feed, docs/protocol.md §21), and the feed is looked at
//! when it says something may have changed — `agentx serve`'s news, or the store's own wake
//! (file events, `NOTIFY`) — else after the safety tick; only a store that cannot signal is
//! looked at on a short timer. A question that waits on the waiter (asked back, issue 49) ends
//! the wait at once: the two agents would otherwise wait on each other until both escalate.
//! Progress notifications go out about every 5 s when the request
//! carries a progress token, so clients that extend their timeout on progress keep waiting.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{error::RecvError, Receiver};

use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::ledger::Decision;
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::{replies, ClarifyError, EntryKind, Record, Status};
use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::hub::{Hub, Version};
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
    /// Who runs the client, when its token (or the launch) says (docs/protocol.md §37).
    pub operator: Option<Arc<str>>,
    pub server: &'a Server,
}

/// What a `clarify_wait` waits for: record `id`, past pending/stale (with `Until::Decision`,
/// also past escalated), for at most `timeout`; `waiter` is the agent waiting (a question that
/// waits on it wakes the wait, issue 49).
pub struct Awaited {
    pub id: String,
    pub until: Until,
    pub timeout: Duration,
    pub waiter: Option<Arc<str>>,
}

/// Waits until the record leaves pending/stale (with `Until::Decision`, also escalated: a
/// human's decision is awaited), a question waits on the waiter (`asked-back`: it must answer
/// that first, or both wait forever), the timeout passes or `stop` fires (then it answers like
/// a timeout: the status now, `timedOut: true`).
pub async fn wait(
    hub: &Hub,
    awaited: Awaited,
    progress: Option<Progress>,
    stop: Stop,
    elicitor: Option<Elicitor<'_>>,
) -> CallToolResult {
    let Awaited {
        id,
        until,
        timeout,
        waiter,
    } = awaited;
    let issue = match ClarificationId::parse(&id) {
        Ok(parsed) => parsed.issue,
        Err(e) => return reply::failure(&e),
    };
    let started = Instant::now();
    let mut clock = Clock {
        started,
        deadline: started + timeout,
        timeout,
        next_progress: started + PROGRESS_EVERY,
    };
    let mut seen: Option<Version> = None;
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
            Some(_) => Some(hub.version(issue).await),
            None => None,
        };
        let ledger = match hub.ledger(issue).await {
            Ok(Some(ledger)) => ledger,
            Ok(None) => return reply::failure(&ClarifyError::NotFound { id }),
            Err(e) => return reply::failure(&e),
        };
        let Some(record) = ledger.find(&id) else {
            return reply::failure(&ClarifyError::NotFound { id });
        };
        if let Some(e) = &elicitor {
            if elicit(hub, e, record, &stop).await {
                continue;
            }
        }
        let status = record.current_status();
        let waiting = still_waiting(status, until);
        if waiting {
            let back = waiter
                .as_deref()
                .and_then(|w| replies::waits_on_waiter(&ledger, record, w));
            if let Some(back) = back {
                return asked_back(issue, record, back);
            }
        }
        let timed_out = waiting && (Instant::now() >= clock.deadline || stop.fired());
        if !waiting || timed_out {
            return outcome(issue, record, until, timed_out, started.elapsed());
        }
        let before = match before {
            Some(v) => v,
            None => hub.version(issue).await,
        };
        seen = Some(before.clone());
        let sleep = Tick {
            hub,
            issue,
            before: &before,
            stop: &stop,
            progress: progress.as_ref(),
            safety: tick,
        };
        let label = format!("{id} is still {}", status.as_str());
        sleep
            .until_change(&mut feed, &mut wake, &mut clock, &label)
            .await;
    }
}

/// The times of one wait.
struct Clock {
    started: Instant,
    deadline: Instant,
    timeout: Duration,
    next_progress: Instant,
}

/// What one sleep of a wait watches.
struct Tick<'a> {
    hub: &'a Hub,
    issue: u32,
    before: &'a Version,
    stop: &'a Stop,
    progress: Option<&'a Progress>,
    /// The safety tick: how long a wait with news or a wake trusts them alone.
    safety: Duration,
}

impl Tick<'_> {
    /// Waits until the ledger changes, the time is up or the call is cancelled. With news or
    /// a wake, a signal ends the wait and the timer only keeps time (the deadline, the
    /// progress notifications, the safety tick); without, it is the check's timer. `label` is
    /// what a progress notification says ("CLR-42-001 is still pending").
    async fn until_change(
        &self,
        feed: &mut Option<Receiver<Vec<u32>>>,
        wake: &mut Option<tokio::sync::watch::Receiver<u64>>,
        clock: &mut Clock,
        label: &str,
    ) {
        loop {
            let now = Instant::now();
            let pause = if feed.is_some() || wake.is_some() {
                let mut pause = clock
                    .deadline
                    .saturating_duration_since(now)
                    .min(self.safety);
                if self.progress.is_some() {
                    pause = pause.min(clock.next_progress.saturating_duration_since(now));
                }
                pause
            } else {
                POLL
            };
            let woke = tokio::select! {
                () = tokio::time::sleep(pause) => false,
                () = self.stop.fires() => return,
                hit = news(feed, self.issue) => hit,
                // Something may have changed: the version below says whether this ledger did.
                () = signal(wake) => false,
            };
            let now = Instant::now();
            if woke || now >= clock.deadline {
                return;
            }
            // The check: after a signal, the safety tick, or the fallback's timer.
            if self.hub.version(self.issue).await != *self.before {
                return;
            }
            if now >= clock.next_progress {
                clock.next_progress += PROGRESS_EVERY;
                if let Some(p) = self.progress {
                    let waited = now.duration_since(clock.started).as_secs_f64().round();
                    let param = ProgressNotificationParam::new(p.token.clone(), waited)
                        .with_total(clock.timeout.as_secs_f64())
                        .with_message(format!("{label} after {waited} s"));
                    let _ = p.peer.notify_progress(param).await;
                }
            }
        }
    }
}

/// Asks the person at the client to decide `record` when it is theirs to decide (once per
/// record and session); true when their decision was written (read the record again).
async fn elicit(hub: &Hub, e: &Elicitor<'_>, record: &Record, stop: &Stop) -> bool {
    let operator = e.operator.as_deref();
    if !crate::elicit::wanted(record, &e.agent, operator) || !e.server.first_elicitation(&record.id)
    {
        return false;
    }
    let asked = tokio::select! {
        d = crate::elicit::ask(&e.peer, record, operator) => d,
        () = stop.fires() => None,
    };
    let Some(answered) = asked else {
        return false;
    };
    crate::elicit::decide(hub, &record.id, &e.agent, operator, answered)
        .await
        .is_ok()
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
fn still_waiting(status: Status, until: Until) -> bool {
    match until {
        Until::Answer => matches!(status, Status::Pending | Status::Stale),
        Until::Decision => matches!(status, Status::Pending | Status::Stale | Status::Escalated),
    }
}

/// The newest entry of one of `kinds` in the thread.
fn latest<'r>(record: &'r Record, kinds: &[EntryKind]) -> Option<&'r str> {
    record
        .thread
        .iter()
        .rev()
        .find(|e| kinds.contains(&e.kind))
        .map(|e| e.body.as_str())
}

/// The value of a decision as an agent reads it: `lru (In-process LRU)`, or its text.
fn chosen(d: &Decision) -> String {
    let value = match &d.value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
        None => return d.text.clone(),
    };
    match &d.label {
        Some(label) if *label != value => format!("{value} ({label})"),
        _ => value,
    }
}

fn outcome(
    issue: u32,
    record: &Record,
    until: Until,
    timed_out: bool,
    waited: Duration,
) -> CallToolResult {
    let id = record.id.as_str();
    let status = record.current_status();
    let decision = record.decision();
    // After a person decided, the answer an agent resumes from is the decision's text.
    let answer = match &decision {
        Some(d) => Some(d.text.clone()),
        None => current_answer(record),
    };
    let text = if timed_out {
        format!(
            "{id} is still {} after {} s; call clarify_wait again to keep waiting",
            status.as_str(),
            waited.as_secs_f64().round()
        )
    } else {
        match (status, &answer, &decision) {
            (_, _, Some(d)) => {
                let who = d
                    .via
                    .as_ref()
                    .map_or_else(|| d.by.clone(), |via| format!("{} via {via}", d.by));
                let mut t = format!("{id} decided by {who}: {}", chosen(d));
                if d.value.is_some() && d.label.as_deref() != Some(d.text.as_str()) {
                    t.push_str(&format!("\n\nNote: {}", d.text));
                }
                t.push_str(&format!(
                    "\n\nclarify_resume_prompt with id {id} gives the text to resume from."
                ));
                t
            }
            (Status::Answered, Some(a), _) => format!("{id} answered by {}:\n\n{a}", record.to),
            (Status::Pending | Status::Stale, _, _) => format!("{id} is still {}", status.as_str()),
            (Status::Escalated, _, _) if until == Until::Decision => {
                format!("{id} is still escalated, waiting for a human's decision")
            }
            _ => {
                let last = latest(
                    record,
                    &[
                        EntryKind::Resolution,
                        EntryKind::Escalation,
                        EntryKind::Abandonment,
                        EntryKind::Answer,
                    ],
                );
                format!("{id} is {}: {}", status.as_str(), last.unwrap_or(""))
            }
        }
    };
    // Who has it, so the agent can say whom it waits on (docs/protocol.md §37).
    let text = match (status, people_line(record)) {
        (Status::Escalated, Some(line)) => format!("{text}\n\n{line}"),
        _ => text,
    };
    let mut value = json!({
        "ok": true,
        "id": id,
        "status": status.as_str(),
        "outcome": if timed_out { "timed-out" } else { status.as_str() },
        "done": !still_waiting(status, until),
        "timedOut": timed_out,
        "answer": answer,
        "clarification": record.to_output(issue),
    });
    if let (Some(d), Value::Object(m)) = (decision, &mut value) {
        m.insert(
            "decision".into(),
            serde_json::to_value(d).unwrap_or(Value::Null),
        );
    }
    reply::envelope(value, |_| text)
}

/// "Assigned to alice, bob; alice is on it; 1 of 2 approved (alice)…" for an escalated
/// record assigned to people, `None` otherwise.
fn people_line(record: &Record) -> Option<String> {
    let assigned = agentx_clarify_core::people::assigned(record)?;
    let mut parts = vec![format!("Assigned to {}", assigned.join(", "))];
    if let Some(h) = agentx_clarify_core::people::holder(record) {
        parts.push(format!("{} is on it", h.person));
    }
    parts.extend(agentx_clarify_core::people::summary(record));
    Some(parts.join("; "))
}

/// The wait's answer when question `back` waits on the waiter (issue 49): at once, with the
/// question to answer first. Waiting on would never end, the other agent waits on this one.
fn asked_back(issue: u32, awaited: &Record, back: &Record) -> CallToolResult {
    let question = latest(back, &[EntryKind::Question]).unwrap_or_default();
    let spec = &back.answer;
    let mut counter = json!({
        "id": back.id,
        "from": back.from,
        "topic": back.topic,
        "question": question,
        "answerKind": spec.kind.as_str(),
        "askedBackFrom": replies::asked_back_from(back),
    });
    if let (true, Value::Object(m)) = (spec.kind.has_options(), &mut counter) {
        m.insert("options".into(), json!(spec.options));
        m.insert("allowOther".into(), Value::Bool(spec.allows_other()));
        if spec.kind == AnswerKind::MultiChoice {
            m.insert("minSelect".into(), json!(spec.min()));
            m.insert("maxSelect".into(), json!(spec.max()));
        }
    }
    let how = if replies::asked_back_from(back) == Some(awaited.id.as_str()) {
        format!("asked you {} back about it", back.id)
    } else {
        format!("asked you {} on the same issue", back.id)
    };
    let mut text = format!(
        "{} is not answered yet: {} {how} and waits on your answer: answer {} first (clarify_answer), then wait again.\n\n{} asks ({}): {question}",
        awaited.id,
        back.from,
        back.id,
        back.id,
        spec.kind.as_str(),
    );
    if spec.kind.has_options() {
        let shown: Vec<String> = spec
            .options
            .iter()
            .map(|o| match &o.label {
                Some(label) => format!("{} ({label})", o.value),
                None => o.value.clone(),
            })
            .collect();
        text.push_str(&format!("\nOptions (give `value`): {}", shown.join(", ")));
    }
    let status = awaited.current_status();
    let value = json!({
        "ok": true,
        "id": awaited.id,
        "status": status.as_str(),
        "outcome": "asked-back",
        "done": false,
        "timedOut": false,
        "answer": Value::Null,
        "askedBack": counter,
        "clarification": awaited.to_output(issue),
    });
    reply::envelope(value, |_| text)
}

/// The answer of the record's current round, if it has one (a follow-up opens a new round
/// whose answer is still to come).
fn current_answer(record: &Record) -> Option<String> {
    let round = record.output_fold().round;
    record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Answer && e.round == round)
        .map(|e| e.body.clone())
}
