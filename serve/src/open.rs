//! The open records, kept in memory for the inbox's first page. Listing them by reading every
//! ledger costs a read of every finished issue too: 6.7 s per page at 110,000 ledgers
//! (docs/benchmarks.md "The server"). The server already follows the store's change feed, so
//! it reads every ledger once, after the feed has taken its baseline, and from then on
//! re-reads only the ledgers the feed names. The records come from the same ledgers and the
//! same rule (`Status::is_open`) as `clarify list`; nothing here decides a protocol rule.
//!
//! Until the first read is done — or when the feed could not start, or the view fell behind
//! the feed (a lagged channel) — the inbox reads every ledger as before, so a page is never
//! built from a view that may have missed a write.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use agentx_clarify_command::{query, State as _};
use agentx_clarify_core::ledger::{Ledger, Record, Status};
use agentx_clarify_core::monitor::ReportError;
use tokio::sync::broadcast::error::RecvError;

use crate::app::App;

/// How long the view waits for the feed's baseline before giving up (live updates off).
const FEED_WAIT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct View {
    /// Open records by issue (issues without one are absent).
    open: BTreeMap<u32, Vec<Record>>,
    /// Ledgers that could not be read, by file name (a later read of the issue clears it).
    errors: BTreeMap<String, ReportError>,
}

/// The view, `None` while it cannot be trusted, and the feed revision it has applied.
#[derive(Default)]
pub struct OpenRecords {
    view: RwLock<Option<View>>,
    applied: AtomicU64,
}

fn file_of(issue: u32) -> String {
    format!("issue-{issue}.json")
}

impl View {
    fn set(&mut self, issue: u32, ledger: Option<Ledger>) {
        self.errors.remove(&file_of(issue));
        let records: Vec<Record> = ledger
            .map(|l| {
                l.clarifications
                    .into_iter()
                    .filter(|r| r.current_status().is_open())
                    .collect()
            })
            .unwrap_or_default();
        if records.is_empty() {
            self.open.remove(&issue);
        } else {
            self.open.insert(issue, records);
        }
    }
}

impl OpenRecords {
    fn put(&self, view: Option<View>) {
        *self.view.write().unwrap_or_else(PoisonError::into_inner) = view;
    }

    /// Whether the view exists (built and following the feed).
    pub fn is_built(&self) -> bool {
        self.view
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// `f` over the records of `statuses` (every open status when empty), borrowed, in
    /// `query::list`'s order, with the number of ledgers that could not be read; `None` when
    /// the view cannot answer (not built yet, or a status that is not open: those need every
    /// ledger).
    ///
    /// `latest` is the feed's latest revision: a view that has not applied it yet does not
    /// answer (a page reloaded on a live event must show that event's write).
    pub fn with<T>(
        &self,
        latest: u64,
        statuses: &[Status],
        f: impl FnOnce(Vec<(u32, &Record)>, usize) -> T,
    ) -> Option<T> {
        if statuses.iter().any(|s| !s.is_open()) || self.applied.load(Ordering::SeqCst) < latest {
            return None;
        }
        let guard = self.view.read().unwrap_or_else(PoisonError::into_inner);
        let view = guard.as_ref()?;
        let mut records: Vec<(u32, &Record)> = view
            .open
            .iter()
            .flat_map(|(issue, rs)| rs.iter().map(move |r| (*issue, r)))
            .filter(|(_, r)| statuses.is_empty() || statuses.contains(&r.current_status()))
            .collect();
        // `listing::list`'s order: by issue (the map's), then each record's order key.
        records.sort_by(|a, b| (a.0, a.1.order_key()).cmp(&(b.0, b.1.order_key())));
        Some(f(records, view.errors.len()))
    }
}

/// For the tests only: `AGENTX_TEST_OPEN_VIEW_DELAY_MS` (at most 2 s) holds each change back
/// before the view applies it, so a test can show that a page never answers from a view
/// that has not caught up with the feed (`cli/tests/serve.rs`).
fn test_delay() -> Option<Duration> {
    let ms: u64 = std::env::var("AGENTX_TEST_OPEN_VIEW_DELAY_MS")
        .ok()?
        .parse()
        .ok()?;
    Some(Duration::from_millis(ms.min(2_000)))
}

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
                .with_store(|ws| {
                    let (ledgers, errors) = query::read_all(ws)?;
                    let mut view = View::default();
                    for l in ledgers {
                        view.set(l.issue_number, Some(l));
                    }
                    for e in errors {
                        view.errors.insert(e.file.clone(), e);
                    }
                    Ok(view)
                })
                .await;
            match loaded {
                Ok(view) => {
                    app.open.put(Some(view));
                    app.open.applied.fetch_max(start, Ordering::SeqCst);
                }
                Err(e) => {
                    crate::log(&format!(
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
                    app.open.applied.fetch_max(revision, Ordering::SeqCst);
                    continue;
                }
                if let Some(pause) = test_delay() {
                    tokio::time::sleep(pause).await;
                }
                let read = app
                    .with_store(move |ws| {
                        Ok(issues
                            .into_iter()
                            .map(|i| (i, ws.read_ledger(i)))
                            .collect::<Vec<_>>())
                    })
                    .await;
                let Ok(read) = read else { break };
                let mut guard = app
                    .open
                    .view
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                let Some(view) = guard.as_mut() else { break };
                for (issue, ledger) in read {
                    match ledger {
                        Ok(l) => view.set(issue, l),
                        Err(e) => {
                            view.open.remove(&issue);
                            view.errors
                                .insert(file_of(issue), ReportError::new(file_of(issue), &e));
                        }
                    }
                }
                drop(guard);
                app.open.applied.fetch_max(revision, Ordering::SeqCst);
            }
            app.open.put(None);
        }
    });
}
