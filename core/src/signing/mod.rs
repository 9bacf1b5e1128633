//! Ed25519 signatures of ledger entries (docs/protocol.md §16): pure functions, keys are arguments.
//!
//! A signed entry carries `signer` (an agent name) and `signature` (`ed25519:<base64>` over
//! the 32 raw bytes of the entry's `hash`). The hash covers `signer` but not `signature`, so
//! a signature vouches for the entry and, through the hash chain, for everything before it.
//! Who may sign an entry: its author, or the hub key `agent-x` for `monitor`, `agent-x` and
//! `human` entries ([`signer_for`]). Checking a ledger's signatures is `verify`'s (it knows
//! ledgers; signing knows only keys and hashes).

mod keys;

pub use keys::{
    signer_for, PublicKey, PublicKeys, SecretKey, Signers, PUBLIC_PREFIX, SECRET_PREFIX,
    SIGNATURE_PREFIX,
};

/// The 32 raw bytes of a lowercase or uppercase hex SHA-256 (None when malformed).
pub fn hash_bytes(hex: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (slot, pair) in out.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        let digit = |b: u8| char::from(b).to_digit(16);
        let (hi, lo) = match pair {
            [hi, lo] => (digit(*hi)?, digit(*lo)?),
            _ => return None,
        };
        *slot = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

/// The signature of an entry whose hash is `hash` (hex), or None for a malformed hash.
pub fn sign_hash(key: &SecretKey, hash: &str) -> Option<String> {
    hash_bytes(hash).map(|bytes| key.sign(&bytes))
}

#[cfg(test)]
mod tests;
