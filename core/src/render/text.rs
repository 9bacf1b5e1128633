//! ANSI text for terminals. Colours per status: pending yellow, answered green, stale red,
//! escalated magenta, resolved and abandoned dim. Without colour, the same text plain.

use std::fmt::Write as _;

use super::{
    blocking_word, escalation_reason, preamble, report_counts, round_entries, rounds,
    sanitize_terminal as clean, severity_word, summary, trim_end,
};
use crate::ledger::{Entry, EntryKind, Record, Status};
use crate::monitor::Report;
use crate::time::hh_mm;

/// Whether to emit ANSI SGR sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn sgr(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn status(self, status: Status) -> String {
        self.status_padded(status, 0)
    }

    /// The status word, padded to `width` before colouring so columns stay aligned.
    pub fn status_padded(self, status: Status, width: usize) -> String {
        let code = match status {
            Status::Pending => "33",
            Status::Answered => "32",
            Status::Stale => "31",
            Status::Escalated => "35",
            Status::Resolved | Status::Abandoned => "2",
        };
        self.sgr(code, &format!("{:<width$}", status.as_str()))
    }

    pub fn bold(self, text: &str) -> String {
        self.sgr("1", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.sgr("2", text)
    }

    pub fn warn(self, text: &str) -> String {
        self.sgr("35", text)
    }

    /// `[BLOCK]` in red, `[WARN]` in yellow.
    fn badge(self, record: &Record) -> String {
        let code = if record.severity().is_blocking() {
            "31"
        } else {
            "33"
        };
        self.sgr(code, &format!("[{}]", severity_word(record)))
    }
}

/// The first line of a thread or round, then the topic line and, when the record names
/// them, the operations it blocks.
fn header(record: &Record, issue: u32, style: Style, topic: &str) -> String {
    let mut out = format!(
        "{}  #{issue}  {} -> {}  {}  round {}/{}  {}  {}\n  {topic}\n",
        style.bold(&record.id),
        record.from,
        record.to,
        style.status(record.current_status()),
        record.folded_round(),
        record.max_rounds,
        blocking_word(record),
        style.badge(record)
    );
    if !record.blocked_operations.is_empty() {
        let _ = writeln!(
            out,
            "  blocks: {}",
            // One line, whatever a hand-edited ledger holds.
            clean(&record.blocked_operations.join(", ")).replace(['\n', '\t'], " ")
        );
    }
    if record.reuses.count > 0 {
        // Who asked the question again and was answered from this record (docs/protocol.md §22).
        let latest: Vec<String> = record
            .reuses
            .latest
            .iter()
            .map(|r| format!("{} {}", r.from, hh_mm(r.at.ms())))
            .collect();
        let _ = writeln!(
            out,
            "  re-asked {} time(s), answered from this record: {}",
            record.reuses.count,
            latest.join(", ")
        );
    }
    let options = super::options::marked_options(record);
    if !options.is_empty() {
        let _ = writeln!(out, "  answer: {}", super::options::kind_words(record));
        for (marked, value, label, _) in options {
            let mark = if marked { "[x]" } else { "[ ]" };
            let _ = writeln!(
                out,
                "    {mark} {value}  {}",
                clean(&label).replace(['\n', '\t'], " ")
            );
        }
    }
    out
}

/// How to decide an escalated record, and — with people (docs/protocol.md §37) — who may:
/// the command names the holder, else the first assignee.
fn decide_hint(out: &mut String, record: &Record) {
    let assigned = crate::people::assigned(record);
    let holder = crate::people::holder(record).map(|h| h.person);
    if let Some(names) = &assigned {
        let mut line = format!("  assigned to {}", clean(&names.join(", ")));
        if let Some(h) = &holder {
            line.push_str(&format!("; {} is on it", clean(h)));
        }
        if let Some(s) = crate::people::summary(record) {
            line.push_str(&format!("; {}", clean(&s)));
        }
        let _ = writeln!(out, "{line}");
    }
    // Where several must agree, the next is someone who has not approved yet.
    let approved: Vec<String> = crate::people::proposals(record)
        .into_iter()
        .flat_map(|p| p.by)
        .collect();
    let quorum = crate::people::quorum_of(record).is_some();
    let waiting = assigned.and_then(|n| n.into_iter().find(|p| !quorum || !approved.contains(p)));
    let who = holder
        .filter(|h| !quorum || !approved.contains(h))
        .or(waiting);
    let person = who.map_or(String::new(), |p| format!(" --as {}", clean(&p)));
    let line = if quorum && !approved.is_empty() {
        format!(
            "  approve with: agentx clarify approve {}{person}",
            record.id
        )
    } else {
        format!(
            "  decide with: agentx clarify resolve {}{person} -m \"<the decision>\"",
            record.id
        )
    };
    let _ = writeln!(out, "{line}");
}

/// `  HH:MM  author     kind      body` with continuation lines indented under the body.
fn entry_line(out: &mut String, e: &Entry, style: Style) {
    let body = clean(&e.body);
    let mut lines = body.lines();
    let first = lines.next().unwrap_or("");
    // A handoff's body is the note; whom it went to is a field.
    let to = match e
        .extra
        .get(crate::people::HANDED_TO)
        .and_then(|v| v.as_str())
    {
        Some(to) if e.kind == EntryKind::Handoff => format!(" (to {})", clean(to)),
        _ => String::new(),
    };
    let kind = format!("{:<11}", e.kind.as_str());
    let kind = match e.kind {
        EntryKind::Escalation => style.warn(&kind),
        EntryKind::Stale
        | EntryKind::Retry
        | EntryKind::Reopen
        | EntryKind::Claim
        | EntryKind::Handoff
        | EntryKind::Lapse
        | EntryKind::Assign => style.dim(&kind),
        EntryKind::Approval => kind,
        _ => kind,
    };
    let _ = writeln!(
        out,
        "  {}  {:<16} {kind} {first}{to}",
        style.dim(&hh_mm(e.timestamp.ms())),
        clean(&super::author(e))
    );
    for more in lines {
        let _ = writeln!(out, "{:38}{more}", "");
    }
}

/// One round of a thread.
pub fn text_round(issue: u32, record: &Record, round: u32, style: Style) -> String {
    let topic = format!("round {round}: {}", clean(&record.topic));
    let mut out = header(record, issue, style, &topic);
    for e in round_entries(record, round) {
        entry_line(&mut out, e, style);
    }
    trim_end(out)
}

/// A whole thread.
pub fn text_thread(issue: u32, record: &Record, style: Style) -> String {
    let mut out = header(record, issue, style, &clean(&record.topic));
    if record.thread.is_empty() {
        out.push_str("  (legacy record without a thread)\n");
    }
    for e in preamble(record) {
        entry_line(&mut out, e, style);
    }
    for round in rounds(record) {
        for e in round_entries(record, round) {
            entry_line(&mut out, e, style);
        }
    }
    if record.current_status() == Status::Escalated {
        decide_hint(&mut out, record);
    }
    trim_end(out)
}

/// The escalation block.
pub fn text_escalation(issue: u32, record: &Record, style: Style) -> String {
    let reason = escalation_reason(record).unwrap_or("not escalated yet");
    let mut out = format!(
        "{} {}  #{issue}  {}\n  agents:      {} -> {}\n  rounds used: {}/{}\n  reason:      {}\n",
        style.warn("[ESCALATED]"),
        style.bold(&record.id),
        clean(&summary(&record.topic, 120)),
        record.from,
        record.to,
        record.folded_round(),
        record.max_rounds,
        clean(&summary(reason, 200))
    );
    for round in rounds(record) {
        let entries = round_entries(record, round);
        let q = entries
            .iter()
            .find(|e| e.kind == EntryKind::Question)
            .map_or("", |e| e.body.as_str());
        let a = entries.iter().find(|e| e.kind == EntryKind::Answer);
        let answer = a.map_or_else(
            || String::from("(no answer)"),
            |a| format!("{}: {}", a.from, clean(&summary(&a.body, 60))),
        );
        let _ = writeln!(
            out,
            "  r{round}:          {}: {} -> {answer}",
            record.from,
            clean(&summary(q, 60))
        );
    }
    let _ = write!(
        out,
        "  resolve:     agentx clarify resolve {} -m \"<decision>\"",
        record.id
    );
    out
}

/// The list of clarifications, one aligned line each.
/// `clarify search`: one line per hit (id, issue, status, score, topic and question), and
/// under a resolved one its decision (who, what); a superseded one names its successor.
pub fn text_hits(hits: &[crate::search::Hit], style: Style) -> String {
    if hits.is_empty() {
        return String::from("no record matches");
    }
    let id_w = hits.iter().map(|h| h.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for h in hits {
        let _ = writeln!(
            out,
            "{}  #{:<5} {}  {:>3}  {}: {}",
            style.bold(&format!("{:<id_w$}", h.id)),
            h.issue,
            style.status_padded(h.status, 9),
            h.score,
            clean(&summary(&h.topic, 40)),
            clean(&summary(&h.question, 80)),
        );
        if let Some(d) = &h.decision {
            let _ = writeln!(
                out,
                "    decided by {} at {}: {}",
                clean(&d.by),
                d.at,
                clean(&summary(&d.text, 100))
            );
        }
        if let Some(by) = &h.superseded_by {
            let _ = writeln!(out, "    superseded by {}", clean(by));
        }
    }
    trim_end(out)
}

pub fn text_list(records: &[(u32, &Record)], style: Style) -> String {
    if records.is_empty() {
        return String::from("no open clarifications");
    }
    let id_w = records.iter().map(|(_, r)| r.id.len()).max().unwrap_or(0);
    let pair_w = records
        .iter()
        .map(|(_, r)| r.from.len() + r.to.len() + 4)
        .max()
        .unwrap_or(0);
    let issue_w = records
        .iter()
        .map(|(i, _)| i.to_string().len() + 1)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (issue, r) in records {
        let painted = style.status_padded(r.current_status(), 9);
        let _ = writeln!(
            out,
            "{}  {:<issue_w$}  {:<pair_w$}  {painted}  {:>2}/{:<2}  {:<12}  {}",
            style.bold(&format!("{:<id_w$}", r.id)),
            format!("#{issue}"),
            format!("{} -> {}", r.from, r.to),
            r.folded_round(),
            r.max_rounds,
            blocking_word(r),
            clean(&summary(&r.topic, 60)),
        );
    }
    trim_end(out)
}

/// A monitor report.
pub fn text_report(report: &Report, style: Style) -> String {
    let mut out = format!("monitor: {}\n", report_counts(report));
    // Labels are padded before colouring so the columns line up in both modes.
    let row = |out: &mut String, label: &str, text: &str| {
        let _ = writeln!(out, "  {label:<10} {text}");
    };
    let escalated_label = style.warn(&format!("{:<10}", "escalated"));
    if !report.stale.is_empty() {
        row(&mut out, "stale", &report.stale.join(", "));
    }
    if !report.retried.is_empty() {
        row(&mut out, "retried", &report.retried.join(", "));
    }
    for e in &report.escalated {
        row(
            &mut out,
            &escalated_label,
            &format!("{}  {}", e.id, clean(&e.reason)),
        );
    }
    if !report.stuck.is_empty() {
        row(&mut out, "stuck", &report.stuck.join(", "));
    }
    for d in &report.deadlocks {
        row(
            &mut out,
            "deadlock",
            &format!(
                "{} between {} -> escalated {}",
                d.cycle.join(", "),
                d.agents.join(", "),
                d.escalated
            ),
        );
    }
    if !report.abandoned.is_empty() {
        row(&mut out, "abandoned", &report.abandoned.join(", "));
    }
    if !report.timed_out.is_empty() {
        row(&mut out, "timed out", &report.timed_out.join(", "));
    }
    if !report.lapsed.is_empty() {
        row(&mut out, "claim lapsed", &report.lapsed.join(", "));
    }
    for e in &report.errors {
        row(
            &mut out,
            "error",
            &format!("{}  {}  {}", clean(&e.file), e.code, clean(&e.message)),
        );
    }
    trim_end(out)
}
