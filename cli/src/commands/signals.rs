//! `agentx signals parse|ingest|resume-prompt` (docs/protocol.md §17): the grammar, reading the output
//! from a file or stdin, and the words of each report.

use std::io::Read;

use agentx_clarify_command::signals::{ingest, resume_prompt, Ingested};
use agentx_clarify_core::api::signals::{parse_value, resume_value};
use agentx_clarify_core::call::IssueArg;
use agentx_clarify_core::envelope::ok;
use agentx_clarify_core::render::{sanitize_terminal, text_report};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Subcommand;
use serde_json::Value;

use crate::print;

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum Signals {
    /// Show the signal blocks of an agent's output: fields, typed view, problems by line
    #[command(
        after_help = "Examples:\n  agentx signals parse output.log\n  my-agent | agentx signals parse --json\n  agentx signals parse - < output.log"
    )]
    Parse {
        /// The output to read; `-` or nothing: stdin
        file: Option<String>,
    },
    /// Act on every signal block of an agent's output (idempotent: re-running skips what is in)
    #[command(
        after_help = "Blocks: [CLARIFICATION_NEEDED] asks its `to` (else --parent; else a human),\n[STOP_WORK] escalates to a human at once, [DELEGATE_WORK] requests a delegation,\n[COMPLETION_REPORT] completes the agent's oldest open delegation on the issue.\n\nExamples:\n  agentx signals ingest --issue 42 --agent researcher --parent coordinator output.log\n  my-agent 2>&1 | tee run.log | agentx signals ingest --issue 42 --agent researcher -\n  agentx --json signals ingest --issue 42 --agent researcher run.log | jq '.blocks[].outcome'"
    )]
    Ingest {
        #[arg(long, value_name = "N")]
        issue: String,
        /// The agent whose output it is (blocks are attributed to it, never to their agent_id)
        #[arg(long)]
        agent: String,
        /// Its coordinator: asked when a block names no target
        #[arg(long)]
        parent: Option<String>,
        /// The output to read; `-` or nothing: stdin
        file: Option<String>,
    },
    /// Print the text that resumes an agent: CLARIFICATION RESPONSE, BLOCKER RESOLVED, DELEGATION …
    #[command(
        name = "resume-prompt",
        after_help = "Examples:\n  agentx signals resume-prompt CLR-42-001 | my-agent --resume\n  agentx signals resume-prompt DLG-42-001\n  agentx --json signals resume-prompt CLR-42-002 | jq -r .text"
    )]
    ResumePrompt { id: String },
}

/// Reads the output to act on: a file, or stdin for `-` or none. Bytes that are not UTF-8
/// are replaced (agents print anything), so binary garbage parses rather than fails.
fn read_input(file: Option<&str>) -> Result<String, ClarifyError> {
    let mut bytes = Vec::new();
    match file {
        None | Some("-") => std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| ClarifyError::Io {
                message: format!("cannot read stdin: {e}"),
            })?,
        Some(path) => {
            bytes = std::fs::read(path).map_err(|e| ClarifyError::Io {
                message: format!("cannot read {path}: {e}"),
            })?;
            bytes.len()
        }
    };
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

pub fn run(ws: &Workspace, now: i64, json: bool, cmd: Signals) -> Result<i32, ClarifyError> {
    match cmd {
        Signals::Parse { file } => {
            let text = read_input(file.as_deref())?;
            let v = parse_value(&text);
            if json {
                print::json(&ok(v));
            } else {
                print::text(&parse_text(&v));
            }
        }
        Signals::Ingest {
            issue,
            agent,
            parent,
            file,
        } => {
            // The context as `signalsIngest`'s input holds it; checked before the output is
            // read.
            let ctx = agentx_clarify_core::signals::Context {
                issue: IssueArg::from(issue.as_str()).checked()?,
                agent,
                parent,
            };
            let text = read_input(file.as_deref())?;
            let done = ingest(ws, now, &ctx, &text)?;
            for w in &done.warnings {
                print::warn(w);
            }
            if json {
                print::json(&done.to_json());
            } else {
                print::text(&ingest_text(&done));
            }
        }
        Signals::ResumePrompt { id } => return resume(ws, json, &id),
    }
    Ok(0)
}

fn lines_of(b: &Value) -> String {
    match (b["startLine"].as_u64(), b["endLine"].as_u64()) {
        (Some(s), Some(e)) => format!("lines {s}-{e}"),
        (Some(s), None) => format!("line {s}- (not closed)"),
        _ => String::from("?"),
    }
}

fn problem_lines(out: &mut Vec<String>, problems: &Value, indent: &str) {
    for p in problems.as_array().into_iter().flatten() {
        out.push(format!(
            "{indent}line {}: {}",
            p["line"],
            sanitize_terminal(p["message"].as_str().unwrap_or_default())
        ));
    }
}

/// `signals parse` in words: each block, its fields (or problems), then stray tags.
fn parse_text(v: &Value) -> String {
    let blocks = v["blocks"].as_array().map_or(&[][..], Vec::as_slice);
    let mut out = Vec::new();
    if blocks.is_empty() {
        out.push(String::from("no signal block found"));
    }
    for b in blocks {
        let verdict = if b["signal"].is_null() {
            "has problems: never acted on"
        } else {
            "ok"
        };
        out.push(format!(
            "[{}] {}: {verdict}",
            b["block"].as_str().unwrap_or("?"),
            lines_of(b)
        ));
        for (key, value) in b["fields"].as_object().into_iter().flatten() {
            let shown = match value {
                Value::Array(items) => format!("{} item(s)", items.len()),
                Value::String(s) => {
                    let first = s.lines().next().unwrap_or_default();
                    let more = if s.contains('\n') { " …" } else { "" };
                    format!("{}{more}", sanitize_terminal(first))
                }
                other => other.to_string(),
            };
            out.push(format!("  {}: {shown}", sanitize_terminal(key)));
        }
        problem_lines(&mut out, &b["problems"], "  problem: ");
    }
    problem_lines(&mut out, &v["problems"], "outside blocks: ");
    out.join("\n")
}

/// `signals ingest` in words: one line per block, what it did, its problems and warnings.
fn ingest_text(done: &Ingested) -> String {
    let v = done.to_json();
    let mut out = Vec::new();
    let blocks = v["blocks"].as_array().map_or(&[][..], Vec::as_slice);
    if blocks.is_empty() {
        out.push(String::from("no signal block found: nothing to do"));
    }
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for b in blocks {
        let outcome = b["outcome"].as_str().unwrap_or("?");
        *counts.entry(outcome).or_default() += 1;
        let mut line = format!(
            "{:<16} {:<22} {:<8} {:<8}",
            lines_of(b),
            b["block"].as_str().unwrap_or("?"),
            b["action"].as_str().unwrap_or("?"),
            outcome
        );
        if let Some(id) = b["id"].as_str() {
            line.push_str(&format!(" {id}"));
        }
        if let Some(status) = b["status"].as_str() {
            line.push_str(&format!(" ({status})"));
        }
        if let Some(reason) = b["reason"].as_str() {
            line.push_str(&format!(": {}", sanitize_terminal(reason)));
        }
        if let Some(message) = b["error"]["message"].as_str() {
            line.push_str(&format!(
                ": {} {}",
                b["error"]["code"].as_str().unwrap_or_default(),
                sanitize_terminal(message)
            ));
        }
        out.push(line.trim_end().to_owned());
        problem_lines(&mut out, &b["problems"], "    ");
        for w in b["warnings"].as_array().into_iter().flatten() {
            out.push(format!(
                "    warning: {}",
                sanitize_terminal(w.as_str().unwrap_or_default())
            ));
        }
    }
    problem_lines(&mut out, &v["problems"], "outside blocks: ");
    if !blocks.is_empty() {
        let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        out.push(format!("{} block(s): {}", blocks.len(), summary.join(", ")));
    }
    let report = &done.monitor.report;
    if !report.is_quiet() || !report.errors.is_empty() {
        out.push(text_report(report, print::STYLE));
    }
    out.join("\n")
}

/// `agentx signals resume-prompt <id>` and `agentx clarify resume-prompt <id>`: one text.
pub fn resume(ws: &Workspace, json: bool, id: &str) -> Result<i32, ClarifyError> {
    let resume = resume_prompt(ws, id)?;
    if json {
        print::json(&ok(resume_value(&resume)));
    } else {
        print::text(&resume.text());
    }
    Ok(0)
}
