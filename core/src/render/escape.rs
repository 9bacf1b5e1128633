//! Making user text safe to embed.

/// Escapes text for inline use in CommonMark: every character with markdown meaning is
/// backslash-escaped, line-leading markers (`-`, `+`, `=`, `1.`) are neutralised, leading
/// indentation (which would open a code block) is dropped, and line breaks become hard
/// breaks so a body keeps its lines but can never close or open a block.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("  \n");
        }
        let line = line.trim_start();
        let mut at_start = true;
        let mut digits = false;
        for c in line.chars() {
            match c {
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '!' | '{'
                | '}' => {
                    out.push('\\');
                    out.push(c);
                }
                '-' | '+' | '=' if at_start => {
                    out.push('\\');
                    out.push(c);
                }
                '.' | ')' if digits => {
                    out.push('\\');
                    out.push(c);
                }
                '\r' => {}
                c if (c.is_control() && c != '\t') || is_bidi_or_separator(c) => {
                    out.push('\u{FFFD}');
                }
                _ => out.push(c),
            }
            digits = (at_start || digits) && c.is_ascii_digit();
            at_start = false;
        }
    }
    out
}

/// Removes what a terminal would interpret: every control character except newline and tab
/// becomes U+FFFD, so a body cannot move the cursor, change colours or set the title — and so
/// do the bidirectional overrides and isolates and the Unicode line and paragraph separators
/// (docs/protocol.md §31), so a body cannot reorder what a reader sees or break a line unseen.
pub fn sanitize_terminal(text: &str) -> String {
    text.chars()
        .map(|c| {
            if (c.is_control() && c != '\n' && c != '\t') || is_bidi_or_separator(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// U+202A–U+202E (embeddings and overrides), U+2066–U+2069 (isolates), U+2028/U+2029.
pub(super) fn is_bidi_or_separator(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cannot_escape_its_place() {
        assert_eq!(
            escape_markdown("**bold** _x_ `code`"),
            "\\*\\*bold\\*\\* \\_x\\_ \\`code\\`"
        );
        assert_eq!(
            escape_markdown("# title\n- item\n1. one\n    code"),
            "\\# title  \n\\- item  \n1\\. one  \ncode"
        );
        assert_eq!(escape_markdown("> quote | pipe"), "\\> quote \\| pipe");
        assert_eq!(escape_markdown("<script>"), "\\<script\\>");
        assert_eq!(escape_markdown("a - b 3.5"), "a - b 3.5");
    }

    #[test]
    fn terminal_controls_are_neutralised() {
        assert_eq!(
            sanitize_terminal("a\u{1b}[31mred\u{7}"),
            "a\u{FFFD}[31mred\u{FFFD}"
        );
        assert_eq!(sanitize_terminal("line\nnext\t"), "line\nnext\t");
        assert_eq!(
            sanitize_terminal("a\u{202E}b\u{2066}c\u{2069}\u{2028}d\u{2029}é"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}d\u{FFFD}é"
        );
        assert_eq!(escape_markdown("x\u{202D}y"), "x\u{FFFD}y");
    }
}
