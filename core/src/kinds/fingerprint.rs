//! The fingerprint of a question (docs/protocol.md §22): the same question to the same target about the
//! same field on the same issue, however it is spelled, is the same fingerprint, so the hub
//! can answer a re-ask from the record that already holds it.

use sha2::{Digest, Sha256};

/// The question as compared: Unicode NFKC, lowercase, every run of whitespace one space,
/// trimmed, then trailing `?`, `!` and `.` removed (and any whitespace between them).
pub fn normalise_question(question: &str) -> String {
    // ASCII is its own NFKC: most questions skip the normalisation (crate::fold).
    let folded = crate::fold::lowercase(&crate::fold::nfkc(question));
    let mut out = String::with_capacity(folded.len());
    for word in folded.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    // Until none is left: `Why ?!` and `why` are one question.
    out.trim_end_matches(|c: char| matches!(c, '?' | '!' | '.') || c.is_whitespace())
        .to_owned()
}

/// Lowercase hex SHA-256 of `<issue> "\n" <to> "\n" <field or ""> "\n" <normalised question>`.
pub fn fingerprint(issue: u32, to: &str, field: Option<&str>, question: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(issue.to_string().as_bytes());
    hasher.update(b"\n");
    hasher.update(to.as_bytes());
    hasher.update(b"\n");
    hasher.update(field.unwrap_or("").as_bytes());
    hasher.update(b"\n");
    hasher.update(normalise_question(question).as_bytes());
    crate::digest::sha256_hex_of(hasher)
}
