//! The fingerprint of a question (docs/protocol.md §22): the same question to the same target about the
//! same field on the same issue, however it is spelled, is the same fingerprint, so the hub
//! can answer a re-ask from the record that already holds it.

use sha2::{Digest, Sha256};

/// Unicode NFKC of `text`, from the `unicode-normalization` tables (feature `nfkc-tables`, on
/// by default).
#[cfg(feature = "nfkc-tables")]
fn nfkc(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfkc().collect()
}

/// The host's NFKC, for a build without the tables (the wasm package: its tables are about
/// 50 KB of the gzipped module and every JS host has `String.prototype.normalize`).
#[cfg(not(feature = "nfkc-tables"))]
static HOST_NFKC: std::sync::OnceLock<fn(&str) -> String> = std::sync::OnceLock::new();

/// Hands the core the host's NFKC (the wasm package's start-up does, with JavaScript's
/// `normalize("NFKC")`). A build with the tables (feature `nfkc-tables`) keeps using them.
/// The first call wins; later calls change nothing.
pub fn set_host_nfkc(normalise: fn(&str) -> String) {
    #[cfg(not(feature = "nfkc-tables"))]
    let _ = HOST_NFKC.set(normalise);
    #[cfg(feature = "nfkc-tables")]
    let _ = normalise;
}

/// Unicode NFKC of `text` by the host's function; without one (a shell that turned the tables
/// off and gave none) the text is compared as written.
#[cfg(not(feature = "nfkc-tables"))]
fn nfkc(text: &str) -> String {
    HOST_NFKC
        .get()
        .map_or_else(|| text.to_owned(), |normalise| normalise(text))
}

/// The question as compared: Unicode NFKC, lowercase, every run of whitespace one space,
/// trimmed, then trailing `?`, `!` and `.` removed (and any whitespace between them).
pub fn normalise_question(question: &str) -> String {
    // ASCII is its own NFKC: most questions skip the normalisation tables.
    let folded: String = if question.is_ascii() {
        question.to_ascii_lowercase()
    } else {
        nfkc(question).to_lowercase()
    };
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
    crate::ledger::sha256_hex_of(hasher)
}
