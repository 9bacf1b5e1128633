//! The nearest known name to a misspelt one, for "did you mean" in errors and warnings
//! (`require_signature` → `require_signatures`). Shared by every check of unknown keys.

/// The known name closest to `unknown` by edit distance, if one is close enough to be a
/// plausible typo: at most a third of the longer name's length, and at least 1. Two swapped
/// letters are one edit (`lable` → `label`), as a typist makes them.
pub fn nearest<'k>(unknown: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (strsim::osa_distance(unknown, k), *k))
        .filter(|(d, k)| *d <= (unknown.chars().count().max(k.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `; did you mean 'x'?` when a known name is near, else the list of known names.
pub fn hint(unknown: &str, known: &[&str]) -> String {
    match nearest(unknown, known) {
        Some(k) => format!("did you mean '{k}'?"),
        None if known.is_empty() => String::from("this table takes no keys"),
        None => format!("known keys: {}", known.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_key_and_a_stranger_finds_none() {
        let keys = ["require_signatures"];
        assert_eq!(
            nearest("require_signature", &keys),
            Some("require_signatures")
        );
        assert_eq!(
            nearest("requireSignatures", &keys),
            Some("require_signatures")
        );
        assert_eq!(nearest("x", &keys), None);
        assert_eq!(
            nearest("max_route", &["max_routes", "elicit"]),
            Some("max_routes")
        );
        assert_eq!(hint("colour", &["url"]), "known keys: url");
        assert_eq!(nearest("lable", &["value", "label"]), Some("label"));
    }
}
