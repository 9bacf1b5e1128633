//! The comment a clarification has on its GitHub issue (docs/github.md): the marker that
//! finds it again, the thread as the core's markdown (its `@` mentions neutralised unless
//! `[github] mentions = true`), its status, and how to answer by comment. Also the reply to a
//! refused command, and the issue's label rule.

use std::fmt::Write as _;

use crate::kinds::AnswerKind;
use crate::ledger::{Ledger, Record, Severity};
use crate::render::{escape_markdown, markdown_thread};

/// The label an issue carries while one of its records is an open `BLOCK`.
pub const LABEL: &str = "agentx: blocked";

/// `<!-- agentx:<id> -->`: the first line of the comment, invisible on the page.
pub fn marker(id: &str) -> String {
    format!("<!-- agentx:{id} -->")
}

/// The record a comment belongs to, when its first line is a marker. Only the first line
/// counts: ledger text quoted further down can never pass for a marker.
pub fn marked(body: &str) -> Option<&str> {
    let first = body.lines().next()?.trim();
    let id = first
        .strip_prefix("<!-- agentx:")?
        .strip_suffix("-->")?
        .trim();
    crate::names::ClarificationId::parse(id).ok().map(|_| id)
}

/// The first line of the hub's reply to a refused command: no marker of a record (so never
/// taken for a record's comment), no command.
pub const REPLY_MARKER: &str = "<!-- agentx:reply -->";

/// The whole comment of `record` on issue `issue`. Ledger text is agents' text: its `@user`
/// and `@org/team` mentions would notify whoever they name, so they are neutralised unless
/// `mentions` (`[github] mentions = true`).
pub fn comment_body(issue: u32, record: &Record, mentions: bool) -> String {
    let status = record.current_status();
    let mut out = marker(&record.id);
    out.push('\n');
    let _ = writeln!(
        out,
        "### AgentX clarification {} ({})\n",
        record.id,
        status.as_str()
    );
    let thread = markdown_thread(issue, record);
    if mentions {
        out.push_str(&thread);
    } else {
        out.push_str(&neutralise_mentions(&thread));
    }
    out.push_str("\n\n---\n");
    if status.is_terminal() {
        let _ = writeln!(
            out,
            "This clarification is **{}**; commands on it are refused.",
            status.as_str()
        );
    } else {
        let _ = writeln!(
            out,
            "**Answer here** (people with write access to this repository), as the first line of a new comment:\n"
        );
        let _ = writeln!(
            out,
            "- `/resolve {} <decision>`{}",
            record.id,
            choices(record)
        );
        let _ = writeln!(out, "- `/abandon {} [reason]`", record.id);
        out.push_str(
            "\nThe agent waiting on it resumes from your decision. A 👍 reaction says it was taken; 😕 and a reply say it was refused, and why.\n",
        );
    }
    out
}

/// What the decision's first word may be, for kinds with a fixed set of answers.
fn choices(record: &Record) -> String {
    let spec = &record.answer;
    match spec.kind {
        AnswerKind::Text => String::new(),
        AnswerKind::Confirm => String::from(": the first word `yes` or `no`"),
        AnswerKind::Choice | AnswerKind::MultiChoice => {
            let values: Vec<String> = spec
                .options
                .iter()
                .map(|o| format!("`{}`", o.value.replace('`', "")))
                .collect();
            let many = if spec.kind == AnswerKind::MultiChoice {
                " (several: comma-separated, no spaces)"
            } else {
                ""
            };
            format!(": the first word one of {}{many}", values.join(", "))
        }
    }
}

/// The hub's reply to a refused command: who typed what (`what`: `resolve CLR-42-001`, or the
/// first words of a malformed command), the comment's address, and why. `login` is GitHub's
/// (a valid login: the one person this reply is for is mentioned); `what` and `why` may hold
/// the commenter's text, so they are escaped and their mentions neutralised.
pub fn refusal_reply(login: &str, what: &str, url: &str, why: &str) -> String {
    let safe = |text: &str| neutralise_mentions(&escape_markdown(&one_line(text, 300)));
    let who: String = login
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '[' | ']'))
        .collect();
    let link = if url.starts_with("https://") && !url.contains([')', ' ', '\n']) {
        format!(" ([comment]({url}))")
    } else {
        String::new()
    };
    format!(
        "{REPLY_MARKER}\n@{who}: not taken — {}{link}\n\n{}\n",
        safe(what),
        safe(why)
    )
}

/// `text` on one line, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max).collect();
    cut.push('…');
    cut
}

/// `@name` and `@org/team` outside code spans become `@&#8203;name`: GitHub renders the same
/// text (a zero-width space after the `@`) but mentions no one. An `@` inside a word (an
/// e-mail address) mentions no one either and is left alone. Backslash escapes (what
/// [`escape_markdown`] writes) are kept whole, so an escaped backtick opens no code span.
pub fn neutralise_mentions(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_code = false;
    let mut prev: Option<char> = None;
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                    prev = Some(next);
                    continue;
                }
            }
            '`' => in_code = !in_code,
            '\n' if prev == Some('\n') => in_code = false,
            '@' if !in_code
                && !prev.is_some_and(|p| p.is_alphanumeric() || p == '_')
                && chars.peek().is_some_and(char::is_ascii_alphanumeric) =>
            {
                out.push_str("&#8203;");
            }
            _ => {}
        }
        prev = Some(c);
    }
    out
}

/// Whether issue `ledger` should carry [`LABEL`]: an open record of severity `BLOCK`.
pub fn blocked(ledger: &Ledger) -> bool {
    ledger
        .clarifications
        .iter()
        .any(|r| r.current_status().is_open() && r.severity() == Severity::Block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_neutralised_outside_code() {
        assert_eq!(
            neutralise_mentions("ask @alice and @acme/ops"),
            "ask @&#8203;alice and @&#8203;acme/ops"
        );
        assert_eq!(
            neutralise_mentions("mail ann@example.com"),
            "mail ann@example.com"
        );
        assert_eq!(neutralise_mentions("`@alice` stays"), "`@alice` stays");
        // An escaped backtick (ledger text) opens no code span.
        assert_eq!(neutralise_mentions("\\`x @bob"), "\\`x @&#8203;bob");
        assert_eq!(neutralise_mentions("@ alone, @"), "@ alone, @");
        assert_eq!(
            neutralise_mentions(&escape_markdown("hi @carol, see `@dave`")),
            "hi @&#8203;carol, see \\`@&#8203;dave\\`"
        );
    }

    #[test]
    fn a_refusal_reply_is_no_command_and_mentions_only_its_author() {
        let r = refusal_reply(
            "rob",
            "resolve CLR-42-001",
            "https://github.com/a/b/issues/42#issuecomment-7",
            "rob has permission 'read'; ask @admins",
        );
        assert!(r.starts_with(REPLY_MARKER));
        assert_eq!(marked(&r), None);
        assert!(crate::github::parse_command(&r).is_none());
        assert!(r.contains("@rob: not taken"));
        assert!(r.contains("@&#8203;admins"), "{r}");
        assert!(r.contains("([comment](https://github.com/a/b/issues/42#issuecomment-7))"));
        let long = refusal_reply("x", &"w".repeat(500), "javascript:alert(1)", "y");
        assert!(!long.contains("javascript"));
        assert!(long.contains('…'));
    }

    #[test]
    fn the_marker_is_found_on_the_first_line_only() {
        assert_eq!(marked("<!-- agentx:CLR-42-001 -->\nx"), Some("CLR-42-001"));
        assert_eq!(marked("hello\n<!-- agentx:CLR-42-001 -->"), None);
        assert_eq!(marked("<!-- agentx:nope -->"), None);
        assert_eq!(marked(""), None);
    }
}
