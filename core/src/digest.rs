//! SHA-256 digests written as lowercase hex: the ledger's chain hashes, question fingerprints
//! and signal block keys. A leaf, so `kinds` and `signals` hash without importing the ledger.

use sha2::{Digest, Sha256};

/// The lowercase hex of a finished SHA-256.
pub(crate) fn sha256_hex_of(hasher: Sha256) -> String {
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        for nibble in [byte >> 4, byte & 15] {
            hex.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    hex
}
