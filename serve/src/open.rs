//! The open records, kept in memory for the inbox's first page. Listing them by reading every
//! ledger costs a read of every finished issue too: 6.7 s per page at 110,000 ledgers
//! (docs/benchmarks.md "The server"). The server already follows the store's change feed, so
//! it reads every ledger once, after the feed has taken its baseline, and from then on
//! re-reads only the ledgers the feed names. The records come from the same ledgers and the
//! same rule (`Status::is_open`) as `clarify list`; nothing here decides a protocol rule.
//!
//! Until the first read is done — or when the feed could not start, or a read of the view
//! failed (until it is rebuilt in the background) — the inbox reads every ledger as before,
//! so a page is never built from a view that may have missed a write.
//!
//! This file is the view and how a page asks it; the task that fills it and follows the feed
//! is `open_follow.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use agentx_clarify_core::ledger::{Ledger, Record, Status};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::ClarifyError;

/// The open records by issue, and the ledgers that could not be read.
#[derive(Default)]
pub struct View {
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
    /// Pages waiting for the view to apply a revision are woken when it does (`wait_applied`).
    moved: (std::sync::Mutex<()>, std::sync::Condvar),
}

fn file_of(issue: u32) -> String {
    format!("issue-{issue}.json")
}

impl View {
    /// Issue `issue`'s ledger as read now (`None`: there is none).
    pub fn set(&mut self, issue: u32, ledger: Option<Ledger>) {
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

    /// How many open records it holds.
    pub fn len(&self) -> usize {
        self.open.values().map(Vec::len).sum()
    }

    /// A ledger a full read could not use.
    pub fn unreadable(&mut self, error: ReportError) {
        self.errors.insert(error.file.clone(), error);
    }

    /// Issue `issue`'s ledger could not be read again: its records leave the view.
    pub fn failed(&mut self, issue: u32, error: &ClarifyError) {
        self.open.remove(&issue);
        self.errors
            .insert(file_of(issue), ReportError::new(file_of(issue), error));
    }
}

impl OpenRecords {
    /// Replaces the view (`None`: it cannot be trusted until the next full read).
    pub fn put(&self, view: Option<View>) {
        *self.view.write().unwrap_or_else(PoisonError::into_inner) = view;
        self.wake_pages();
    }

    fn wake_pages(&self) {
        let _held = self.moved.0.lock().unwrap_or_else(PoisonError::into_inner);
        self.moved.1.notify_all();
    }

    /// Waits at most `timeout` for the view to apply `revision` — woken when it does, not on a
    /// timer — and says whether it has (a view that is not built never will).
    pub fn wait_applied(&self, revision: u64, timeout: std::time::Duration) -> bool {
        let held = self.moved.0.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = self
            .moved
            .1
            .wait_timeout_while(held, timeout, |_| {
                self.applied.load(Ordering::SeqCst) < revision && self.is_built()
            })
            .unwrap_or_else(PoisonError::into_inner);
        self.applied.load(Ordering::SeqCst) >= revision
    }

    /// `f` on the view, under its write lock; `None` when there is no view.
    pub fn update<T>(&self, f: impl FnOnce(&mut View) -> T) -> Option<T> {
        let mut guard = self.view.write().unwrap_or_else(PoisonError::into_inner);
        guard.as_mut().map(f)
    }

    /// The feed revision the view has applied (`/metrics`: how far it is behind).
    pub fn applied_revision(&self) -> u64 {
        self.applied.load(Ordering::SeqCst)
    }

    /// Every change of the feed up to `revision` is in the view.
    pub fn applied(&self, revision: u64) {
        self.applied.fetch_max(revision, Ordering::SeqCst);
        self.wake_pages();
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
