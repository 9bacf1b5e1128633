//! Keeps the open records (`open.rs`) current: once the change feed has taken its baseline,
//! reads every ledger once, then re-reads only the ledgers each change names.
//!
//! The changes come on a queue of the view's own (`feed.rs` sends every change there as well
//! as to the broadcast the pages and the worker hear), which never drops one: a view fed by
//! the broadcast lost changes whenever a busy hub outran it (a lagged channel), and then read
//! everything again while more came — under load it never caught up. Changes that wait are
//! taken together, each ledger read once.
//!
//! When a read fails (the store is down) the view is set aside — pages read every ledger, as
//! before it was built — and rebuilt in the background: the full read is tried again after
//! a growing wait until it succeeds, and the log says when the view is gone and when it is
//! back. It never gives up for good.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_command::{query, State as _};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::backoff::Backoff;
use crate::hub::{App, Change};
use crate::open::View;

/// How long the view waits for the feed's baseline before giving up (live updates off).
pub(crate) const FEED_WAIT: Duration = Duration::from_secs(30);

/// The waits between full reads that fail: from the first to the last.
const REBUILD: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(5));

/// Builds the view once the feed has its baseline, then follows `changes` (the feed's queue
/// for the view); rebuilds it whenever a read fails.
pub fn start(app: Arc<App>, mut changes: UnboundedReceiver<Change>) {
    tokio::spawn(async move {
        let mut ready = app.feed_ready.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        if tokio::time::timeout(FEED_WAIT, ready.wait_for(|r| *r))
            .await
            .is_err()
        {
            return;
        }
        let mut backoff = Backoff::new(REBUILD.0, REBUILD.1);
        loop {
            // Every change up to this revision is in what the read below sees; later ones
            // wait on the queue and are applied after it.
            let start = app.revision.load(Ordering::SeqCst);
            let tallies = Arc::clone(&app);
            match app
                .in_background(move |ws| read_all(ws, &tallies.metrics.tallies))
                .await
            {
                Ok(view) => {
                    let open = view.len();
                    app.open.put(Some(view));
                    app.open.applied(start);
                    if let Some((down, _)) = backoff.succeeded() {
                        crate::log::line(&format!(
                            "inbox: the view of the open records is built again ({open} open records, {:.1} s without it)",
                            down.as_secs_f64()
                        ));
                    }
                }
                Err(e) => {
                    let (wait, began) = backoff.failed();
                    if began {
                        crate::log::line(&format!(
                            "inbox: the open records could not be read ({}); pages read every ledger until the view is built again",
                            e.code()
                        ));
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => continue,
                        _ = shutdown.changed() => return,
                    }
                }
            }
            match follow(&app, &mut changes, &mut shutdown).await {
                Followed::Stop => return,
                Followed::Failed(code) => {
                    // Set aside until rebuilt: a page must never answer from a view that
                    // missed a write.
                    app.open.put(None);
                    let _ = backoff.failed();
                    crate::log::line(&format!(
                        "inbox: a change could not be read ({code}); the view of the open records is rebuilt in the background"
                    ));
                }
            }
        }
    });
}

/// Every ledger, as `clarify list` reads them; each one's figures go to `tallies` (`/metrics`).
fn read_all(
    ws: &agentx_clarify_workspace::WorkspaceStore,
    tallies: &crate::metrics::tally::Tallies,
) -> Result<View, agentx_clarify_core::ClarifyError> {
    let (ledgers, errors) = query::read_all(ws)?;
    let mut view = View::default();
    for l in ledgers {
        tallies.set(l.issue_number, Some(&l));
        view.set(l.issue_number, Some(l));
    }
    tallies.completed();
    for e in errors {
        view.unreadable(e);
    }
    Ok(view)
}

/// How following the feed ended.
enum Followed {
    /// Shutdown, or the feed is gone.
    Stop,
    /// A changed ledger could not be read (its code): the view must be read again.
    Failed(&'static str),
}

/// Applies the changes as they come — those that waited together, each ledger read once —
/// until a read fails or the server stops.
async fn follow(
    app: &App,
    changes: &mut UnboundedReceiver<Change>,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Followed {
    loop {
        let first = tokio::select! {
            got = changes.recv() => match got {
                Some(change) => change,
                None => return Followed::Stop,
            },
            _ = shutdown.changed() => return Followed::Stop,
        };
        let mut revision = first.revision;
        let mut issues: BTreeSet<u32> = first.issues.into_iter().collect();
        while let Ok(more) = changes.try_recv() {
            revision = revision.max(more.revision);
            issues.extend(more.issues);
        }
        if issues.is_empty() {
            app.open.applied(revision);
            continue;
        }
        if let Some(pause) = crate::test_hooks::pause(crate::test_hooks::OPEN_VIEW) {
            crate::test_hooks::mark(crate::test_hooks::OPEN_VIEW_MARK);
            tokio::time::sleep(pause).await;
        }
        let read = app
            .in_background(move |ws| {
                Ok(issues
                    .into_iter()
                    .map(|i| (i, ws.read_ledger(i)))
                    .collect::<Vec<_>>())
            })
            .await;
        let read = match read {
            Ok(read) => read,
            Err(e) => return Followed::Failed(e.code()),
        };
        // One that cannot be read because the store is down (not because it is corrupt:
        // that one is reported, as a full read reports it) means the view may be missing it.
        if let Some((_, Err(e))) = read
            .iter()
            .find(|(_, l)| l.as_ref().is_err_and(|e| e.code() == "IO_ERROR"))
        {
            return Followed::Failed(e.code());
        }
        let updated = app.open.update(|view| {
            for (issue, ledger) in read {
                match ledger {
                    Ok(l) => {
                        app.metrics.tallies.set(issue, l.as_ref());
                        view.set(issue, l);
                    }
                    Err(e) => view.failed(issue, &e),
                }
            }
        });
        if updated.is_none() {
            return Followed::Failed("NO_VIEW");
        }
        app.open.applied(revision);
    }
}
