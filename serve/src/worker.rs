//! The worker (docs/protocol.md §23): runs the monitor when the core says something falls due (its next
//! wake-up) — never on a fixed tick. A change from the feed re-plans (a new record may fall due
//! sooner); shutdown ends it. The plan is the store's index of due times (`next_wakeup` over
//! `Ledgers::due_times`, the keys the follow-up monitor reads), so planning after a write
//! costs the same whatever the open and finished work. The monitor routes what it retried
//! when `[clarify] route_on_retry` says so, through the command layer's routed entry point, as
//! `agentx clarify monitor` does. Two servers on one store run a pass on one of them: the
//! monitor and the GitHub sync are duties whose lease a pass takes (§23.5, `duty.rs`); and
//! every write is read–decide–write under the ledger's lock, so a pass that outlived its
//! lease and a second one beside it still act once.
//!
//! Both tasks call the command layer's and the deliverer's Rust functions and read their
//! Rust values; no JSON envelope in between.

use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_store::clock::system_now_ms;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::broadcast::Receiver;

use crate::backoff::Backoff;
use crate::duty::{self, Ran};
use crate::hub::{App, Change};
use crate::open_follow::FEED_WAIT;

/// The longest the deliverer spaces its change-started passes (a pass over 100,000 ledgers
/// takes about a second): a new escalation is still told within about twice this.
const MAX_SPACING: Duration = Duration::from_secs(2);
/// After a failed store call, the worker tries again after this long.
const RETRY: Duration = Duration::from_secs(5);
/// Changes that come close together are planned for once: the worker waits this long after
/// one and takes every other that came meanwhile (a busy hub writes hundreds a second).
const PLAN_GAP: Duration = Duration::from_millis(100);
/// A wake-up the monitor already ran past is not time's doing (a ledger that cannot be read
/// is keyed due at once; a record the monitor could not move): a change re-plans, and failing
/// one the worker looks again after this long rather than in a loop.
const STILL_DUE: Duration = Duration::from_secs(60);
/// The deliverer's waits after a pass that failed (the store is down): doubling from the first
/// to the last, so a delivery due meanwhile is sent within the last of the store's return.
const DELIVERY_RETRY: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(4));

/// Waits until the change feed has its baseline, so that a worker's first pass reads the store
/// after it. A write between the two would otherwise be in neither — the pass ran before it,
/// the baseline already holds it — and wait for the worker's next due time: a decision the
/// GitHub sync takes at start would not reach its comment. A feed that cannot start says so in
/// the log, and the workers go on without it after `FEED_WAIT`.
async fn after_feed_baseline(app: &App) {
    let mut ready = app.feed_ready.subscribe();
    let _ = tokio::time::timeout(FEED_WAIT, ready.wait_for(|r| *r)).await;
}

/// Sleeps for `wait`, forever when there is none.
async fn sleep_for(wait: Option<Duration>) {
    match wait {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending::<()>().await,
    }
}

/// How long from `now` until `at` (epoch ms; none when it has passed).
fn until(at: i64, now: i64) -> Duration {
    Duration::from_millis(u64::try_from(at - now).unwrap_or(0))
}

/// A change came (`got`): waits [`PLAN_GAP`] and takes every change that came meanwhile, so a
/// burst is planned for once. `false` when the feed has closed (the server is stopping).
async fn take_changes(got: Result<Change, RecvError>, changes: &mut Receiver<Change>) -> bool {
    take_changes_after(got, changes, PLAN_GAP).await
}

/// [`take_changes`] after `gap`.
async fn take_changes_after(
    got: Result<Change, RecvError>,
    changes: &mut Receiver<Change>,
    gap: Duration,
) -> bool {
    if matches!(got, Err(RecvError::Closed)) {
        return false;
    }
    tokio::time::sleep(gap).await;
    loop {
        match changes.try_recv() {
            Ok(_) | Err(TryRecvError::Lagged(_)) => {}
            Err(TryRecvError::Empty) => return true,
            Err(TryRecvError::Closed) => return false,
        }
    }
}

/// A lasting condition is logged when it begins (or changes), not on every try.
#[derive(Default)]
struct Said(Option<String>);

impl Said {
    fn once(&mut self, text: String) {
        if self.0.as_deref() != Some(text.as_str()) {
            crate::log::line(&text);
            self.0 = Some(text);
        }
    }

    fn clear(&mut self) {
        self.0 = None;
    }
}

/// When the monitor next runs for a wake-up planned at `at` (epoch ms, never before `now`);
/// `just_ran`: the monitor ran through since the last change. `None`: only a change can make
/// it act.
fn wait_for(at: Option<i64>, just_ran: bool, now: i64) -> Option<Duration> {
    let at = at?;
    if just_ran && at <= now {
        return Some(STILL_DUE);
    }
    Some(until(at, now))
}

pub fn start(app: Arc<App>) {
    tokio::spawn(async move {
        let mut changes = app.changes.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        after_feed_baseline(&app).await;
        let mut said = Said::default();
        // The monitor ran through since the last change; its last run failed; another
        // replica held the monitor duty at the last try.
        let mut just_ran = false;
        let mut failed = false;
        let mut held = false;
        loop {
            let now = system_now_ms();
            let planned = app
                .in_background(move |ws| agentx_clarify_command::query::next_wakeup(ws, now))
                .await;
            let due = planned.as_ref().ok().copied().flatten();
            let wait = match planned {
                Ok(_) if failed => Some(RETRY),
                // The holder's pass moves the due time (its change re-plans here); failing
                // that, a look within the duty's TTL finds a killed holder's lease lapsed.
                Ok(at) if held => wait_for(at, false, now).map(|w| w.max(duty::HELD_LOOK)),
                Ok(at) => wait_for(at, just_ran, now),
                Err(e) => {
                    said.once(format!(
                        "worker: cannot plan the next wake-up: {}",
                        e.code()
                    ));
                    Some(RETRY)
                }
            };
            tokio::select! {
                _ = sleep_for(wait) => {
                    let began = system_now_ms();
                    match monitor(Arc::clone(&app)).await {
                        Ok(Ran::Ran(done)) => {
                            if let Some(due) = due {
                                app.duties.monitor_began(due, began);
                            }
                            said.clear();
                            failed = false;
                            held = false;
                            just_ran = true;
                            crate::log::line(&done);
                        }
                        Ok(Ran::Held(holder)) => {
                            failed = false;
                            held = true;
                            said.once(format!(
                                "worker: the monitor duty is held by {holder}: this replica skips the pass"
                            ));
                        }
                        Err(why) => {
                            failed = true;
                            said.once(why);
                        }
                    }
                }
                got = changes.recv() => {
                    if !take_changes(got, &mut changes).await {
                        return;
                    }
                    just_ran = false;
                }
                _ = shutdown.changed() => return,
            }
        }
    });
}

/// One monitor pass under the monitor duty's lease, with routing as `[clarify]
/// route_on_retry` says: what it did, that another replica holds the duty, or why it could
/// not run.
async fn monitor(app: Arc<App>) -> Result<Ran<String>, String> {
    let runner = app.ws.shared_runner();
    let duties = Arc::clone(&app);
    let ran = app
        .in_background(move |store| {
            duty::run(&store.state, &duty::MONITOR, &duties.duties, || {
                agentx_clarify_command::route::monitor_routed(
                    store,
                    &*runner,
                    &system_now_ms,
                    false,
                    None,
                    1,
                )
            })
        })
        .await;
    match ran {
        Ok(Ran::Ran(done)) => {
            let r = &done.run.report;
            Ok(Ran::Ran(format!(
                "worker: monitor ran (stale {}, escalated {}, retried {})",
                r.stale.len(),
                r.escalated.len(),
                r.retried.len()
            )))
        }
        Ok(Ran::Held(holder)) => Ok(Ran::Held(holder)),
        Err(e) => Err(format!("worker: the monitor failed: {}", e.code())),
    }
}

/// The notification deliverer (docs/notifications.md): one delivery pass at start, after
/// every change the feed reports (a new escalation is owed at once), and when the next
/// pending delivery falls due (a retry, a ladder step, a reminder) — the same pass as `agentx
/// notify send`, so the two may run side by side (each delivery is leased to one of them).
///
/// A pass reads every ledger (what each sink is owed is derived from them), so under a burst
/// of writes the passes a change starts are spaced: after a change the deliverer waits
/// [`PLAN_GAP`], or as long as its last pass took when that was longer (at most
/// [`MAX_SPACING`]), and takes every change that came meanwhile — one pass for the lot, and
/// the deliverer never holds a core for more than about half the time (issue 50 item 5: the
/// worker cost one pass per decision).
///
/// The next wake-up comes from the outbox's due times whatever the last pass did: after a
/// pass that failed (the store is down) the outbox is read again for them, and, while it
/// cannot be, the pass is tried again after a short, growing wait — so a delivery that fell
/// due meanwhile is sent within seconds of the store's return, not on the next change.
pub fn start_notify(app: Arc<App>) {
    tokio::spawn(async move {
        let mut changes = app.changes.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        let mut said = Said::default();
        let mut backoff = Backoff::new(DELIVERY_RETRY.0, DELIVERY_RETRY.1);
        after_feed_baseline(&app).await;
        loop {
            let ws = Arc::clone(&app.ws);
            let public_url = app.public_url.clone();
            let began = std::time::Instant::now();
            let ran = tokio::task::spawn_blocking(move || {
                agentx_clarify_notify::pass_with(&ws, system_now_ms(), public_url.as_deref())
            })
            .await;
            let spacing = began.elapsed().clamp(PLAN_GAP, MAX_SPACING);
            let wait = match ran {
                Ok(Ok(report)) => {
                    said.clear();
                    backoff.succeeded();
                    if report.delivered > 0 || !report.failed.is_empty() {
                        crate::log::line(&format!(
                            "worker: notifications: {} delivered, {} failed, {} pending",
                            report.delivered,
                            report.failed.len(),
                            report.pending
                        ));
                    }
                    report.next_due.map(|at| until(at, system_now_ms()))
                }
                failed => {
                    said.once(match failed {
                        Ok(Err(e)) => format!("worker: notifications: {}", e.code()),
                        _ => "worker: notifications: the pass did not finish".into(),
                    });
                    let (retry, _) = backoff.failed();
                    Some(after_failure(&app, retry).await)
                }
            };
            tokio::select! {
                _ = sleep_for(wait) => {}
                got = changes.recv() => {
                    if !take_changes_after(got, &mut changes, spacing).await {
                        return;
                    }
                }
                _ = shutdown.changed() => return,
            }
        }
    });
}

/// The wait after a delivery pass that failed: until the outbox's next due time when it can
/// be read and is later than `retry`, else `retry` (a due time already past would only fail
/// again at once).
async fn after_failure(app: &App, retry: Duration) -> Duration {
    let ws = Arc::clone(&app.ws);
    let due = tokio::task::spawn_blocking(move || {
        let store = ws.store()?;
        agentx_clarify_notify::home::Home(&*store).read_outbox()
    })
    .await;
    match due {
        Ok(Ok(outbox)) => outbox
            .next_due()
            .map_or(retry, |at| until(at, system_now_ms()).max(retry)),
        _ => retry,
    }
}

/// GitHub Mode (docs/github.md): `agentx github sync` every minute while `[github]` is set —
/// decisions commented on the issues are taken, and the comment updates sent by the notify
/// deliverer's next pass (a decision is a change of the feed).
pub fn start_github(app: Arc<App>) {
    tokio::spawn(async move {
        let mut shutdown = app.shutdown.subscribe();
        let mut said = None::<String>;
        after_feed_baseline(&app).await;
        loop {
            let ws = Arc::clone(&app.ws);
            let duties = Arc::clone(&app);
            let ran = tokio::task::spawn_blocking(move || {
                let store = ws.store()?;
                if store.files.settings().github()?.is_none() {
                    return Ok(None);
                }
                duty::run(&store.state, &duty::GITHUB, &duties.duties, || {
                    agentx_clarify_notify::github::sync(&ws, system_now_ms())
                })
                .map(Some)
            })
            .await;
            let (news, failure) = match ran {
                // Another replica syncs this minute; this one looks again at its next.
                Ok(Ok(Some(Ran::Held(holder)))) => (
                    None,
                    Some(format!("worker: github: the sync duty is held by {holder}")),
                ),
                Ok(Ok(Some(Ran::Ran(r)))) => {
                    let news = (!r.acted.is_empty() || !r.refused.is_empty()).then(|| {
                        format!(
                            "worker: github: {} acted, {} refused",
                            r.acted.len(),
                            r.refused.len()
                        )
                    });
                    (
                        news,
                        r.errors.first().map(|e| format!("worker: github: {e}")),
                    )
                }
                Ok(Ok(None)) => (None, None),
                Ok(Err(e)) => (None, Some(format!("worker: github: {}", e.code()))),
                Err(_) => (None, Some("worker: github: the sync did not finish".into())),
            };
            if let Some(n) = news {
                crate::log::line(&n);
            }
            // A lasting failure is said once, not every minute.
            if failure.is_some() && failure != said {
                if let Some(f) = &failure {
                    crate::log::line(f);
                }
            }
            said = failure;
            tokio::select! {
                _ = tokio::time::sleep(GITHUB_EVERY) => {}
                _ = shutdown.changed() => return,
            }
        }
    });
}

/// How often the worker reads GitHub (docs/protocol.md §26).
const GITHUB_EVERY: Duration = Duration::from_secs(60);
