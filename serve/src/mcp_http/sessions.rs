//! The `/mcp` sessions as the server in front of rmcp keeps them (docs/protocol.md §24): whose
//! token opened each, when it was last used, and how many of its requests are under way (a
//! request is under way until its response has been sent to the end: a tool call's event
//! stream, an elicitation's wait).
//!
//! A session costs memory until it ends (about 93 KB in rmcp), and a client that opens one per
//! call and never closes it leaves them all behind (10,000 took the server from 17 to 912
//! MB). So:
//! - **at most [`PER_TOKEN`] per agent token**: a token that opens one more has its least
//!   recently used session that is not in use closed — the oldest idle first;
//! - **an idle session ends after [`IDLE_FOR`]**: no request under way and none that long.
//!
//! A session in use is never closed by either rule. How many the server keeps is the
//! `agentx_mcp_sessions` gauge of `/metrics` (docs/protocol.md §23.2).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::metrics::gauge::Gauge;

/// Sessions kept per agent token.
pub const PER_TOKEN: usize = 16;
/// How long a session may stay idle (nothing under way) before it ends.
pub const IDLE_FOR: Duration = Duration::from_secs(120);

struct Session {
    token: String,
    last: Instant,
    /// The book's count of uses when it was last used: which is older, even within one tick
    /// of the clock.
    used: u64,
    busy: usize,
}

/// Every session the server knows, by id, and the count of uses; `count` follows how many.
#[derive(Default)]
pub struct Book {
    all: Mutex<(u64, HashMap<String, Session>)>,
    count: Gauge,
}

/// The book's lock, which sets the gauge to the number of sessions as it is released (so no
/// change of the map can miss it).
struct Locked<'b> {
    guard: std::sync::MutexGuard<'b, (u64, HashMap<String, Session>)>,
    count: &'b Gauge,
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.count
            .set(i64::try_from(self.guard.1.len()).unwrap_or(i64::MAX));
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = (u64, HashMap<String, Session>);
    fn deref(&self) -> &Self::Target {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.guard
    }
}

/// A request under way in a session: the session is in use until it is dropped (when the
/// response has been sent, or the client went away).
pub struct InUse {
    book: Arc<Book>,
    id: String,
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut book = self.book.lock();
        let (uses, all) = &mut *book;
        if let Some(s) = all.get_mut(&self.id) {
            *uses += 1;
            s.busy = s.busy.saturating_sub(1);
            s.last = Instant::now();
            s.used = *uses;
        }
    }
}

impl Book {
    /// A book whose size `count` shows (the gauge `/metrics` registers).
    pub fn counted(count: Gauge) -> Self {
        Book {
            all: Mutex::default(),
            count,
        }
    }

    fn lock(&self) -> Locked<'_> {
        Locked {
            guard: self.all.lock().unwrap_or_else(PoisonError::into_inner),
            count: &self.count,
        }
    }

    /// The token that opened session `id`, if the server knows it.
    pub fn owner(&self, id: &str) -> Option<String> {
        self.lock().1.get(id).map(|s| s.token.clone())
    }

    /// A request of session `id` begins (`None`: no such session here).
    pub fn begin(self: &Arc<Self>, id: &str) -> Option<InUse> {
        let mut book = self.lock();
        let (uses, all) = &mut *book;
        let s = all.get_mut(id)?;
        *uses += 1;
        s.busy += 1;
        s.last = Instant::now();
        s.used = *uses;
        Some(InUse {
            book: Arc::clone(self),
            id: id.to_owned(),
        })
    }

    /// Session `id` was opened by `token` (its first request is under way, as the returned
    /// guard says); the sessions to close so that the token keeps at most [`PER_TOKEN`]:
    /// its least recently used ones not in use.
    pub fn opened(self: &Arc<Self>, id: &str, token: &str) -> (InUse, Vec<String>) {
        let mut book = self.lock();
        let (uses, all) = &mut *book;
        *uses += 1;
        all.insert(
            id.to_owned(),
            Session {
                token: token.to_owned(),
                last: Instant::now(),
                used: *uses,
                busy: 1,
            },
        );
        let mut idle: Vec<(u64, String)> = all
            .iter()
            .filter(|(sid, s)| s.token == token && s.busy == 0 && sid.as_str() != id)
            .map(|(sid, s)| (s.used, sid.clone()))
            .collect();
        let held = all.values().filter(|s| s.token == token).count();
        idle.sort();
        let close: Vec<String> = idle
            .into_iter()
            .take(held.saturating_sub(PER_TOKEN))
            .map(|(_, sid)| sid)
            .collect();
        for sid in &close {
            all.remove(sid);
        }
        let in_use = InUse {
            book: Arc::clone(self),
            id: id.to_owned(),
        };
        (in_use, close)
    }

    /// The sessions idle for [`IDLE_FOR`] by `now`, forgotten here (to be closed).
    pub fn expired(&self, now: Instant) -> Vec<String> {
        let mut book = self.lock();
        let all = &mut book.1;
        let gone: Vec<String> = all
            .iter()
            .filter(|(_, s)| s.busy == 0 && now.saturating_duration_since(s.last) >= IDLE_FOR)
            .map(|(sid, _)| sid.clone())
            .collect();
        for sid in &gone {
            all.remove(sid);
        }
        gone
    }

    /// Session `id` ended (closed by its client, or gone from rmcp).
    pub fn forget(&self, id: &str) {
        self.lock().1.remove(id);
    }

    /// How many sessions the server keeps.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().1.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_token_keeps_its_newest_sessions_and_never_loses_one_in_use() {
        let book = Arc::new(Book::default());
        let mut closed = Vec::new();
        // The first session stays in use throughout.
        let (busy, none) = book.opened("s0", "tok");
        assert!(none.is_empty());
        for n in 1..=PER_TOKEN + 5 {
            let (in_use, close) = book.opened(&format!("s{n}"), "tok");
            drop(in_use);
            closed.extend(close);
        }
        assert_eq!(book.len(), PER_TOKEN);
        assert!(book.owner("s0").is_some(), "in use: kept");
        // The oldest idle ones went first.
        assert_eq!(closed, ["s1", "s2", "s3", "s4", "s5", "s6"]);
        // Another token's sessions do not count.
        let (other, close) = book.opened("x", "other");
        assert!(close.is_empty());
        drop(other);
        drop(busy);
        let later = Instant::now() + IDLE_FOR;
        assert_eq!(book.expired(later).len(), PER_TOKEN + 1);
        assert_eq!(book.len(), 0);
    }

    #[test]
    fn the_gauge_follows_the_sessions_kept() {
        let gauge = Gauge::default();
        let book = Arc::new(Book::counted(gauge.clone()));
        for n in 0..PER_TOKEN + 3 {
            drop(book.opened(&format!("s{n}"), "tok").0);
        }
        assert_eq!(gauge.get(), i64::try_from(PER_TOKEN).unwrap());
        book.forget("s18");
        assert_eq!(gauge.get(), i64::try_from(PER_TOKEN - 1).unwrap());
        book.expired(Instant::now() + IDLE_FOR);
        assert_eq!(gauge.get(), 0);
    }

    #[test]
    fn a_session_in_use_does_not_expire() {
        let book = Arc::new(Book::default());
        let (first, _) = book.opened("s", "tok");
        drop(first);
        let request = book.begin("s").unwrap();
        assert!(book.expired(Instant::now() + IDLE_FOR * 2).is_empty());
        drop(request);
        assert_eq!(book.expired(Instant::now() + IDLE_FOR), ["s"]);
        assert!(book.begin("s").is_none());
    }
}
