//! Capability names (seed 003 §4): dotted and hierarchical, `research.context.deepen`. A name
//! covers itself and every name below it, so a manifest listing `research.context` offers
//! `research.context.deepen`, and excluding `content` excludes `content.script.drafting`.

/// Longest capability name accepted.
pub const MAX_CAPABILITY_LEN: usize = 200;

/// Checks a capability name: two or more dot-separated segments, each `[a-z0-9][a-z0-9_-]*`.
/// The error says why, for a message that names the value.
pub fn check_capability(name: &str) -> Result<(), String> {
    let shape = "expected dotted lowercase segments like research.context.deepen";
    if name.len() > MAX_CAPABILITY_LEN {
        return Err(format!(
            "capability '{}' is longer than {MAX_CAPABILITY_LEN} characters",
            crate::error::shown(name)
        ));
    }
    let mut segments = 0usize;
    for segment in name.split('.') {
        let mut bytes = segment.bytes();
        let first = bytes
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let rest =
            bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !(first && rest) {
            return Err(format!(
                "capability '{}' is not a valid name: {shape}",
                crate::error::shown(name)
            ));
        }
        segments += 1;
    }
    if segments < 2 {
        return Err(format!(
            "capability '{}' has one segment: {shape}",
            crate::error::shown(name)
        ));
    }
    Ok(())
}

/// Whether `listed` (a manifest entry) covers `wanted`: the same name or an ancestor.
pub fn covers(listed: &str, wanted: &str) -> bool {
    match wanted.strip_prefix(listed) {
        Some(rest) => rest.is_empty() || rest.starts_with('.'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in [
            "research.context.deepen",
            "qa.verification.multi-claim",
            "a.b",
            "x1.y_2",
        ] {
            assert!(check_capability(ok).is_ok(), "{ok}");
        }
        for bad in [
            "research",
            "",
            "a..b",
            ".a.b",
            "a.b.",
            "Research.x",
            "a.b c",
            "a.-b",
        ] {
            assert!(check_capability(bad).is_err(), "{bad}");
        }
        assert!(check_capability(&format!("a.{}", "b".repeat(300))).is_err());
    }

    #[test]
    fn hierarchy() {
        assert!(covers("research.context", "research.context.deepen"));
        assert!(covers("research.context.deepen", "research.context.deepen"));
        assert!(!covers("research.con", "research.context.deepen"));
        assert!(!covers("research.context.deepen", "research.context"));
    }
}
