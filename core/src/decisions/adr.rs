//! One decision as a Markdown architecture decision record, MADR-style: title, status,
//! context (the question and its thread, quoted), the decision, and links to the audit
//! trail. What a ledger holds is escaped: HTML is inert wherever the file is rendered, and a
//! body stays inside its quote however many lines it has.

use super::{Decision, Standing};

/// The record, as the file's whole text (one trailing newline).
pub fn markdown(d: &Decision) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", inline(&d.topic)));
    let status = match (&d.status, &d.superseded_by) {
        (Standing::Superseded, Some(by)) => format!("superseded by {by}"),
        _ => "accepted".to_owned(),
    };
    out.push_str(&format!("- Status: {status}\n"));
    let via = d
        .decision
        .via
        .as_deref()
        .map(|v| format!(" via {}", inline(v)))
        .unwrap_or_default();
    out.push_str(&format!(
        "- Date: {} by {}{via}\n",
        d.decision.at.as_str(),
        inline(&d.decision.by)
    ));
    let field = d
        .field
        .as_deref()
        .map(|f| format!(", field {}", code(f)))
        .unwrap_or_default();
    out.push_str(&format!(
        "- Record: {} of issue #{}{field}, severity {}\n",
        d.id,
        d.issue,
        d.severity.as_str()
    ));
    context(&mut out, d);
    decision(&mut out, d);
    links(&mut out, d);
    // One blank line between blocks: a quoted line always starts with `>`, so no line of
    // what the ledger holds is touched.
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out
}

fn context(out: &mut String, d: &Decision) {
    out.push_str("\n## Context and problem statement\n\n");
    out.push_str(&quoted(&d.question));
    if let Some(c) = &d.context {
        out.push('\n');
        out.push_str(&quoted(c));
    }
    out.push_str("\n### Thread\n\n");
    for (i, said) in d.thread.iter().enumerate() {
        out.push_str(&format!(
            "{}. {} by {}, {}\n",
            i + 1,
            said.kind,
            inline(&said.from),
            said.at.as_str()
        ));
        if !said.body.trim().is_empty() {
            out.push('\n');
            for line in quoted(&said.body).lines() {
                out.push_str("   ");
                out.push_str(line);
                out.push('\n');
            }
            out.push('\n');
        }
    }
}

fn decision(out: &mut String, d: &Decision) {
    out.push_str("\n## Decision outcome\n\n");
    if let Some(v) = &d.decision.value {
        let value = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let label = d
            .decision
            .label
            .as_deref()
            .filter(|l| *l != value)
            .map(|l| format!(" ({})", inline(l)))
            .unwrap_or_default();
        out.push_str(&format!("Chosen: {}{label}\n\n", code(&value)));
    }
    out.push_str(&quoted(&d.decision.text));
}

fn links(out: &mut String, d: &Decision) {
    out.push_str("\n## Links\n\n");
    out.push_str(&format!("- Issue: #{}\n- Record: {}\n", d.issue, d.id));
    if let Some(h) = &d.decision.hash {
        out.push_str(&format!("- Resolution entry hash: {}\n", code(h)));
    }
    let signed = match &d.decision.signer {
        Some(s) => format!("signed by {}: {}", inline(s), inline(&d.decision.signature)),
        None => "unsigned".to_owned(),
    };
    out.push_str(&format!("- Signature: {signed}\n"));
    if !d.supersedes.is_empty() {
        out.push_str(&format!("- Supersedes: {}\n", d.supersedes.join(", ")));
    }
    if let Some(by) = &d.superseded_by {
        out.push_str(&format!("- Superseded by: {by}\n"));
    }
}

/// HTML made inert: what a ledger holds is shown, never interpreted (in a quote, where
/// Markdown's own marks are harmless and left as written).
fn inert(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A text on one line (a title, a name): whitespace runs are one space, Markdown's marks
/// escaped as everywhere else a ledger's text is embedded (`render::escape_markdown`).
fn inline(text: &str) -> String {
    crate::render::escape_markdown(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A text as a block quote, every line of it (an empty line too, so it stays one quote).
fn quoted(text: &str) -> String {
    let mut out = String::new();
    let safe = crate::render::sanitize_terminal(text.trim_end());
    for line in inert(&safe).lines() {
        out.push('>');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(">\n");
    }
    out
}

/// A code span whose fence is longer than any run of backticks in `text`.
fn code(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}
