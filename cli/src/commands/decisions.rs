//! `agentx decisions list` and `agentx decisions export --format adr DIR` (docs/protocol.md
//! §36): the decisions the ledgers hold, listed or written one file each — MADR-style
//! Markdown or JSON — under stable names, so a second export changes nothing and a decision
//! superseded since is rewritten with its new status.

use std::path::{Path, PathBuf};

use agentx_clarify_command::decisions::{list as list_decisions, Listed};
use agentx_clarify_core::decisions::{markdown, Decision, Select, Standing};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use crate::exit::Outcome;
use crate::print;

#[derive(Subcommand, Debug)]
pub enum Decisions {
    /// List the decisions taken: resolved records deciding a field or of severity BLOCK
    #[command(
        after_help = "Examples:\n  agentx decisions list\n  agentx decisions list --all --since 2026-11-01\n  agentx decisions list --json | jq '.decisions[] | {id, status}'"
    )]
    List(Which),
    /// Write one file per decision into DIR, named 0042-<topic>-clr-42-001.md (or .json)
    #[command(
        after_help = "Examples:\n  agentx decisions export --format adr docs/adr\n  agentx decisions export --format json --all ./decisions\n\nRunning it again changes nothing; a decision superseded since is rewritten with\nits new status. Files of other decisions in DIR are left alone."
    )]
    Export(ExportArgs),
}

#[derive(Args, Debug)]
pub struct Which {
    /// Every resolved record, not only those deciding a field or of severity BLOCK
    #[arg(long)]
    pub all: bool,
    /// Only decisions taken at or after this time (RFC 3339, a date, or epoch ms)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The files' format
    #[arg(long, value_enum, default_value_t = Format::Adr)]
    pub format: Format,
    #[command(flatten)]
    pub which: Which,
    /// The directory to write to (created when missing)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Markdown architecture decision records (MADR-style)
    Adr,
    /// One JSON document per decision
    Json,
}

pub fn run(ws: &Workspace, json: bool, cmd: Decisions) -> Outcome {
    match cmd {
        Decisions::List(which) => list(ws, json, &which),
        Decisions::Export(a) => export(ws, json, &a),
    }
}

fn select(which: &Which) -> Result<Select, ClarifyError> {
    let since_ms = which
        .since
        .as_deref()
        .map(|t| {
            // A bare date is its first moment, UTC.
            let full = if t.len() == 10 && t.as_bytes().get(4) == Some(&b'-') {
                format!("{t}T00:00:00Z")
            } else {
                t.to_owned()
            };
            agentx_clarify_core::time::parse_instant(&full)
                .map_err(|why| ClarifyError::input(format!("--since: {why}")))
        })
        .transpose()?;
    Ok(Select {
        all: which.all,
        since_ms,
    })
}

fn list(ws: &Workspace, json: bool, which: &Which) -> Outcome {
    let Listed { decisions, errors } = list_decisions(ws, select(which)?)?;
    print::report_errors(&errors);
    if json {
        print::json(&json!({"ok": true, "decisions": decisions, "errors": errors}));
        return Ok(0);
    }
    if decisions.is_empty() {
        print::text("no decisions yet (resolved records deciding a field or of severity BLOCK; --all for every resolved record)");
        return Ok(0);
    }
    let lines: Vec<String> = decisions.iter().map(line).collect();
    print::text(&lines.join("\n"));
    Ok(0)
}

fn line(d: &Decision) -> String {
    let status = match &d.superseded_by {
        Some(by) => format!("superseded by {by}"),
        None => "accepted".to_owned(),
    };
    let what = d
        .decision
        .label
        .clone()
        .or_else(|| d.decision.text.lines().next().map(str::to_owned))
        .unwrap_or_default();
    format!(
        "{}  #{}  {}  {}  by {}  {}: {}",
        d.id,
        d.issue,
        status,
        d.decision.at.as_str(),
        d.decision.by,
        d.topic,
        what
    )
}

/// What an export did with one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wrote {
    New,
    Updated,
    Unchanged,
}

fn export(ws: &Workspace, json: bool, a: &ExportArgs) -> Outcome {
    let Listed { decisions, errors } = list_decisions(ws, select(&a.which)?)?;
    print::report_errors(&errors);
    std::fs::create_dir_all(&a.dir).map_err(|e| io(&a.dir, &e))?;
    let mut done: Vec<(String, Wrote)> = Vec::new();
    for d in &decisions {
        let (name, text) = match a.format {
            Format::Adr => (format!("{}.md", d.file), markdown(d)),
            Format::Json => {
                let text = serde_json::to_string_pretty(d).map_err(|e| ClarifyError::Internal {
                    message: format!("a decision as JSON: {e}"),
                })?;
                (format!("{}.json", d.file), text + "\n")
            }
        };
        let wrote = write_if_changed(&a.dir.join(&name), &text)?;
        done.push((name, wrote));
    }
    report(json, a, &decisions, &done);
    Ok(0)
}

/// Writes `text` to `path` unless it already holds it, through the store's atomic writer (a
/// link at `path` is refused, the temporary file is created new beside it and renamed over
/// it), so an interrupted export leaves the old file or the new one, never half of one.
fn write_if_changed(path: &Path, text: &str) -> Result<Wrote, ClarifyError> {
    agentx_clarify_store::refuse_symlink(path)?;
    let wrote = match std::fs::read(path) {
        Ok(old) if old == text.as_bytes() => return Ok(Wrote::Unchanged),
        Ok(_) => Wrote::Updated,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Wrote::New,
        Err(e) => return Err(io(path, &e)),
    };
    agentx_clarify_store::write_atomic(path, text.as_bytes())?;
    Ok(wrote)
}

fn io(path: &Path, e: &std::io::Error) -> ClarifyError {
    ClarifyError::Io {
        message: format!("{}: {e}", path.display()),
    }
}

fn report(json: bool, a: &ExportArgs, decisions: &[Decision], done: &[(String, Wrote)]) {
    let named = |w: Wrote| -> Vec<&str> {
        done.iter()
            .filter(|(_, x)| *x == w)
            .map(|(n, _)| n.as_str())
            .collect()
    };
    let (new, updated) = (named(Wrote::New), named(Wrote::Updated));
    let unchanged = done.len() - new.len() - updated.len();
    let superseded = decisions
        .iter()
        .filter(|d| d.status == Standing::Superseded)
        .count();
    if json {
        print::json(&json!({
            "ok": true,
            "dir": a.dir.display().to_string(),
            "written": new,
            "updated": updated,
            "unchanged": unchanged,
            "superseded": superseded,
        }));
        return;
    }
    print::text(&format!(
        "{} decision(s) into {}: {} new, {} updated, {unchanged} unchanged ({superseded} superseded)",
        done.len(),
        a.dir.display(),
        new.len(),
        updated.len()
    ));
}
