//! Markdown for chat (VS Code `@agentx /clarify`, the playground).

use std::fmt::Write as _;

use super::{
    blocking_word, escalation_reason, preamble, report_counts, round_entries, rounds,
    severity_word, summary, trim_end,
};
use crate::ledger::{Entry, EntryKind, Record, Status};
use crate::monitor::Report;
use crate::render::escape_markdown as esc;
use crate::time::hh_mm;

/// One round: the question with its header and quote line, then what followed it.
pub fn markdown_round(record: &Record, round: u32) -> String {
    let mut out = String::new();
    for entry in round_entries(record, round) {
        push_entry(&mut out, record, entry);
    }
    trim_end(out)
}

fn push_entry(out: &mut String, r: &Record, e: &Entry) {
    let when = hh_mm(e.timestamp.ms());
    let _ = match e.kind {
        EntryKind::Question => {
            let label = if e.round <= 1 {
                "Clarification"
            } else {
                "Follow-up"
            };
            writeln!(
                out,
                "**[{} -> {}]** {label}: *{}*\n> Round {}/{} | {} | {} | **{}**{}\n\n{}\n",
                r.from,
                r.to,
                esc(&r.topic),
                e.round,
                r.max_rounds,
                r.id,
                blocking_word(r),
                severity_word(r),
                blocked_operations(r),
                esc(&e.body)
            )
            .and_then(|()| {
                if e.round > 1 || r.answer.is_text() {
                    return Ok(());
                }
                // The options once, under the first question, the chosen ones checked.
                writeln!(out, "*Answer: {}*\n", super::options::kind_words(r))?;
                for (marked, value, label, description) in super::options::marked_options(r) {
                    let mark = if marked { "x" } else { " " };
                    let more = description
                        .map(|d| format!(" — {}", esc(&d)))
                        .unwrap_or_default();
                    writeln!(out, "- [{mark}] {} (`{value}`){more}", esc(&label))?;
                }
                writeln!(out)
            })
        }
        EntryKind::Answer => writeln!(out, "**[{}] Answer:**\n{}\n", e.from, esc(&e.body)),
        EntryKind::Stale | EntryKind::Retry => {
            writeln!(out, "_{when} · {}: {}_\n", e.from, esc(&e.body))
        }
        EntryKind::Escalation => writeln!(
            out,
            "**[ESCALATED]** by {} at {when}: {}\n",
            esc(&super::author(e)),
            esc(&e.body)
        ),
        EntryKind::Resolution => writeln!(
            out,
            "**[{}] Resolved:** {}\n",
            esc(&super::author(e)),
            esc(&e.body)
        ),
        EntryKind::Abandonment => writeln!(out, "**[{}] Abandoned:** {}\n", e.from, esc(&e.body)),
        EntryKind::Reopen => writeln!(out, "**[{}] Reopened:** {}\n", e.from, esc(&e.body)),
        EntryKind::Approval => writeln!(
            out,
            "**[{}] Approves:** {}\n",
            esc(&super::author(e)),
            esc(&e.body)
        ),
        EntryKind::Claim | EntryKind::Handoff | EntryKind::Lapse | EntryKind::Assign => {
            writeln!(
                out,
                "_{when} · {}: {}_\n",
                esc(&super::author(e)),
                esc(&e.body)
            )
        }
    };
}

/// ` | blocks: `a`, `b`` for a record that names the operations it blocks, else nothing.
fn blocked_operations(r: &Record) -> String {
    if r.blocked_operations.is_empty() {
        return String::new();
    }
    let ops: Vec<String> = r
        .blocked_operations
        .iter()
        // Names are checked on input, but a hand-edited ledger may hold anything: nothing
        // may close the code span or the line.
        .map(|op| {
            let safe: String = op
                .chars()
                .filter(|c| *c != '`' && !c.is_control())
                .collect();
            format!("`{safe}`")
        })
        .collect();
    format!(" | blocks: {}", ops.join(", "))
}

/// A whole thread: a status line, every round, and how it ended or how to end it.
pub fn markdown_thread(issue: u32, record: &Record) -> String {
    let status = record.current_status();
    let mut out = format!(
        "**{}** · issue #{issue} · {} · round {}/{}\n\n",
        record.id,
        status.as_str(),
        record.folded_round(),
        record.max_rounds
    );
    if record.thread.is_empty() {
        let _ = writeln!(
            out,
            "**[{} -> {}]** Clarification: *{}*\n> {} | legacy record without a thread\n",
            record.from,
            record.to,
            esc(&record.topic),
            record.id
        );
    }
    for entry in preamble(record) {
        push_entry(&mut out, record, entry);
    }
    for round in rounds(record) {
        out.push_str(&markdown_round(record, round));
        out.push_str("\n\n");
    }
    if status == Status::Escalated {
        let _ = writeln!(out, "Resolve with `agentx clarify resolve {}`", record.id);
    }
    trim_end(out)
}

/// The `[ESCALATED]` block: agents, rounds used, reason, a short summary, the way out.
pub fn markdown_escalation(issue: u32, record: &Record) -> String {
    let reason = escalation_reason(record).unwrap_or("not escalated yet");
    let mut out = format!(
        "> **[ESCALATED]** {} · issue #{issue} · *{}*\n>\n> - **Agents:** {} -> {}\n> - **Rounds used:** {}/{}\n> - **Reason:** {}\n",
        record.id,
        esc(&summary(&record.topic, 120)),
        record.from,
        record.to,
        record.folded_round(),
        record.max_rounds,
        esc(&summary(reason, 200))
    );
    let conversation = conversation_summary(record);
    if !conversation.is_empty() {
        let _ = writeln!(out, "> - **Conversation:**");
        for line in conversation {
            let _ = writeln!(out, ">   - {line}");
        }
    }
    let _ = write!(
        out,
        ">\n> Resolve with `agentx clarify resolve {} -m \"<decision>\"`",
        record.id
    );
    out
}

/// One line per round: `r1 engineer: question → architect: answer`.
fn conversation_summary(record: &Record) -> Vec<String> {
    rounds(record)
        .into_iter()
        .map(|round| {
            let entries = round_entries(record, round);
            let q = entries.iter().find(|e| e.kind == EntryKind::Question);
            let a = entries.iter().find(|e| e.kind == EntryKind::Answer);
            let mut line = format!(
                "r{round} {}: {}",
                record.from,
                esc(&summary(q.map_or("", |e| e.body.as_str()), 80))
            );
            match a {
                Some(a) => {
                    let _ = write!(line, " → {}: {}", a.from, esc(&summary(&a.body, 80)));
                }
                None => line.push_str(" → (no answer)"),
            }
            line
        })
        .collect()
}

/// The list of clarifications as a table.
pub fn markdown_list(records: &[(u32, &Record)]) -> String {
    if records.is_empty() {
        return String::from("No open clarifications.");
    }
    let mut out = String::from(
        "| Id | Issue | From -> To | Topic | Status | Round | Blocking |\n|---|---|---|---|---|---|---|\n",
    );
    for (issue, r) in records {
        let _ = writeln!(
            out,
            "| {} | #{issue} | {} -> {} | {} | {} | {}/{} | {} |",
            r.id,
            r.from,
            r.to,
            esc(&summary(&r.topic, 80)),
            r.current_status().as_str(),
            r.folded_round(),
            r.max_rounds,
            if r.blocking { "yes" } else { "no" }
        );
    }
    trim_end(out)
}

/// A monitor report.
pub fn markdown_report(report: &Report) -> String {
    let mut out = format!("**Monitor report:** {}\n", report_counts(report));
    if report.is_quiet() && report.errors.is_empty() {
        out.push_str("\nNothing is stale, stuck, deadlocked or abandoned.");
        return out;
    }
    out.push('\n');
    let list = |ids: &[String]| ids.join(", ");
    if !report.stale.is_empty() {
        let _ = writeln!(out, "- **Stale:** {}", list(&report.stale));
    }
    if !report.retried.is_empty() {
        let _ = writeln!(out, "- **Retried:** {}", list(&report.retried));
    }
    for e in &report.escalated {
        let _ = writeln!(out, "- **Escalated:** {} — {}", e.id, esc(&e.reason));
    }
    if !report.stuck.is_empty() {
        let _ = writeln!(out, "- **Stuck:** {}", list(&report.stuck));
    }
    for d in &report.deadlocks {
        let _ = writeln!(
            out,
            "- **Deadlock:** {} between {} → escalated {}",
            d.cycle.join(", "),
            d.agents.join(", "),
            d.escalated
        );
    }
    if !report.abandoned.is_empty() {
        let _ = writeln!(out, "- **Abandoned:** {}", list(&report.abandoned));
    }
    if !report.timed_out.is_empty() {
        let _ = writeln!(out, "- **Timed out:** {}", list(&report.timed_out));
    }
    if !report.lapsed.is_empty() {
        let _ = writeln!(out, "- **Claims lapsed:** {}", list(&report.lapsed));
    }
    for e in &report.errors {
        let _ = writeln!(
            out,
            "- **Error:** {} `{}` {}",
            esc(&e.file),
            e.code,
            esc(&e.message)
        );
    }
    trim_end(out)
}
