//! The file an exported decision is written to: stable, so a second export finds the same
//! file (`0042-cache-layer-clr-42-001.md`): the issue (four digits at least), the topic's
//! slug and the record's id, lowercased.

/// The longest slug, in bytes; a longer topic is cut at a word.
const MAX_SLUG: usize = 48;

/// The topic as a file name part: lowercase ASCII letters and digits, words joined by `-`;
/// `decision` when nothing is left.
pub fn slug(topic: &str) -> String {
    let mut out = String::new();
    for word in topic
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let extra = word.len() + usize::from(!out.is_empty());
        if out.len() + extra > MAX_SLUG {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    if out.is_empty() {
        out.push_str("decision");
    }
    out
}

/// The file name, without its extension, of the decision `id` of `issue` on `topic`.
pub fn file_stem(issue: u32, topic: &str, id: &str) -> String {
    format!("{issue:04}-{}-{}", slug(topic), id.to_ascii_lowercase())
}
