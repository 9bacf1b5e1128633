//! What a store adds to hold signing keys (docs/protocol.md §16): `.agentx/keys/<agent>.pub` (the public
//! key, `ed25519:<base64>`) and `.agentx/keys/<agent>.key` (the private seed, mode 0600). An
//! the [`Files`] side; every command that writes needs it, since every write signs with
//! the keys the process holds (the follow-up monitor with the hub key `agent-x`).
//!
//! A store only lists and creates the files; what a key file must hold, and what a bad one
//! means, is decided here once for every store. A key file that cannot be used is
//! `CONFIG_INVALID` naming the file — never a silently unsigned write.

use agentx_clarify_core::names::{check_agent, AGENT_X};
use agentx_clarify_core::signing::{signer_for, PublicKeys, SecretKey, Signers};
use agentx_clarify_core::ClarifyError;

use crate::store::paths::KEYS_DIR;
use crate::store::Files;

/// Which half of a key pair a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHalf {
    /// `<agent>.pub`.
    Public,
    /// `<agent>.key`.
    Secret,
}

impl KeyHalf {
    pub fn extension(self) -> &'static str {
        match self {
            KeyHalf::Public => ".pub",
            KeyHalf::Secret => ".key",
        }
    }
}

/// One key file: the agent its name gives and its bytes, or why they could not be read (a
/// disk store refuses a private key that others may read).
pub type KeyFile = (String, Result<Vec<u8>, ClarifyError>);

/// `.agentx/keys/<agent><ext>`.
pub fn key_path(agent: &str, half: KeyHalf) -> String {
    format!("{KEYS_DIR}{agent}{}", half.extension())
}

/// The agent a key file's name is for, when it is `<agent><ext>` (the name is checked when
/// the key is loaded, so a bad one is reported, not skipped).
pub fn key_agent(name: &str, half: KeyHalf) -> Option<&str> {
    name.strip_suffix(half.extension())
        .filter(|a| !a.is_empty())
}

/// What an error says, without the "invalid input:" its code already tells.
fn why(e: &ClarifyError) -> String {
    match e {
        ClarifyError::InvalidInput { message } => message.clone(),
        other => other.to_string(),
    }
}

/// The error of an unusable key file.
pub fn key_error(agent: &str, half: KeyHalf, message: impl Into<String>) -> ClarifyError {
    ClarifyError::ConfigInvalid {
        file: key_path(agent, half),
        location: None,
        message: message.into(),
    }
}

fn text_of(
    agent: &str,
    half: KeyHalf,
    read: Result<Vec<u8>, ClarifyError>,
) -> Result<String, ClarifyError> {
    check_agent(agent).map_err(|e| key_error(agent, half, format!("not a key file name: {e}")))?;
    let bytes = read?;
    String::from_utf8(bytes).map_err(|_| key_error(agent, half, "the file is not UTF-8 text"))
}

/// The private keys this workspace holds: what every write signs with. Empty when there are
/// none (writes are unsigned, as before signatures existed).
pub fn signers<S: Files + ?Sized>(store: &S) -> Result<Signers, ClarifyError> {
    signers_of(store, None)
}

/// The private keys that may sign entries by `authors` (their own, or the hub key for the
/// hub's actors; the hub key always, for the follow-up monitor's entries): a command parses
/// only the keys it can use (parsing a key derives its public half: the cost of a signed
/// write). Every private key file is still read, so one that others may read fails every
/// write.
pub fn signers_for<S: Files + ?Sized>(
    store: &S,
    authors: &[&str],
) -> Result<Signers, ClarifyError> {
    let mut wanted: Vec<&str> = authors.iter().map(|a| signer_for(a)).collect();
    wanted.push(AGENT_X);
    signers_of(store, Some(&wanted))
}

fn signers_of<S: Files + ?Sized>(
    store: &S,
    wanted: Option<&[&str]>,
) -> Result<Signers, ClarifyError> {
    let mut out = Signers::new();
    for (agent, read) in store.key_files(KeyHalf::Secret)? {
        if wanted.is_some_and(|w| !w.contains(&agent.as_str())) {
            read?;
            continue;
        }
        let text = text_of(&agent, KeyHalf::Secret, read)?;
        // The core's message never shows the text of a secret key.
        let key =
            SecretKey::parse(&text).map_err(|e| key_error(&agent, KeyHalf::Secret, why(&e)))?;
        out.insert(&agent, key)?;
    }
    Ok(out)
}

/// The public keys `verify` and `audit` check signatures against.
pub fn public_keys<S: Files + ?Sized>(store: &S) -> Result<PublicKeys, ClarifyError> {
    let mut out = PublicKeys::new();
    for (agent, read) in store.key_files(KeyHalf::Public)? {
        let text = text_of(&agent, KeyHalf::Public, read)?;
        out.insert_text(&agent, &text)
            .map_err(|e| key_error(&agent, KeyHalf::Public, why(&e)))?;
    }
    Ok(out)
}
