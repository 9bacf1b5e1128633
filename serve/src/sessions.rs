//! Who is signed in, kept in this process only (docs/protocol.md §23): the sessions by the hash
//! of their cookie, the one-time start-up link and the failed sign-in counts. The state is
//! held by `hub::App`; reading a request's credentials is `auth.rs`'s.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::tokens::{random_text, same_secret, sha256_hex};

/// How long a sign-in lasts (the cookie's `Max-Age`).
pub const SESSION_FOR: Duration = Duration::from_secs(12 * 60 * 60);
const ONCE_FOR: Duration = Duration::from_secs(10 * 60);
const FAILURES_PER_MINUTE: usize = 10;

/// One signed-in person.
#[derive(Clone, Debug)]
pub struct Session {
    pub human: String,
    /// The page's CSRF token (sent back in `X-CSRF-Token` or a form's `csrf` field).
    pub csrf: String,
    expires: Instant,
}

/// Sessions by the SHA-256 of their cookie (the cookie itself is kept nowhere).
#[derive(Default)]
pub struct Sessions(Mutex<HashMap<String, Session>>);

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new session for `human`; returns its cookie value.
    pub fn start(&self, human: &str) -> Option<String> {
        let cookie = random_text(32).ok()?;
        let csrf = random_text(32).ok()?;
        let now = Instant::now();
        let mut all = self.lock();
        all.retain(|_, s| s.expires > now);
        all.insert(
            sha256_hex(&cookie),
            Session {
                human: human.to_owned(),
                csrf,
                expires: now + SESSION_FOR,
            },
        );
        Some(cookie)
    }

    pub fn get(&self, cookie: &str) -> Option<Session> {
        let all = self.lock();
        all.get(&sha256_hex(cookie))
            .filter(|s| s.expires > Instant::now())
            .cloned()
    }

    /// Whether `cookie` was a session that has since expired (not yet swept): the sign-in
    /// page then says so rather than "unknown".
    pub fn lapsed(&self, cookie: &str) -> bool {
        self.lock()
            .get(&sha256_hex(cookie))
            .is_some_and(|s| s.expires <= Instant::now())
    }

    pub fn end(&self, cookie: &str) {
        self.lock().remove(&sha256_hex(cookie));
    }
}

/// The one-time start-up link and the failed sign-in counts.
#[derive(Default)]
pub struct Logins {
    once: Mutex<Option<(String, Instant, String)>>,
    failures: Mutex<HashMap<IpAddr, Vec<Instant>>>,
}

impl Logins {
    /// A new one-time code for `human` (replacing any earlier one); returns it to print.
    pub fn issue(&self, human: &str) -> String {
        let code = random_text(24).unwrap_or_default();
        *self.once.lock().unwrap_or_else(PoisonError::into_inner) = Some((
            sha256_hex(&code),
            Instant::now() + ONCE_FOR,
            human.to_owned(),
        ));
        code
    }

    /// Uses the code: the person it signs in, once.
    pub fn redeem(&self, code: &str) -> Option<String> {
        let mut once = self.once.lock().unwrap_or_else(PoisonError::into_inner);
        let (hash, until, human) = once.as_ref()?;
        if !same_secret(hash, &sha256_hex(code)) || *until < Instant::now() {
            return None;
        }
        let human = human.clone();
        *once = None;
        Some(human)
    }

    pub fn blocked(&self, ip: IpAddr) -> bool {
        let mut all = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let recent = all.entry(ip).or_default();
        recent.retain(|t| t.elapsed() < Duration::from_secs(60));
        recent.len() >= FAILURES_PER_MINUTE
    }

    pub fn failed(&self, ip: IpAddr) {
        let mut all = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        all.entry(ip).or_default().push(Instant::now());
    }
}
