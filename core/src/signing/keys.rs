//! Ed25519 keys as text, and the two keyrings a command receives: the secret keys it may sign
//! with ([`Signers`]) and the public keys it verifies against ([`PublicKeys`]).
//!
//! Text forms (docs/protocol.md §16; the private one is decided in `docs/decisions.md`):
//! - public key `ed25519:<base64 of the 32-byte key>` (the `.pub` file);
//! - secret key `ed25519-seed:<base64 of the 32-byte RFC 8032 seed>` (the `.key` file). A
//!   different prefix, so a secret pasted where a public key belongs is refused instead of
//!   being published.
//!
//! Base64 is RFC 4648's standard alphabet with padding, decoded strictly (no whitespace
//! inside, no non-zero trailing bits), so every key and signature has exactly one spelling.
//! Keys are generated in the shells (the core has no randomness); they pass the 32 random
//! bytes to [`SecretKey::from_seed`].

use crate::sorted_map::SortedMap;
use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};

use crate::error::ClarifyError;
use crate::names::{check_agent, AGENT_X, RESERVED_ACTORS};

pub const PUBLIC_PREFIX: &str = "ed25519:";
pub const SECRET_PREFIX: &str = "ed25519-seed:";
/// Signatures carry the same prefix as public keys: `ed25519:<base64 of 64 bytes>`.
pub const SIGNATURE_PREFIX: &str = "ed25519:";

/// `prefix` + base64 of exactly `N` bytes; surrounding ASCII whitespace (a file's trailing
/// newline) is allowed. `what` names the value in errors.
fn decode<const N: usize>(text: &str, prefix: &str, what: &str) -> Result<[u8; N], String> {
    let text = text.trim_ascii();
    let shown = crate::error::shown(text);
    let Some(b64) = text.strip_prefix(prefix) else {
        return Err(format!(
            "{what} '{shown}' must be {prefix}<base64 of {N} bytes>"
        ));
    };
    let bytes = STANDARD
        .decode(b64)
        .map_err(|e| format!("{what} '{shown}' is not valid base64: {e}"))?;
    <[u8; N]>::try_from(bytes.as_slice())
        .map_err(|_| format!("{what} '{shown}' holds {} bytes, expected {N}", bytes.len()))
}

fn encode(prefix: &str, bytes: &[u8]) -> String {
    format!("{prefix}{}", STANDARD.encode(bytes))
}

/// An Ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// Parses `ed25519:<base64>`; a malformed key or one that is not a curve point is
    /// `INVALID_INPUT`.
    pub fn parse(text: &str) -> Result<PublicKey, ClarifyError> {
        let bytes = decode::<32>(text, PUBLIC_PREFIX, "public key").map_err(ClarifyError::input)?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| {
                ClarifyError::input(format!(
                    "public key '{}' is not an ed25519 point",
                    crate::error::shown(text.trim_ascii())
                ))
            })
    }

    /// `ed25519:<base64>`, the content of a `.pub` file (without newline).
    pub fn to_text(&self) -> String {
        encode(PUBLIC_PREFIX, self.0.as_bytes())
    }

    /// Checks `signature` (`ed25519:<base64 of 64 bytes>`) over `message` with the strict
    /// rules (no malleable or small-order signatures). The error says what is wrong.
    pub fn verify(&self, message: &[u8], signature: &str) -> Result<(), String> {
        let bytes = decode::<64>(signature, SIGNATURE_PREFIX, "signature")?;
        self.0
            .verify_strict(message, &Signature::from_bytes(&bytes))
            .map_err(|_| String::from("the signature does not verify"))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// An Ed25519 secret key (its 32-byte seed). Never printed: `Debug` shows the public key.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// The key of a 32-byte seed (RFC 8032 §5.1.5); the shells draw it from the OS.
    pub fn from_seed(seed: &[u8; 32]) -> SecretKey {
        SecretKey(SigningKey::from_bytes(seed))
    }

    /// Parses `ed25519-seed:<base64>` (a `.key` file). The message never shows the text.
    pub fn parse(text: &str) -> Result<SecretKey, ClarifyError> {
        let text = text.trim_ascii();
        let Some(b64) = text.strip_prefix(SECRET_PREFIX) else {
            return Err(ClarifyError::input(format!(
                "a secret key must be {SECRET_PREFIX}<base64 of 32 bytes>"
            )));
        };
        let bytes = STANDARD.decode(b64).ok();
        let seed = bytes.as_deref().and_then(|b| <[u8; 32]>::try_from(b).ok());
        match seed {
            Some(seed) => Ok(SecretKey::from_seed(&seed)),
            None => Err(ClarifyError::input(format!(
                "a secret key must be {SECRET_PREFIX}<base64 of 32 bytes>; this one is not valid base64 of 32 bytes"
            ))),
        }
    }

    /// `ed25519-seed:<base64>`, the content of a `.key` file (without newline).
    pub fn to_text(&self) -> String {
        encode(SECRET_PREFIX, self.0.as_bytes())
    }

    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// `ed25519:<base64 of the 64-byte signature>` of `message` (deterministic, RFC 8032).
    pub fn sign(&self, message: &[u8]) -> String {
        encode(SIGNATURE_PREFIX, &self.0.sign(message).to_bytes())
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey(public {})", self.public().to_text())
    }
}

impl PartialEq for SecretKey {
    fn eq(&self, other: &Self) -> bool {
        self.public() == other.public()
    }
}

/// Which agent may sign an entry by `author`: the author itself, and for the hub's own actors
/// (`monitor`, `agent-x`, `human`) the hub key `agent-x`.
pub fn signer_for(author: &str) -> &str {
    if RESERVED_ACTORS.contains(&author) {
        AGENT_X
    } else {
        author
    }
}

/// The secret keys the writing process holds, by agent name. Empty (the default): nothing is
/// signed, as before signatures existed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signers {
    keys: SortedMap<String, SecretKey>,
}

impl Signers {
    pub fn new() -> Signers {
        Signers::default()
    }

    /// Adds `agent`'s key (a valid agent name: `agent-x` is the hub key).
    pub fn insert(&mut self, agent: &str, key: SecretKey) -> Result<(), ClarifyError> {
        check_agent(agent)?;
        self.keys.insert(agent.to_owned(), key);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The signer name and key for an entry by `author`, when this process holds it.
    pub fn for_author(&self, author: &str) -> Option<(&str, &SecretKey)> {
        self.keys
            .get_key_value(signer_for(author))
            .map(|(name, key)| (name.as_str(), key))
    }

    /// The public half of every key, for verifying what was signed.
    pub fn public_keys(&self) -> PublicKeys {
        PublicKeys {
            keys: self
                .keys
                .iter()
                .map(|(name, key)| (name.clone(), key.public()))
                .collect(),
        }
    }
}

/// The public keys `verify` and `audit` check signatures against, by agent name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublicKeys {
    keys: SortedMap<String, PublicKey>,
}

impl PublicKeys {
    pub fn new() -> PublicKeys {
        PublicKeys::default()
    }

    /// Adds `agent`'s public key, replacing any earlier one.
    pub fn insert(&mut self, agent: &str, key: PublicKey) -> Result<(), ClarifyError> {
        check_agent(agent)?;
        self.keys.insert(agent.to_owned(), key);
        Ok(())
    }

    /// Adds `agent`'s key from its `.pub` text; the error names the agent.
    pub fn insert_text(&mut self, agent: &str, text: &str) -> Result<(), ClarifyError> {
        let key = PublicKey::parse(text).map_err(|e| {
            ClarifyError::input(format!("key of '{}': {}", crate::error::shown(agent), e))
        })?;
        self.insert(agent, key)
    }

    pub fn get(&self, agent: &str) -> Option<&PublicKey> {
        self.keys.get(agent)
    }

    /// `(agent, ed25519:<base64>)` in name order, for `keys list`.
    pub fn list(&self) -> Vec<(String, String)> {
        self.keys
            .iter()
            .map(|(name, key)| (name.clone(), key.to_text()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_round_trip() {
        let secret = SecretKey::from_seed(&[7; 32]);
        let again = SecretKey::parse(&format!("{}\n", secret.to_text())).unwrap();
        assert_eq!(again.to_text(), secret.to_text());
        let public = secret.public();
        assert_eq!(PublicKey::parse(&public.to_text()).unwrap(), public);
        assert!(public.to_text().starts_with("ed25519:"));
        assert_eq!(public.to_text().len(), "ed25519:".len() + 44);
    }

    #[test]
    fn secret_keys_never_show() {
        let secret = SecretKey::from_seed(&[7; 32]);
        let seed_b64 = secret
            .to_text()
            .trim_start_matches(SECRET_PREFIX)
            .to_owned();
        assert!(!format!("{secret:?}").contains(&seed_b64));
        assert!(!format!("{:?}", Signers::default()).contains(&seed_b64));
        // A damaged key file: the message does not echo it either.
        let bad = format!("{SECRET_PREFIX}{}", &seed_b64[..20]);
        let e = SecretKey::parse(&bad).unwrap_err();
        assert!(!e.to_string().contains(&seed_b64[..20]), "{e}");
    }

    #[test]
    fn bad_texts_are_refused() {
        let secret = SecretKey::from_seed(&[7; 32]);
        for bad in [
            String::new(),
            String::from("ed25519:"),
            String::from("ed25519:!!!!"),
            String::from("rsa:AAAA"),
            // A secret key where a public key belongs.
            secret.to_text(),
            // 31 bytes.
            format!("ed25519:{}", STANDARD.encode([1u8; 31])),
            // Non-canonical base64 (trailing bits set).
            String::from("ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB="),
        ] {
            let e = PublicKey::parse(&bad).unwrap_err();
            assert_eq!(e.code(), "INVALID_INPUT", "{bad}");
        }
        assert_eq!(
            SecretKey::parse(&secret.public().to_text())
                .unwrap_err()
                .code(),
            "INVALID_INPUT"
        );
    }

    #[test]
    fn the_hub_signs_for_its_actors() {
        let mut signers = Signers::new();
        signers
            .insert("agent-x", SecretKey::from_seed(&[1; 32]))
            .unwrap();
        signers
            .insert("engineer", SecretKey::from_seed(&[2; 32]))
            .unwrap();
        for author in ["monitor", "human", "agent-x"] {
            assert_eq!(signers.for_author(author).unwrap().0, "agent-x");
        }
        assert_eq!(signers.for_author("engineer").unwrap().0, "engineer");
        assert!(signers.for_author("architect").is_none());
        assert!(signers
            .insert("Bad Name", SecretKey::from_seed(&[3; 32]))
            .is_err());
    }

    #[test]
    fn signatures_verify_only_with_their_key() {
        let a = SecretKey::from_seed(&[1; 32]);
        let b = SecretKey::from_seed(&[2; 32]);
        let sig = a.sign(b"hash");
        assert!(a.public().verify(b"hash", &sig).is_ok());
        assert!(a.public().verify(b"hasH", &sig).is_err());
        assert!(b.public().verify(b"hash", &sig).is_err());
        assert!(a.public().verify(b"hash", "ed25519:AAAA").is_err());
    }
}
