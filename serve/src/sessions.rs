//! Who is signed in (docs/protocol.md §23): the sessions, kept in the workspace's state store
//! as the `sessions` state document (`.agentx/state/sessions.json`, owner-only, or a row of
//! PostgreSQL's `agentx.state_docs`) by the SHA-256 of their cookie — so every server on the
//! store knows them, they outlive a restart, and a reader of the store learns no cookie
//! (issues 48 and 52). A session opened with a human token names that token: it ends when the
//! token is revoked, on every server, at the next request (the token is looked up each time).
//!
//! The page's CSRF token is derived from the cookie (a hash of it under its own label), never
//! stored. The one-time start-up link and the failed sign-in counts stay in this process
//! ([`Logins`]): the link is this server's own, printed on its terminal.
//!
//! The state is held by `hub::App`; reading a request's credentials is `auth.rs`'s.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use agentx_clarify_command::store::docs::{self, SESSIONS};
use agentx_clarify_command::Files as _;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::Workspace;
use serde::{Deserialize, Serialize};

use crate::tokens::{random_text, same_secret, sha256_hex, Token};

/// How long a sign-in lasts (the cookie's `Max-Age`).
pub const SESSION_FOR: Duration = Duration::from_secs(12 * 60 * 60);
const ONCE_FOR: Duration = Duration::from_secs(10 * 60);
/// Failed sign-ins with one token prefix from one address, per minute, before that prefix is
/// refused there (429).
const FAILURES_PER_MINUTE: usize = 10;
/// Failed sign-ins from one address per minute past which each further failure is answered
/// slowly (never refused: the right token still signs in at once).
const SLOW_AFTER: usize = 10;
/// How slowly (see [`SLOW_AFTER`]).
pub const SLOW_FOR: Duration = Duration::from_secs(1);
/// The counts kept at most (each a minute's failures); past it the oldest go.
const MAX_COUNTED: usize = 10_000;
/// Who holds the lock while the sessions change (the file store's lock file names it).
const LOCK_OWNER: &str = "agentx-sessions";

/// One signed-in person.
#[derive(Clone, Debug)]
pub struct Session {
    pub human: String,
    /// The page's CSRF token (sent back in `X-CSRF-Token` or a form's `csrf` field).
    pub csrf: String,
    /// The SHA-256 of the cookie: the session's name in the store (and in the stream caps).
    pub key: String,
}

/// A session as the store keeps it: never the cookie, only its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    sha256: String,
    human: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    /// Epoch ms.
    created: i64,
    /// Epoch ms.
    expires: i64,
}

/// The `sessions` document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct SessionsDoc {
    /// The host label of the inbox on loopback (`<label>.localhost`), chosen once
    /// (`auth::inbox_host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    #[serde(default)]
    sessions: Vec<Stored>,
}

/// The CSRF token of the session whose cookie is `cookie`.
fn csrf_of(cookie: &str) -> String {
    sha256_hex(&format!("agentx-csrf\0{cookie}"))
}

/// Whether `s` may still be used at `now` with the stored `tokens`.
fn alive(s: &Stored, now: i64, tokens: &[Token]) -> bool {
    s.expires > now
        && s.token
            .as_ref()
            .is_none_or(|id| tokens.iter().any(|t| &t.id == id))
}

/// The sessions of a workspace, in whichever store holds its state.
pub struct Sessions {
    ws: std::sync::Arc<Workspace>,
}

impl Sessions {
    pub fn new(ws: std::sync::Arc<Workspace>) -> Self {
        Sessions { ws }
    }

    fn update<T>(
        &self,
        change: impl FnOnce(&mut SessionsDoc) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let store = self.ws.store()?;
        let config = store.load_config()?;
        docs::try_update_json(&*store, SESSIONS, &config, LOCK_OWNER, change)
    }

    /// A new session for `human` (opened with token `token`, or the one-time link); returns
    /// its cookie value. Sessions that expired or whose token is gone are dropped meanwhile.
    pub fn start(
        &self,
        human: &str,
        token: Option<&str>,
        now: i64,
        tokens: &[Token],
    ) -> Result<String, ClarifyError> {
        let cookie = random_text(32)?;
        let stored = Stored {
            sha256: sha256_hex(&cookie),
            human: human.to_owned(),
            token: token.map(str::to_owned),
            created: now,
            expires: now + i64::try_from(SESSION_FOR.as_millis()).unwrap_or(i64::MAX),
        };
        self.update(|doc| {
            doc.sessions.retain(|s| alive(s, now, tokens));
            doc.sessions.push(stored);
            Ok(())
        })?;
        Ok(cookie)
    }

    /// The live session whose cookie is `cookie`: not expired, and its token (if any) still
    /// among `tokens`. Every stored hash is compared (constant time each).
    pub fn get(
        &self,
        cookie: &str,
        now: i64,
        tokens: &[Token],
    ) -> Result<Option<Session>, ClarifyError> {
        let doc: SessionsDoc = docs::read_json(&*self.ws.store()?, SESSIONS)?;
        let hash = sha256_hex(cookie);
        let mut found = None;
        for s in &doc.sessions {
            if same_secret(&s.sha256, &hash) {
                found = Some(s);
            }
        }
        Ok(found.filter(|s| alive(s, now, tokens)).map(|s| Session {
            human: s.human.clone(),
            csrf: csrf_of(cookie),
            key: s.sha256.clone(),
        }))
    }

    /// Whether the session named `key` ([`Session::key`]) is still alive: what an open event
    /// stream checks at each event.
    pub fn still(&self, key: &str, now: i64, tokens: &[Token]) -> Result<bool, ClarifyError> {
        let doc: SessionsDoc = docs::read_json(&*self.ws.store()?, SESSIONS)?;
        Ok(doc
            .sessions
            .iter()
            .any(|s| s.sha256 == key && alive(s, now, tokens)))
    }

    /// Whether `cookie` was a session that has since expired (not yet swept): the sign-in
    /// page then says so rather than "unknown".
    pub fn lapsed(&self, cookie: &str, now: i64) -> Result<bool, ClarifyError> {
        let doc: SessionsDoc = docs::read_json(&*self.ws.store()?, SESSIONS)?;
        let hash = sha256_hex(cookie);
        Ok(doc
            .sessions
            .iter()
            .any(|s| same_secret(&s.sha256, &hash) && s.expires <= now))
    }

    pub fn end(&self, cookie: &str) -> Result<(), ClarifyError> {
        let hash = sha256_hex(cookie);
        self.update(|doc| {
            doc.sessions.retain(|s| s.sha256 != hash);
            Ok(())
        })
    }

    /// The inbox's host label, chosen once (random) and kept with the sessions, so a
    /// restarted server answers on the name the browser holds cookies for.
    pub fn host_label(&self) -> Result<String, ClarifyError> {
        let doc: SessionsDoc = docs::read_json(&*self.ws.store()?, SESSIONS)?;
        if let Some(label) = doc.host {
            return Ok(label);
        }
        let mut bytes = [0u8; 10];
        getrandom::fill(&mut bytes).map_err(|e| ClarifyError::Io {
            message: format!("cannot draw random bytes: {e}"),
        })?;
        let fresh: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.update(|doc| Ok(doc.host.get_or_insert(format!("agentx-{fresh}")).clone()))
    }
}

/// The one-time start-up link and the failed sign-in counts.
#[derive(Default)]
pub struct Logins {
    once: Mutex<Option<(String, Instant, String)>>,
    /// Failures by address and token prefix (a token's first characters).
    by_prefix: Mutex<HashMap<(IpAddr, String), Vec<Instant>>>,
    /// Failures by address.
    by_address: Mutex<HashMap<IpAddr, Vec<Instant>>>,
}

/// The part of a presented token its failures are counted under: its first ten characters
/// (`axt_` and six of the secret), which a person's real token shares with no guess.
pub fn prefix(presented: &str) -> String {
    presented.chars().take(10).collect()
}

/// Drops the failures older than a minute, and the oldest counts past [`MAX_COUNTED`].
fn prune<K: Clone + Eq + std::hash::Hash>(all: &mut HashMap<K, Vec<Instant>>) {
    all.retain(|_, times| {
        times.retain(|t| t.elapsed() < Duration::from_secs(60));
        !times.is_empty()
    });
    if all.len() > MAX_COUNTED {
        let mut oldest: Vec<(K, Instant)> = all
            .iter()
            .filter_map(|(k, times)| times.last().map(|t| (k.clone(), *t)))
            .collect();
        oldest.sort_by_key(|(_, t)| *t);
        for (k, _) in oldest.into_iter().take(all.len() - MAX_COUNTED) {
            all.remove(&k);
        }
    }
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

    /// Uses the code: the person it signs in, once. Never rate-limited (issue 48): a wrong
    /// code tells nothing of the right one (24 random bytes), and no failure elsewhere may
    /// keep the person who started the server out.
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

    /// Whether a token starting with `prefix` is refused from `ip` for now: 10 failures with
    /// that prefix from there in the last minute. Others' failures never refuse a person's
    /// own token (they do not know its prefix).
    pub fn blocked(&self, ip: IpAddr, prefix: &str) -> bool {
        let mut all = self
            .by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        prune(&mut all);
        all.get(&(ip, prefix.to_owned()))
            .is_some_and(|t| t.len() >= FAILURES_PER_MINUTE)
    }

    /// Counts a failed sign-in; whether the address failed so often this minute that the
    /// refusal is answered slowly.
    pub fn failed(&self, ip: IpAddr, prefix: &str) -> bool {
        {
            let mut all = self
                .by_prefix
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            prune(&mut all);
            all.entry((ip, prefix.to_owned()))
                .or_default()
                .push(Instant::now());
        }
        let mut all = self
            .by_address
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        prune(&mut all);
        let recent = all.entry(ip).or_default();
        recent.push(Instant::now());
        recent.len() > SLOW_AFTER
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tokens::Kind;

    fn token(id: &str) -> Token {
        Token {
            id: id.into(),
            name: "alice".into(),
            kind: Kind::Human,
            sha256: String::new(),
            created: 0,
            last_used: None,
            operator: None,
        }
    }

    #[test]
    fn a_session_lives_in_the_store_and_dies_with_its_token() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".agentx/state")).unwrap();
        let open = || {
            let ws = agentx_clarify_a2a::open_workspace(dir.path()).unwrap();
            Sessions::new(std::sync::Arc::new(ws))
        };
        let tokens = vec![token("tok_a")];
        let cookie = open()
            .start("alice", Some("tok_a"), 1_000, &tokens)
            .unwrap();
        let link = open().start("local", None, 1_000, &tokens).unwrap();
        // Another server on the same store (a restart, a replica) knows both.
        let other = open();
        let s = other.get(&cookie, 2_000, &tokens).unwrap().unwrap();
        assert_eq!(s.human, "alice");
        assert_eq!(s.csrf, csrf_of(&cookie));
        assert!(other.still(&s.key, 2_000, &tokens).unwrap());
        // The token revoked: its session is gone at once; the link's stays.
        assert!(other.get(&cookie, 2_000, &[]).unwrap().is_none());
        assert!(!other.still(&s.key, 2_000, &[]).unwrap());
        assert!(other.get(&link, 2_000, &[]).unwrap().is_some());
        // Expired: gone.
        let later = 1_000 + 12 * 3_600_000;
        assert!(other.get(&link, later, &[]).unwrap().is_none());
        // The file holds hashes only, owner-only.
        let path = dir.path().join(".agentx/state/sessions.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&cookie) && !text.contains(&link) && !text.contains(&s.csrf));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        other.end(&link).unwrap();
        assert!(open().get(&link, 2_000, &[]).unwrap().is_none());
        // The host label is chosen once.
        let label = open().host_label().unwrap();
        assert!(label.starts_with("agentx-") && label.len() == 27, "{label}");
        assert_eq!(open().host_label().unwrap(), label);
    }

    #[test]
    fn failures_lock_out_a_prefix_never_the_link_nor_another_token() {
        let logins = Logins::default();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let code = logins.issue("local");
        for _ in 0..50 {
            logins.failed(ip, &prefix("axt_guessguess"));
        }
        assert!(logins.blocked(ip, &prefix("axt_guessguess")));
        assert!(!logins.blocked(ip, &prefix("axt_persons-own")));
        assert_eq!(logins.redeem(&code).as_deref(), Some("local"));
        assert!(logins.redeem(&code).is_none(), "once");
    }
}
