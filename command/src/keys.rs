//! `keys new <agent>` and `keys list` (docs/protocol.md §16). The random seed of a new key comes from the
//! shell (the command layer, like the core, draws no randomness); the private key goes to
//! the store and nowhere else: no result here holds it.

use agentx_clarify_core::names::check_agent;
use agentx_clarify_core::signing::SecretKey;
use agentx_clarify_core::ClarifyError;
use serde::Serialize;
use serde_json::{json, Value};

use crate::store::keys::{key_path, public_keys, signers, KeyHalf};
use crate::store::Store;

/// A key pair `keys new` wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyCreated {
    pub agent: String,
    pub public_key: String,
    /// The two files written, public first.
    pub files: Vec<String>,
}

impl KeyCreated {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "key": self})
    }
}

/// Creates `agent`'s key pair from `seed` (32 random bytes the shell drew). Never replaces an
/// existing key.
pub fn new_key<S: Store>(
    store: &S,
    agent: &str,
    seed: &[u8; 32],
) -> Result<KeyCreated, ClarifyError> {
    check_agent(agent)?;
    let secret = SecretKey::from_seed(seed);
    let public = secret.public().to_text();
    store.create_key_pair(agent, &public, &secret.to_text())?;
    Ok(KeyCreated {
        agent: agent.to_owned(),
        public_key: public,
        files: vec![
            key_path(agent, KeyHalf::Public),
            key_path(agent, KeyHalf::Secret),
        ],
    })
}

/// One agent's keys as `keys list` shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyListed {
    pub agent: String,
    /// `ed25519:<base64>`; null when only the private key is there.
    pub public_key: Option<String>,
    /// This workspace holds the private key, so its writes by this agent are signed.
    pub private: bool,
    /// The private key's public half differs from the `.pub` file (a replaced `.pub`):
    /// `verify` will report what this key signs.
    pub mismatch: bool,
}

/// Every key of the workspace, by agent. A key file that cannot be used fails the command
/// (`CONFIG_INVALID` naming it).
pub fn list_keys<S: Store>(store: &S) -> Result<Vec<KeyListed>, ClarifyError> {
    let publics = public_keys(store)?;
    let secrets = signers(store)?;
    let mut out: Vec<KeyListed> = publics
        .list()
        .into_iter()
        .map(|(agent, text)| KeyListed {
            agent,
            public_key: Some(text),
            private: false,
            mismatch: false,
        })
        .collect();
    for (agent, public) in secrets.public_keys().list() {
        match out.iter_mut().find(|k| k.agent == agent) {
            Some(k) => {
                k.private = true;
                k.mismatch = k.public_key.as_deref() != Some(public.as_str());
            }
            None => out.push(KeyListed {
                agent,
                public_key: None,
                private: true,
                mismatch: false,
            }),
        }
    }
    agentx_clarify_core::stable_sort::sort_by(&mut out, |a, b| a.agent.cmp(&b.agent));
    Ok(out)
}

/// `keys list --json`.
pub fn list_json(keys: &[KeyListed]) -> Value {
    json!({"ok": true, "keys": keys})
}
