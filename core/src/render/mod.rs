//! Renderers (docs/protocol.md §11.2): markdown for chat and ANSI text for terminals, for a thread, the
//! list of clarifications, a live round, an escalation block and a monitor report.
//!
//! Pure: the caller decides whether colour is wanted (`NO_COLOR`, `--color`); user text is
//! escaped so that a body can neither break the surrounding markdown nor inject terminal
//! control sequences. Times are shown as `HH:MM` UTC.

mod escape;
mod markdown;
mod options;
mod stats;
mod text;

pub use escape::{escape_markdown, sanitize_terminal};
pub use markdown::{
    markdown_escalation, markdown_list, markdown_report, markdown_round, markdown_thread,
};
pub use options::chosen;
pub use stats::{memory_lines, short_duration, text_people, text_stats};
pub use text::{
    text_escalation, text_hits, text_list, text_report, text_round, text_thread, Style,
};

use crate::ledger::{Entry, EntryKind, Record};
use crate::monitor::Report;

/// The entries of one round: its question and everything up to the next question.
pub(crate) fn round_entries(record: &Record, round: u32) -> Vec<&Entry> {
    let mut current = 0u32;
    let mut out = Vec::new();
    for e in &record.thread {
        if e.kind == EntryKind::Question {
            current = e.round;
        }
        if current == round {
            out.push(e);
        }
    }
    out
}

/// The rounds present in a thread (legacy records may have none).
pub(crate) fn rounds(record: &Record) -> Vec<u32> {
    let mut rounds: Vec<u32> = record
        .thread
        .iter()
        .filter(|e| e.kind == EntryKind::Question)
        .map(|e| e.round)
        .collect();
    rounds.dedup();
    rounds
}

/// Entries before the first question (only in hand-made or legacy threads).
pub(crate) fn preamble(record: &Record) -> Vec<&Entry> {
    record
        .thread
        .iter()
        .take_while(|e| e.kind != EntryKind::Question)
        .collect()
}

/// A one-line summary of a text: first line, at most `max` characters.
pub(crate) fn summary(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        line.to_owned()
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The reason of the record's latest escalation, if any.
pub(crate) fn escalation_reason(record: &Record) -> Option<&str> {
    record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Escalation)
        .map(|e| e.body.as_str())
}

/// Who wrote an entry, as shown: its author, and for a person's entry written through a
/// server (docs/protocol.md §23) who and where: `human (alice via web)`.
pub(crate) fn author(e: &crate::ledger::Entry) -> String {
    let text = |k: &str| e.extra.get(k).and_then(serde_json::Value::as_str);
    match (text("by"), text("via")) {
        (Some(by), Some(via)) => format!("{} ({by} via {via})", e.from),
        (Some(by), None) => format!("{} ({by})", e.from),
        _ => e.from.clone(),
    }
}

/// `blocking` or `non-blocking`.
pub(crate) fn blocking_word(record: &Record) -> &'static str {
    if record.blocking {
        "blocking"
    } else {
        "non-blocking"
    }
}

/// The severity badge text: `BLOCK` or `WARN` (docs/protocol.md §16; the record's default when unset).
pub(crate) fn severity_word(record: &Record) -> &'static str {
    record.severity().as_str()
}

/// The counts a monitor report opens with: `N stale, …, N abandoned[, N unreadable ledgers]`.
pub(crate) fn report_counts(report: &Report) -> String {
    let mut out = format!(
        "{} stale, {} retried, {} escalated, {} stuck, {} deadlocks, {} abandoned",
        report.stale.len(),
        report.retried.len(),
        report.escalated.len(),
        report.stuck.len(),
        report.deadlocks.len(),
        report.abandoned.len()
    );
    if !report.timed_out.is_empty() {
        out.push_str(&format!(
            ", {} delegations timed out",
            report.timed_out.len()
        ));
    }
    if !report.lapsed.is_empty() {
        out.push_str(&format!(", {} claims lapsed", report.lapsed.len()));
    }
    if !report.errors.is_empty() {
        out.push_str(&format!(", {} unreadable ledgers", report.errors.len()));
    }
    out
}

/// The text without trailing whitespace, reusing its buffer.
pub(crate) fn trim_end(mut s: String) -> String {
    let len = s.trim_end().len();
    s.truncate(len);
    s
}

#[cfg(test)]
mod tests;
