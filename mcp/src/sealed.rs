//! The sealed `requestState` of an input-required elicitation (docs/protocol.md §24): what the
//! server hands a 2026-07-28 client with the form and trusts again only if it comes back
//! unaltered, in time, once, from the same agent about the same record.
//!
//! - HMAC-SHA256 (rmcp's `RequestStateCodec`, `rs2` tokens naming their key), keyed by a
//!   secret of the server's kept in the state store (state document `mcp-state-keys`: a
//!   private file beside the tokens, or a row of PostgreSQL's, so every server on one store
//!   opens what another sealed, across restarts). A new key is made when the newest is a day
//!   old; an older one is kept only while a state it sealed may still be open.
//! - The associated data binds the token's agent and the record id: a state presented by
//!   another agent, or on another record's wait, fails the check. The payload names the
//!   record's round and how many entries its thread had, so a state outlives no write to it.
//! - At most [`LIFETIME`] (the form's ten minutes), in the token itself.
//! - Once: its nonce is struck off in state document `mcp-state-used` before the answer is
//!   used (kept until the state would have expired anyway).

use std::collections::BTreeMap;
use std::time::Duration;

use agentx_clarify_command::store::docs;
use agentx_clarify_command::Files as _;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore;
use base64::Engine as _;
use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};

/// The server's keys.
pub const KEYS: &str = "mcp-state-keys";
/// The nonces of the states already answered.
pub const USED: &str = "mcp-state-used";
/// The longest a sealed state is good for.
pub const LIFETIME: Duration = crate::elicit::FORM_FOR;
/// How long a key seals before a new one is made.
const ROTATE_AFTER_MS: i64 = 24 * 60 * 60 * 1000;
const KEY_BYTES: usize = 32;
const LOCK_OWNER: &str = "agentx-mcp-state";

#[derive(Serialize, Deserialize, Default, Clone, PartialEq)]
struct KeysDoc {
    /// Oldest first; the last one seals.
    keys: Vec<Key>,
}

#[derive(Serialize, Deserialize, Clone, PartialEq)]
struct Key {
    kid: String,
    /// base64url, no padding.
    secret: String,
    /// When it was made (epoch ms).
    created: i64,
}

#[derive(Serialize, Deserialize, Default, Clone, PartialEq)]
struct UsedDoc {
    /// Nonce → until when it must stay struck off (epoch ms).
    used: BTreeMap<String, i64>,
}

/// What a state vouches for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Claims {
    pub agent: String,
    pub id: String,
    pub round: u32,
    /// The length of the record's thread when the form was offered.
    pub entries: usize,
    pub nonce: String,
}

/// Why a state was refused (for the server's log only: the client gets one answer for all).
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// Not one of ours, altered, expired, for another agent or record.
    Invalid(String),
    /// Already answered once.
    Replayed,
    /// The store could not be read or written.
    Store(ClarifyError),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Invalid(why) => write!(f, "invalid: {why}"),
            Refused::Replayed => f.write_str("already answered"),
            Refused::Store(e) => write!(f, "the store: {e}"),
        }
    }
}

fn bound(agent: &str, id: &str) -> Vec<u8> {
    format!("agentx/mrtr-elicitation/v1\n{agent}\n{id}").into_bytes()
}

fn random(n: usize) -> Result<String, ClarifyError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| ClarifyError::Io {
        message: format!("cannot draw random bytes: {e}"),
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A fresh nonce for a state.
pub fn nonce() -> Result<String, ClarifyError> {
    random(16)
}

fn codec(doc: &KeysDoc) -> Result<RequestStateCodec, Refused> {
    let active = doc
        .keys
        .last()
        .ok_or_else(|| Refused::Invalid(String::from("no key yet")))?;
    let mut ring = Vec::with_capacity(doc.keys.len());
    for key in &doc.keys {
        let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&key.secret)
            .map_err(|e| Refused::Invalid(format!("key {} is not base64url: {e}", key.kid)))?;
        ring.push((key.kid.clone(), secret));
    }
    RequestStateCodec::new_with_keyring(active.kid.clone(), ring)
        .map_err(|e| Refused::Invalid(format!("the keyring: {e}")))
}

/// The keys with a sealing one no older than a day (made, and the retired ones let go, under
/// the store's exclusion, so two servers agree on one).
fn current_keys(store: &WorkspaceStore, now: i64) -> Result<KeysDoc, ClarifyError> {
    let doc: KeysDoc = docs::read_json(store, KEYS)?;
    if doc
        .keys
        .last()
        .is_some_and(|k| now.saturating_sub(k.created) < ROTATE_AFTER_MS)
    {
        return Ok(doc);
    }
    let config = store.load_config()?;
    docs::try_update_json(store, KEYS, &config, LOCK_OWNER, |doc: &mut KeysDoc| {
        let fresh = doc
            .keys
            .last()
            .is_some_and(|k| now.saturating_sub(k.created) < ROTATE_AFTER_MS);
        if !fresh {
            doc.keys.push(Key {
                kid: format!("k{now}"),
                secret: random(KEY_BYTES)?,
                created: now,
            });
        }
        doc.keys = retained(&doc.keys, now);
        Ok(doc.clone())
    })
}

/// The keys that may still open a live state: the sealing one, and each older one whose
/// successor started sealing less than [`LIFETIME`] ago.
fn retained(keys: &[Key], now: i64) -> Vec<Key> {
    let lifetime = i64::try_from(LIFETIME.as_millis()).unwrap_or(i64::MAX);
    let mut kept = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let retired_at = keys.get(i + 1).map(|next| next.created);
        if retired_at.is_none_or(|at| now.saturating_sub(at) < lifetime) {
            kept.push(key.clone());
        }
    }
    kept
}

/// `claims` sealed for [`LIFETIME`] with the server's current key.
pub fn seal(store: &WorkspaceStore, now: i64, claims: &Claims) -> Result<String, ClarifyError> {
    let doc = current_keys(store, now)?;
    let codec = codec(&doc).map_err(|e| ClarifyError::Internal {
        message: format!("the request-state keys: {e}"),
    })?;
    let bind = bound(&claims.agent, &claims.id);
    codec
        .seal_json_with(
            claims,
            &SealOptions::new().associated_data(&bind).ttl(LIFETIME),
        )
        .map_err(|e| ClarifyError::Internal {
            message: format!("sealing a request state: {e}"),
        })
}

/// The claims of `sealed`, if it is ours, unaltered, unexpired and for `agent`'s wait on
/// record `id` (not yet struck off: see [`strike`]).
pub fn open(
    store: &WorkspaceStore,
    sealed: &str,
    agent: &str,
    id: &str,
) -> Result<Claims, Refused> {
    let doc: KeysDoc = docs::read_json(store, KEYS).map_err(Refused::Store)?;
    let codec = codec(&doc)?;
    let claims: Claims = codec
        .open_json_with(sealed, &bound(agent, id))
        .map_err(|e| Refused::Invalid(e.to_string()))?;
    if claims.agent != agent || claims.id != id {
        return Err(Refused::Invalid(String::from(
            "another agent's or record's",
        )));
    }
    Ok(claims)
}

/// Strikes `nonce` off for good (until its state would have expired): `Replayed` when it
/// already was.
pub fn strike(store: &WorkspaceStore, now: i64, nonce: &str) -> Result<(), Refused> {
    let config = store.load_config().map_err(Refused::Store)?;
    let lifetime = i64::try_from(LIFETIME.as_millis()).unwrap_or(i64::MAX);
    let fresh = docs::update_json(store, USED, &config, LOCK_OWNER, |doc: &mut UsedDoc| {
        doc.used.retain(|_, until| *until > now);
        if doc.used.contains_key(nonce) {
            return false;
        }
        // A minute past the state's own end: clocks of two servers may differ a little.
        doc.used
            .insert(nonce.to_owned(), now.saturating_add(lifetime + 60_000));
        true
    })
    .map_err(Refused::Store)?;
    if fresh {
        Ok(())
    } else {
        Err(Refused::Replayed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kid: &str, created: i64) -> Key {
        Key {
            kid: kid.into(),
            secret: String::new(),
            created,
        }
    }

    #[test]
    fn a_retired_key_is_kept_while_its_states_may_live() {
        let lifetime = i64::try_from(LIFETIME.as_millis()).unwrap();
        let keys = vec![key("a", 0), key("b", 1_000)];
        let kids = |now| {
            retained(&keys, now)
                .into_iter()
                .map(|k| k.kid)
                .collect::<Vec<_>>()
        };
        assert_eq!(kids(1_000 + lifetime - 1), ["a", "b"]);
        assert_eq!(kids(1_000 + lifetime), ["b"]);
    }
}
