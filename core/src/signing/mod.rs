//! Ed25519 signatures of ledger entries (docs/protocol.md §16): pure functions, keys are arguments.
//!
//! A signed entry carries `signer` (an agent name) and `signature` (`ed25519:<base64>` over
//! the 32 raw bytes of the entry's `hash`). The hash covers `signer` but not `signature`, so
//! a signature vouches for the entry and, through the hash chain, for everything before it.
//! Who may sign an entry: its author, or the hub key `agent-x` for `monitor`, `agent-x` and
//! `human` entries ([`signer_for`]).

mod keys;

pub use keys::{
    signer_for, PublicKey, PublicKeys, SecretKey, Signers, PUBLIC_PREFIX, SECRET_PREFIX,
    SIGNATURE_PREFIX,
};

use crate::error::ErrorCode;
use crate::ledger::{entry_hash, Entry, Ledger, Record};
use crate::verify::Problem;

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

/// What is wrong with the signatures of `record`'s thread, one message per entry at most.
/// Each entry is checked against the hash its content gives (not the stored one), so an
/// edited entry fails here even when its `hash` was recomputed. With `require`, an unsigned
/// entry is a problem too.
pub fn record_signature_problems(record: &Record, keys: &PublicKeys, require: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev = "";
    for (i, entry) in record.thread.iter().enumerate() {
        let n = i + 1;
        if let Some(problem) = entry_problem(&record.id, prev, entry, keys, require) {
            out.push(format!(
                "entry {n} ({} by {}): {problem}",
                entry.kind.as_str(),
                entry.from
            ));
        }
        prev = entry.hash.as_deref().unwrap_or("");
    }
    out
}

fn entry_problem(
    record_id: &str,
    prev: &str,
    entry: &Entry,
    keys: &PublicKeys,
    require: bool,
) -> Option<String> {
    let (signer, signature) = match (&entry.signer, &entry.signature) {
        (None, None) => {
            return require.then(|| String::from("not signed, and signatures are required"))
        }
        (None, Some(_)) => return Some(String::from("carries a signature but no signer")),
        (Some(s), None) => return Some(format!("names signer {s} but carries no signature")),
        (Some(signer), Some(signature)) => (signer, signature),
    };
    let allowed = signer_for(&entry.from);
    if signer != allowed {
        return Some(format!("signed by {signer}; only {allowed} may sign it"));
    }
    let Some(key) = keys.get(signer) else {
        return Some(format!("signed by {signer}, whose public key is unknown"));
    };
    // `entry_hash` always gives 64 hex digits; a failure here would be a bug, reported.
    let Some(bytes) = hash_bytes(&entry_hash(record_id, prev, entry)) else {
        return Some(String::from("its hash could not be computed"));
    };
    key.verify(&bytes, signature)
        .err()
        .map(|why| format!("signature by {signer}: {why}"))
}

/// Signature problems of every record of `ledger`, each with the code `SIGNATURE_INVALID`:
/// the signature part of [`crate::verify::check_ledger_with`], which runs the other checks
/// too.
pub fn verify_signatures(
    file: &str,
    ledger: &Ledger,
    keys: &PublicKeys,
    require: bool,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for record in &ledger.clarifications {
        for message in record_signature_problems(record, keys, require) {
            out.push(Problem {
                file: file.to_owned(),
                id: Some(record.id.clone()),
                message,
                code: Some(ErrorCode::SignatureInvalid),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
