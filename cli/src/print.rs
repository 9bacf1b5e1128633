//! Output: JSON on stdout for `--json`, coloured text otherwise (through anstream, which
//! strips colour for pipes, `NO_COLOR` and `--color never`). Errors go to stderr unless
//! `--json`, where the failure envelope is the output.

use std::io::Write;

use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::render::Style;
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
