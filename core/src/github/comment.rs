//! The comment a clarification has on its GitHub issue (docs/github.md): the marker that
//! finds it again, the thread as the core's markdown, its status, and how to answer by
//! comment. Also the issue's label rule.

use std::fmt::Write as _;

use crate::kinds::AnswerKind;
use crate::ledger::{Ledger, Record, Severity};
use crate::render::markdown_thread;

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

/// The whole comment of `record` on issue `issue`.
pub fn comment_body(issue: u32, record: &Record) -> String {
    let status = record.current_status();
    let mut out = marker(&record.id);
    out.push('\n');
    let _ = writeln!(
        out,
        "### AgentX clarification {} ({})\n",
        record.id,
        status.as_str()
    );
    out.push_str(&markdown_thread(issue, record));
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
            "\nThe agent waiting on it resumes from your decision. A 👍 reaction says it was taken, 😕 that it was refused (the reason is in `agentx github sync`'s output).\n",
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
    fn the_marker_is_found_on_the_first_line_only() {
        assert_eq!(marked("<!-- agentx:CLR-42-001 -->\nx"), Some("CLR-42-001"));
        assert_eq!(marked("hello\n<!-- agentx:CLR-42-001 -->"), None);
        assert_eq!(marked("<!-- agentx:nope -->"), None);
        assert_eq!(marked(""), None);
    }
}
