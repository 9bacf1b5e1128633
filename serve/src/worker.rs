//! The worker (docs/protocol.md §23): runs the monitor when the core says something falls due (its next
//! wake-up) — never on a fixed tick. A change from the feed re-plans (a new record may fall due
//! sooner); shutdown ends it. The monitor routes what it retried when `[clarify]
//! route_on_retry` says so, through the command layer's routed entry point, as `agentx
//! clarify monitor` does. Two servers on one store do not double-act: every write is
//! read–decide–write under the ledger's lock, so the second monitor finds the work done.

use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_store::clock::system_now_ms;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::hub::App;
use crate::open_follow::FEED_WAIT;

/// After a failed store call, the worker tries again after this long.
const RETRY: Duration = Duration::from_secs(5);

/// Waits until the change feed has its baseline, so that a worker's first pass reads the store
/// after it. A write between the two would otherwise be in neither — the pass ran before it,
/// the baseline already holds it — and wait for the worker's next due time: a decision the
/// GitHub sync takes at start would not reach its comment. A feed that cannot start says so in
/// the log, and the workers go on without it after `FEED_WAIT`.
async fn after_feed_baseline(app: &App) {
    let mut ready = app.feed_ready.subscribe();
    let _ = tokio::time::timeout(FEED_WAIT, ready.wait_for(|r| *r)).await;
}

pub fn start(app: Arc<App>) {
    tokio::spawn(async move {
        let mut changes = app.changes.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        after_feed_baseline(&app).await;
        loop {
            let planned = app.call("nextWakeup".into(), json!({}), None).await;
            let wait = match planned.get("ok") {
                Some(Value::Bool(true)) => {
                    planned.get("wakeup").and_then(Value::as_i64).map(|at| {
                        Duration::from_millis(u64::try_from(at - system_now_ms()).unwrap_or(0))
                    })
                }
                _ => Some(RETRY),
            };
            let due = async {
                match wait {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = due => {
                    let done = monitor(&app).await;
                    crate::log::line(&done);
                }
                got = changes.recv() => {
                    if matches!(got, Err(RecvError::Closed)) {
                        return;
                    }
                }
                _ = shutdown.changed() => return,
            }
        }
    });
}

async fn monitor(app: &App) -> String {
    let ws = Arc::clone(&app.ws);
    let ran = tokio::task::spawn_blocking(move || {
        // The store first, so that a store that cannot be reached is said as such.
        ws.store()?;
        Ok::<Value, agentx_clarify_core::ClarifyError>(ws.call_routed("monitor", &json!({})))
    })
    .await;
    match ran {
        Ok(Ok(out)) if out.get("ok") == Some(&Value::Bool(true)) => {
            let count = |k: &str| {
                out.pointer(&format!("/report/{k}"))
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
            };
            format!(
                "worker: monitor ran (stale {}, escalated {}, retried {})",
                count("stale"),
                count("escalated"),
                count("retried")
            )
        }
        Ok(Ok(out)) => format!(
            "worker: the monitor failed: {}",
            out.pointer("/error/code")
                .and_then(Value::as_str)
                .unwrap_or("?")
        ),
        Ok(Err(e)) => format!("worker: cannot open the store: {}", e.code()),
        Err(_) => "worker: the monitor did not finish".into(),
    }
}

/// The notification deliverer (docs/notifications.md): one delivery pass at start, after
/// every change the feed reports (a new escalation is owed at once), and when the next
/// pending delivery falls due (a retry, a ladder step, a reminder) — the same pass as `agentx
/// notify send`, so the two may run side by side (each delivery is leased to one of them).
pub fn start_notify(app: Arc<App>) {
    tokio::spawn(async move {
        let mut changes = app.changes.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        let mut said = None::<String>;
        after_feed_baseline(&app).await;
        loop {
            let ws = Arc::clone(&app.ws);
            let public_url = app.public_url.clone();
            let ran = tokio::task::spawn_blocking(move || {
                agentx_clarify_notify::pass_with(&ws, system_now_ms(), public_url.as_deref())
            })
            .await;
            let wait = match ran {
                Ok(Ok(report)) => {
                    said = None;
                    if report.delivered > 0 || !report.failed.is_empty() {
                        crate::log::line(&format!(
                            "worker: notifications: {} delivered, {} failed, {} pending",
                            report.delivered,
                            report.failed.len(),
                            report.pending
                        ));
                    }
                    report.next_due.map(|at| {
                        Duration::from_millis(u64::try_from(at - system_now_ms()).unwrap_or(0))
                    })
                }
                // Said once, not on every change (a lasting failure, as settings that do not
                // parse).
                Ok(Err(e)) => {
                    let text = format!("worker: notifications: {}", e.code());
                    if said.as_deref() != Some(text.as_str()) {
                        crate::log::line(&text);
                        said = Some(text);
                    }
                    None
                }
                Err(_) => Some(RETRY),
            };
            let due = async {
                match wait {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = due => {}
                got = changes.recv() => {
                    if matches!(got, Err(RecvError::Closed)) {
                        return;
                    }
                }
                _ = shutdown.changed() => return,
            }
        }
    });
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
            let ran = tokio::task::spawn_blocking(move || {
                let on = ws.store()?.files.settings().github()?.is_some();
                if on {
                    agentx_clarify_notify::github::sync(&ws, system_now_ms()).map(Some)
                } else {
                    Ok(None)
                }
            })
            .await;
            let (news, failure) = match ran {
                Ok(Ok(Some(r))) => {
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
