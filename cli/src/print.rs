//! Output: JSON on stdout for `--json`, coloured text otherwise (through anstream, which
//! strips colour for pipes, `NO_COLOR` and `--color never`). Errors go to stderr unless
//! `--json`, where the failure envelope is the output.

use std::io::Write;

use agentx_clarify_command::Mutation;
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::render::{text_report, text_thread, Style};
use agentx_clarify_core::ClarifyError;

/// Renderers always colour; anstream removes the codes where colour is not wanted.
pub const STYLE: Style = Style { color: true };

/// One JSON document on one line. Straight to a buffered stdout: JSON has no colour to
/// strip, and `list` can print megabytes.
pub fn json(value: &impl serde::Serialize) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    if serde_json::to_writer(&mut out, value).is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

pub fn text(text: &str) {
    let mut out = anstream::stdout();
    let _ = writeln!(out, "{text}");
}

pub fn warn(message: &str) {
    let mut err = anstream::stderr();
    let _ = writeln!(err, "{}: {message}", Style { color: true }.warn("warning"));
}

/// Warnings of a command that succeeded (docs/protocol.md §20), one line each on stderr.
pub fn warnings(warnings: &[String]) {
    for w in warnings {
        warn(w);
    }
}

/// Files a command could not read (`list`, `stats`, `ready`, `migrate`), one line each on
/// stderr: they are never skipped silently.
pub fn report_errors(errors: &[ReportError]) {
    for e in errors {
        warn(&format!(
            "{} could not be read [{}]: {}",
            e.file, e.code, e.message
        ));
    }
}

pub fn error_line(e: &ClarifyError) {
    let mut err = anstream::stderr();
    let _ = writeln!(err, "\u{1b}[31;1merror[{}]\u{1b}[0m: {e}", e.code());
}

/// Reports a failure and returns its exit code.
pub fn fail(as_json: bool, e: &ClarifyError) -> i32 {
    if as_json {
        json(&agentx_clarify_core::envelope::failure(e));
    } else {
        error_line(e);
    }
    crate::exit::code(e)
}

/// A document for `--json`, else the words `text` gives; exit 0.
pub fn or(
    json: bool,
    v: &serde_json::Value,
    text: impl FnOnce() -> String,
) -> crate::exit::Outcome {
    if json {
        self::json(v);
    } else {
        self::text(&text());
    }
    Ok(0)
}

/// Prints a mutation; `MAX_ROUNDS_EXCEEDED` prints the escalated thread and fails with 4.
/// Warnings (what failed after the ledger write) go to stderr; the command succeeded.
pub fn mutation(json: bool, m: &Mutation) -> crate::exit::Outcome {
    warnings(&m.warnings);
    if json {
        self::json(&m.to_json());
    } else {
        if let Some(record) = &m.clarification {
            text(&text_thread(m.issue, record, STYLE));
        }
        if m.idempotent {
            text("(idempotent replay: the request already exists; nothing written)");
        }
        if let Some(related) = m.related.as_deref().filter(|r| !r.is_empty()) {
            text(&related_text(related));
        }
        if !m.monitor.report.is_quiet() || !m.monitor.report.errors.is_empty() {
            text(&format!("\n{}", text_report(&m.monitor.report, STYLE)));
        }
        if let Some(e) = &m.error {
            error_line(e);
        }
    }
    Ok(m.error.as_ref().map_or(0, crate::exit::code))
}

/// An ask's `related` (docs/protocol.md §36): decisions other issues took that may answer it,
/// and how to take one instead of waiting.
fn related_text(related: &[agentx_clarify_core::search::Hit]) -> String {
    let mut lines = vec![String::from("\ndecided before, in other issues:")];
    for h in related {
        let decided = h.decision.as_ref().map_or_else(String::new, |d| {
            let first = d.text.lines().next().unwrap_or_default();
            format!(" — {first} (by {}, {})", d.by, d.at.as_str())
        });
        let superseded = h
            .superseded_by
            .as_deref()
            .map(|by| format!(" [superseded by {by}]"))
            .unwrap_or_default();
        // What a ledger holds reaches a terminal: its controls are neutralised.
        lines.push(agentx_clarify_core::render::sanitize_terminal(&format!(
            "  {}  #{}  {}{decided}{superseded}",
            h.id, h.issue, h.topic
        )));
    }
    lines.push(String::from(
        "(an ask with --reuse <ID> takes one of these instead of asking: resolved at once, citing it)",
    ));
    lines.join("\n")
}
