//! `agentx gate --issue N [--operation OP]` (Layer 4, docs/protocol.md §16): refuse, don't guess —
//! exit 0 when no open BLOCK gap of the issue blocks the operation, else GATE_CLOSED.

use agentx_clarify_command::layer4::{gate, gate_json};
use agentx_clarify_core::layer4::Gate;
use agentx_clarify_core::names::parse_issue;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;

use crate::exit::{self, Outcome};
use crate::print;

#[derive(Args, Debug)]
pub struct GateArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    /// The operation about to run (e.g. deploy); none: any operation
    #[arg(long, value_name = "OP")]
    pub operation: Option<String>,
}

pub fn run(ws: &Workspace, json: bool, a: &GateArgs) -> Outcome {
    let issue = parse_issue(&a.issue)?;
    let g = gate(ws, issue, a.operation.as_deref())?;
    if json {
        print::json(&gate_json(&g));
    } else {
        print::text(&gate_text(&g));
    }
    Ok(g.error().map_or(0, |e| {
        if !json {
            print::error_line(&e);
        }
        exit::code(&e)
    }))
}

fn gate_text(g: &Gate) -> String {
    let what = g
        .operation
        .as_deref()
        .map_or_else(|| String::from("any operation"), |op| format!("'{op}'"));
    if !g.is_closed() {
        return format!(
            "gate open: issue #{} may proceed with {what}",
            g.issue_number
        );
    }
    let mut lines = vec![format!(
        "gate closed: {} open BLOCK gap(s) of issue #{} block {what}",
        g.open.len(),
        g.issue_number
    )];
    for gap in &g.open {
        let field = gap.field.as_deref().unwrap_or(&gap.topic);
        lines.push(format!(
            "  {}  {}  {field}  {} → {}",
            gap.clarification_id,
            gap.status.as_str(),
            gap.from,
            gap.to
        ));
    }
    lines.join("\n")
}
