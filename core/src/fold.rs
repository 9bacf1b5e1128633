//! Unicode folding the core compares text by: lowercase (the monitor's similarity, answer
//! matching, question fingerprints) and NFKC (question fingerprints, docs/protocol.md §22).
//!
//! With the feature `unicode-tables` (on by default) both come from tables compiled in: the
//! standard library's case tables and `unicode-normalization`'s. The wasm package turns the
//! feature off and hands the core its JS host's functions instead (`toLowerCase`,
//! `normalize("NFKC")`, which every browser and Node carry): the tables were about 60 KB of
//! its gzipped module (docs/benchmarks.md, docs/decisions.md). ASCII text never reaches the
//! host: it is its own NFKC and its lowercase is `to_ascii_lowercase`.

/// The host's folding functions, for a build without the tables.
#[derive(Debug, Clone, Copy)]
pub struct HostFold {
    /// Unicode NFKC.
    pub nfkc: fn(&str) -> String,
    /// Unicode lowercase (default case mapping, as `str::to_lowercase`).
    pub lowercase: fn(&str) -> String,
}

#[cfg(not(feature = "unicode-tables"))]
static HOST: std::sync::OnceLock<HostFold> = std::sync::OnceLock::new();

/// Hands the core the host's folding functions (the wasm package does, from JavaScript). A
/// build with the tables keeps using them. The first call wins; later calls change nothing.
pub fn set_host(host: HostFold) {
    #[cfg(not(feature = "unicode-tables"))]
    let _ = HOST.set(host);
    #[cfg(feature = "unicode-tables")]
    let _ = host;
}

/// Unicode NFKC of `text`.
pub fn nfkc(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    #[cfg(feature = "unicode-tables")]
    {
        use unicode_normalization::UnicodeNormalization;
        text.nfkc().collect()
    }
    // Without the tables and without a host (a shell that gave none), text is compared as
    // written.
    #[cfg(not(feature = "unicode-tables"))]
    HOST.get()
        .map_or_else(|| text.to_owned(), |host| (host.nfkc)(text))
}

/// Unicode lowercase of `text` (`str::to_lowercase`).
pub fn lowercase(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    #[cfg(feature = "unicode-tables")]
    {
        text.to_lowercase()
    }
    // Without the tables and without a host, only ASCII letters are lowered.
    #[cfg(not(feature = "unicode-tables"))]
    HOST.get()
        .map_or_else(|| text.to_ascii_lowercase(), |host| (host.lowercase)(text))
}

// The wasm package's host folding is tested in bindings-wasm/tests and by the vectors through
// the package (tests/vectors/core/answer_kinds.json, never_asked_twice.json).
#[cfg(all(test, feature = "unicode-tables"))]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_unicode_fold_as_the_standard_library() {
        for text in ["Redis OR In-Process?", "ΣΊΣΥΦΟΣ", "Straße İstanbul", "K"] {
            assert_eq!(lowercase(text), text.to_lowercase(), "{text}");
        }
        assert_eq!(nfkc("Ｒｅｄｉｓ？"), "Redis?");
        assert_eq!(nfkc("ﬁle"), "file");
        assert_eq!(nfkc("plain"), "plain");
    }
}
