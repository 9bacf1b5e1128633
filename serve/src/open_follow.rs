//! Keeps the open records (`open.rs`) current: once the change feed has taken its baseline,
//! reads every ledger once, then re-reads only the ledgers each change names; reads everything
//! again when it falls behind the feed (a lagged channel).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_command::{query, State as _};
use tokio::sync::broadcast::error::RecvError;

use crate::hub::App;
use crate::open::View;

/// How long the view waits for the feed's baseline before giving up (live updates off).
pub(crate) const FEED_WAIT: Duration = Duration::from_secs(30);

/// For the tests only: `AGENTX_TEST_OPEN_VIEW_DELAY_MS` (at most 2 s) holds each change back
/// before the view applies it, so a test can show that a page never answers from a view
/// that has not caught up with the feed (`cli/tests/serve.rs`).
const TEST_DELAY: &str = "AGENTX_TEST_OPEN_VIEW_DELAY_MS";

/// Builds the view once the feed has its baseline, then follows the feed.
pub fn start(app: Arc<App>) {
    tokio::spawn(async move {
        let mut changes = app.changes.subscribe();
        let mut ready = app.feed_ready.subscribe();
        let mut shutdown = app.shutdown.subscribe();
        if tokio::time::timeout(FEED_WAIT, ready.wait_for(|r| *r))
            .await
            .is_err()
        {
            return;
        }
        loop {
            // A full read: every ledger, as `clarify list` reads them. Changes that arrive
            // meanwhile wait in the channel and are applied after it.
            // Every change up to this revision is in what the read below sees; later ones
            // wait in the channel.
            let start = app.revision.load(Ordering::SeqCst);
            let loaded = app
                .in_background(|ws| {
                    let (ledgers, errors) = query::read_all(ws)?;
                    let mut view = View::default();
                    for l in ledgers {
                        view.set(l.issue_number, Some(l));
                    }
                    for e in errors {
                        view.unreadable(e);
                    }
                    Ok(view)
                })
                .await;
            match loaded {
                Ok(view) => {
                    app.open.put(Some(view));
                    app.open.applied(start);
                }
                Err(e) => {
                    crate::log::line(&format!(
                        "inbox: the open records could not be read ({}); pages read every ledger",
                        e.code()
                    ));
                    return;
                }
            }
            // Follow the feed until the channel lags (then read everything again).
            loop {
                let (revision, issues) = tokio::select! {
                    got = changes.recv() => match got {
                        Ok(change) => (change.revision, change.issues),
                        Err(RecvError::Lagged(_)) => break,
                        Err(RecvError::Closed) => return,
                    },
                    _ = shutdown.changed() => return,
                };
                if issues.is_empty() {
                    app.open.applied(revision);
                    continue;
                }
                if let Some(pause) = crate::feed::test_delay(TEST_DELAY) {
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
                let Ok(read) = read else { break };
                let updated = app.open.update(|view| {
                    for (issue, ledger) in read {
                        match ledger {
                            Ok(l) => view.set(issue, l),
                            Err(e) => view.failed(issue, &e),
                        }
                    }
                });
                if updated.is_none() {
                    break;
                }
                app.open.applied(revision);
            }
            app.open.put(None);
        }
    });
}
