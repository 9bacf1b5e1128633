//! Text similarity for the stuck phase: the Jaccard index of the word sets of two texts, with
//! allocation-free fast paths for short and ASCII texts that decide exactly as the general one.

/// Lowercased words: maximal runs of characters for which `char::is_alphanumeric` holds
/// (so `café` stays `café`), sorted and deduplicated.
pub fn tokens(text: &str) -> Vec<String> {
    let lower = crate::fold::lowercase(text);
    words(&lower).into_iter().map(str::to_owned).collect()
}

/// The distinct words of an already lowercased text, as slices of it (one allocation for the
/// list, none per word: the monitor compares texts on every run).
fn words(lower: &str) -> Vec<&str> {
    let mut out: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // The crate's one shared sort: no copy of the standard sort for word lists.
    crate::stable_sort::sort_by(&mut out, |x, y| x.cmp(y));
    out.dedup();
    out
}

/// |A ∩ B| / |A ∪ B| of two sorted, deduplicated word lists; two empty sets are identical.
pub fn jaccard<S: AsRef<str>>(a: &[S], b: &[S]) -> f64 {
    jaccard_by(a, b, |x, y| x.as_ref().cmp(y.as_ref()))
}

/// Jaccard index of two lists sorted and deduplicated under `cmp`.
fn jaccard_by<T>(a: &[T], b: &[T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match cmp(x, y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    ratio(common, a.len() + b.len() - common)
}

pub(super) fn similar(a: &str, b: &str, threshold: f64) -> bool {
    if a == b {
        // Identical texts have identical word sets (similarity 1).
        return 1.0 > threshold;
    }
    if a.is_ascii() && b.is_ascii() {
        // ASCII fast path (the common case, run on every monitor pass): words compared
        // case-insensitively in place, without lowercased copies. Same sets as below.
        if a.len() <= SHORT_TEXT_BYTES && b.len() <= SHORT_TEXT_BYTES {
            if let Some(similar) = ShortWords::of(b).and_then(|y| y.similar_to(a, threshold)) {
                return similar;
            }
        }
        return jaccard_ascii(&ascii_words(a), &ascii_words(b)) > threshold;
    }
    let (la, lb) = (crate::fold::lowercase(a), crate::fold::lowercase(b));
    jaccard(&words(&la), &words(&lb)) > threshold
}

fn cmp_ascii_ci(x: &str, y: &str) -> std::cmp::Ordering {
    x.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(y.bytes().map(|c| c.to_ascii_lowercase()))
}

/// Distinct words of an ASCII text, sorted case-insensitively.
fn ascii_words(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = ascii_word_spans(text).map(|(_, word)| word).collect();
    crate::stable_sort::sort_by(&mut out, |x, y| cmp_ascii_ci(x, y));
    out.dedup_by(|x, y| x.eq_ignore_ascii_case(y));
    out
}

/// Texts up to this length take the short path; longer ones (likely over its 24 distinct
/// words) go straight to the sorted lists rather than being split twice.
const SHORT_TEXT_BYTES: usize = 256;

/// The distinct words of a short ASCII text, on the stack (no allocation, no sort): most
/// questions and answers have a handful of words, and the monitor compares them on every run.
/// Each word carries its length and a hash of its lowercased bytes, so unequal words are
/// told apart in one comparison; equal hashes are confirmed byte by byte (exact, not
/// probabilistic). Words are kept as (offset, length) into the text: 8 bytes a word, so the
/// two sets built per comparison stay small to initialise.
struct ShortWords<'a> {
    text: &'a str,
    /// (start, length, hash) of each distinct word.
    words: [(u16, u16, u32); 24],
    len: usize,
}

/// FNV-1a over the lowercased bytes.
fn fold_hash(word: &str) -> u32 {
    word.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0193)
    })
}

impl<'a> ShortWords<'a> {
    /// `None` when the text has more distinct words than fit (or is too long to index).
    fn of(text: &'a str) -> Option<ShortWords<'a>> {
        let mut out = ShortWords::empty(text)?;
        for (start, word) in ascii_word_spans(text) {
            out.insert(start, word.as_bytes(), fold_hash(word))?;
        }
        Some(out)
    }

    fn empty(text: &'a str) -> Option<ShortWords<'a>> {
        (text.len() <= usize::from(u16::MAX)).then_some(ShortWords {
            text,
            words: [(0, 0, 0); 24],
            len: 0,
        })
    }

    /// Adds a word unless present; true when it was new, `None` when full.
    fn insert(&mut self, start: usize, word: &[u8], hash: u32) -> Option<bool> {
        if self.contains(word, hash) {
            return Some(false);
        }
        *self.words.get_mut(self.len)? = (
            u16::try_from(start).ok()?,
            u16::try_from(word.len()).ok()?,
            hash,
        );
        self.len += 1;
        Some(true)
    }

    /// Whether the Jaccard index of `a`'s words and these is strictly above `threshold`;
    /// `None` when `a` has too many distinct words. Gives up on `a` as soon as the answer is
    /// known: with `m` of `a`'s words missing here, the index is at most `|B| / (|B| + m)`
    /// whatever the rest of `a` holds, and most compared texts differ within a few words.
    fn similar_to(&self, a: &'a str, threshold: f64) -> Option<bool> {
        let mut seen = ShortWords::empty(a)?;
        let (mut common, mut missing) = (0usize, 0usize);
        for (start, word) in ascii_word_spans(a) {
            let hash = fold_hash(word);
            if !seen.insert(start, word.as_bytes(), hash)? {
                continue;
            }
            if self.contains(word.as_bytes(), hash) {
                common += 1;
            } else {
                missing += 1;
                #[allow(clippy::cast_precision_loss)] // at most 24 words
                let bound = self.len as f64 / (self.len + missing) as f64;
                if bound <= threshold {
                    return Some(false);
                }
            }
        }
        Some(ratio(common, seen.len + self.len - common) > threshold)
    }

    fn entries(&self) -> &[(u16, u16, u32)] {
        self.words.get(..self.len).unwrap_or(&[])
    }

    fn contains(&self, word: &[u8], hash: u32) -> bool {
        self.entries().iter().any(|&(s, l, h)| {
            h == hash
                && usize::from(l) == word.len()
                && self
                    .text
                    .as_bytes()
                    .get(usize::from(s)..usize::from(s) + usize::from(l))
                    .is_some_and(|w| w.eq_ignore_ascii_case(word))
        })
    }
}

/// `common / union`; two empty sets are identical.
fn ratio(common: usize, union: usize) -> f64 {
    if union == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)] // word counts far below 2^52
    let sim = common as f64 / union as f64;
    sim
}

/// `(start, word)` for each maximal run of ASCII letters and digits.
fn ascii_word_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while bytes.get(i).is_some_and(|b| !b.is_ascii_alphanumeric()) {
            i += 1;
        }
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            i += 1;
        }
        // ASCII boundaries are char boundaries, so the slice always exists.
        (i > start).then(|| (start, text.get(start..i).unwrap_or("")))
    })
}

fn jaccard_ascii(a: &[&str], b: &[&str]) -> f64 {
    jaccard_by(a, b, |x, y| cmp_ascii_ci(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unicode_words() {
        assert_eq!(
            tokens("Café, CAFÉ! naïve-résumé 42"),
            vec!["42", "café", "naïve", "résumé"]
        );
        assert_eq!(tokens("  ...  "), Vec::<String>::new());
    }

    #[test]
    fn jaccard_bounds() {
        let t = |s: &str| tokens(s);
        assert!((jaccard(&t("a b c d"), &t("a b c d e")) - 0.8).abs() < 1e-12);
        assert!(
            jaccard(&t("a b c d"), &t("a b c d e")) <= 0.8,
            "exactly at threshold is not above it"
        );
        assert!((jaccard(&t(""), &t("")) - 1.0).abs() < f64::EPSILON);
        assert!(jaccard(&t("x"), &t("")).abs() < f64::EPSILON);
        assert!(
            (jaccard(&t("caf"), &t("café"))).abs() < f64::EPSILON,
            "café is not caf"
        );
    }

    #[test]
    fn long_texts_leave_the_stack_path() {
        let many: String = (0..30).map(|i| format!("w{i} ")).collect();
        assert!(ShortWords::of(&many).is_none());
        assert!(
            similar(&many, &many.to_uppercase(), 0.8),
            "falls back to the sorted path"
        );
    }

    #[test]
    fn early_exit_decides_as_the_full_index_does() {
        let texts = [
            "Which eviction policy should the session keys use?",
            "And the TTL for idle sessions, in hours?",
            "which policy should the session KEYS use for eviction",
            "a b c d",
            "a b c d e",
            "e d c b a a a",
            "x y z",
            "24 hours, sliding.",
            "",
        ];
        for a in texts {
            for b in texts {
                let general = jaccard(&tokens(a), &tokens(b));
                for t in [0.0, 0.2, 0.5, 0.75, 0.8, 0.95] {
                    assert_eq!(similar(a, b, t), general > t, "{a:?} vs {b:?} at {t}");
                }
            }
        }
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_general_one() {
        let cases = [
            ("Which CACHE do we use?", "which cache do we use"),
            ("a b c d", "a b c d e"),
            ("Redis, Redis, redis!", "REDIS"),
            ("x-y_z 42", "X Y Z 42"),
            ("", "..."),
            ("one", ""),
        ];
        for (a, b) in cases {
            let general = jaccard(&tokens(a), &tokens(b));
            let fast = jaccard_ascii(&ascii_words(a), &ascii_words(b));
            assert!(
                (general - fast).abs() < 1e-12,
                "{a:?} vs {b:?}: {general} != {fast}"
            );
            assert_eq!(similar(a, b, 0.5), general > 0.5);
        }
    }
}
