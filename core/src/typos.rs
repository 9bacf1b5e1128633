//! Typos in the settings (docs/protocol.md, "Settings"): an unknown key in `[clarify]` of
//! `config.toml`, or a key starting `clarify_` in a workflow step that no step reads, is
//! reported as a warning with the file, the line and the nearest known key — `clarify_sla = 60`
//! silently gave the 30-minute default. Other unknown keys stay allowed and unmentioned (AgentX
//! files carry their own), and nothing here refuses a file: the parsers decide validity.

use crate::toml_read::{get, Source};

/// The keys `[clarify]` reads.
pub const CLARIFY_KEYS: &[&str] = &[
    "priority",
    "stuck_similarity",
    "max_retries",
    "max_topic_chars",
    "max_body_chars",
    "lock_timeout_ms",
    "stale_lock_ms",
    "default_workflow",
    "route_on_retry",
    "related",
    "related_min_score",
];

/// The clarify keys a workflow step reads.
pub const STEP_CLARIFY_KEYS: &[&str] = &[
    "can_clarify",
    "clarify_max_rounds",
    "clarify_sla_minutes",
    "clarify_blocking_allowed",
];

/// Warnings for `config.toml`'s text: unknown keys of `[clarify]`. A file that does not parse
/// has none (its error is the parser's).
pub fn config_warnings(file: &str, text: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let src = Source { file, text };
    let Ok(root) = src.parse() else {
        return Vec::new();
    };
    let Some(section) = get(root.get_ref(), "clarify") else {
        return Vec::new();
    };
    let toml::de::DeValue::Table(table) = section.get_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, _) in table.iter() {
        let name: &str = key.get_ref();
        if !CLARIFY_KEYS.contains(&name) {
            out.push(warning(
                &src,
                key.span().start,
                &format!("[clarify] {name}"),
                name,
                CLARIFY_KEYS,
            ));
        }
    }
    out
}

/// Warnings for a workflow file's text: keys starting `clarify_` in a `[[steps]]` table that
/// no step reads.
pub fn workflow_warnings(file: &str, text: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let src = Source { file, text };
    let Ok(root) = src.parse() else {
        return Vec::new();
    };
    let Some(steps) = get(root.get_ref(), "steps") else {
        return Vec::new();
    };
    let toml::de::DeValue::Array(items) = steps.get_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let toml::de::DeValue::Table(step) = item.get_ref() else {
            continue;
        };
        for (key, _) in step.iter() {
            let name: &str = key.get_ref();
            if name.starts_with("clarify_") && !STEP_CLARIFY_KEYS.contains(&name) {
                out.push(warning(
                    &src,
                    key.span().start,
                    &format!("step key {name}"),
                    name,
                    STEP_CLARIFY_KEYS,
                ));
            }
        }
    }
    out
}

fn warning(src: &Source<'_>, offset: usize, what: &str, name: &str, known: &[&str]) -> String {
    let (line, column) = src.location(offset);
    let hint = nearest(name, known).map_or_else(String::new, |k| format!("; did you mean `{k}`?"));
    format!(
        "{}:{line}:{column}: unknown {what} is ignored{hint}",
        src.file
    )
}

/// The known key closest to `name`: one that starts with it (or it with one), else the
/// smallest edit distance, when it is close enough to be a likely typo.
pub fn nearest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    if let Some(k) = known
        .iter()
        .find(|k| k.starts_with(name) || name.starts_with(**k))
    {
        return Some(k);
    }
    known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), *k))
        .filter(|(d, k)| *d <= k.len().max(name.len()) / 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clarify_typos_name_the_line_and_the_nearest_key() {
        let text =
            "# settings\n[clarify]\nmax_retry = 2\nmax_retries = 1\n\n[other]\nmax_retry = 3\n";
        assert_eq!(
            config_warnings("config.toml", text),
            vec!["config.toml:3:1: unknown [clarify] max_retry is ignored; did you mean `max_retries`?"]
        );
        assert!(config_warnings("config.toml", "[clarify\n").is_empty());
    }

    #[test]
    fn step_typos_are_clarify_keys_only() {
        let text = "[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla = 60\nowner = \"x\"\n\n[[steps]]\nid = \"b\"\nagent = \"architect\"\n  clarify_max_round = 2\n";
        assert_eq!(
            workflow_warnings("feature.toml", text),
            vec![
                "feature.toml:4:1: unknown step key clarify_sla is ignored; did you mean `clarify_sla_minutes`?",
                "feature.toml:10:3: unknown step key clarify_max_round is ignored; did you mean `clarify_max_rounds`?",
            ]
        );
        assert_eq!(nearest("zzzzzz", STEP_CLARIFY_KEYS), None);
    }
}
