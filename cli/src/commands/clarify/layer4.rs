//! Layer 4 on the command line (docs/protocol.md §16): `clarify check` and `clarify audit` —
//! reading the plan, drawing the session id (the layers below draw no randomness), and the
//! words of each result. `gate` and `keys` are families of their own.

use std::io::Read as _;

use agentx_clarify_command::layer4::{audit, audit_error, audit_json, check, AuditTarget};
use agentx_clarify_core::layer4::{Audit, AuditStep, CheckArgs as CoreCheckArgs, Plan};
use agentx_clarify_core::names::parse_issue;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::new_uuid_v4;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;

use crate::exit::{self, Outcome};
use crate::print;

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    /// The agent that refuses to guess (the requester of every gap)
    #[arg(long)]
    pub from: String,
    /// Whom gaps without their own `to` ask
    #[arg(long)]
    pub to: Option<String>,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(long)]
    pub step: Option<String>,
    /// The plan: Layer 4's {session_id?, agent_id?, gaps: [...]} as JSON; `-`: stdin
    #[arg(value_name = "PLAN.json")]
    pub plan: String,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The clarification to audit
    #[arg(required_unless_present = "issue", conflicts_with = "issue")]
    pub id: Option<String>,
    /// Audit every record of the issue
    #[arg(long, value_name = "N")]
    pub issue: Option<String>,
}

/// Reads the plan file (`-`: stdin).
fn read_plan(path: &str) -> Result<Plan, ClarifyError> {
    let mut text = String::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .read_to_string(&mut text)
            .map_err(|e| ClarifyError::Io {
                message: format!("cannot read the plan from stdin: {e}"),
            })?;
    } else {
        text = std::fs::read_to_string(path).map_err(|e| ClarifyError::Io {
            message: format!("cannot read the plan {path}: {e}"),
        })?;
    }
    Plan::parse_text(&text)
}

pub fn run_check(ws: &Workspace, now: i64, json: bool, a: CheckArgs) -> Outcome {
    let issue = parse_issue(&a.issue)?;
    let plan = read_plan(&a.plan)?;
    let new_session_id = match plan.session_id {
        Some(_) => String::new(),
        None => new_uuid_v4()?,
    };
    let args = CoreCheckArgs {
        issue_number: u64::from(issue),
        from: a.from,
        to: a.to,
        workflow: a.workflow,
        step: a.step,
        new_session_id,
    };
    let outcome = check(ws, now, &plan, &args)?;
    print::warnings(&outcome.warnings);
    if json {
        print::json(&outcome.to_json());
        return Ok(0);
    }
    let r = &outcome.response;
    for g in &r.gaps {
        let status = g.status.map_or("not asked", |s| s.as_str());
        let id = g.clarification_id.as_deref().unwrap_or("-");
        print::text(&format!(
            "[{}] {}  {}  {id}  {status}",
            g.gap.severity.as_str(),
            g.gap.id,
            g.gap.field
        ));
    }
    print::text(&format!(
        "session {}: {} ({} accepted, {} blocking, {} warning)",
        r.session_id, r.status, r.accepted_gaps, r.blocking_gaps, r.warning_gaps
    ));
    Ok(0)
}

pub fn run_audit(ws: &Workspace, json: bool, a: &AuditArgs) -> Outcome {
    let target = match (&a.id, &a.issue) {
        (Some(id), _) => AuditTarget::Record(id.clone()),
        (None, issue) => AuditTarget::Issue(parse_issue(issue.as_deref().unwrap_or(""))?),
    };
    let found = audit(ws, &target)?;
    if json {
        print::json(&audit_json(&found));
    } else {
        print::text(&audit_text(&found));
    }
    Ok(audit_error(&found).map_or(0, |e| {
        if !json {
            print::error_line(&e);
        }
        exit::code(&e)
    }))
}

/// `    decided 2026-11-22T10:01:00.000Z by alice (human via web), signed by agent-x: In-process
/// LRU [lru] — see ADR-7`.
fn step_line(verb: &str, s: &AuditStep) -> String {
    let signer = s
        .signer
        .as_deref()
        .map_or_else(|| String::from("unsigned"), |k| format!("signed by {k}"));
    let value = s.value.as_ref().map(|v| match v {
        serde_json::Value::String(t) => t.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    });
    let what = match (&s.label, value, &s.note) {
        (Some(label), Some(value), Some(note)) => format!("{label} [{value}] — {note}"),
        (Some(label), Some(value), None) => format!("{label} [{value}]"),
        (_, _, Some(note)) => note.clone(),
        _ => String::new(),
    };
    format!(
        "    {verb} {} by {}, {signer}: {what}",
        s.timestamp,
        s.who()
    )
}

fn audit_text(a: &Audit) -> String {
    let signed = |s: &Option<String>| if s.is_some() { "signed" } else { "unsigned" };
    let mut lines = Vec::new();
    for r in &a.chain {
        lines.push(format!(
            "round {}  {}  gap {}  asked {} ({})",
            r.round,
            r.clarification_id,
            r.gap.id,
            r.ask_timestamp,
            signed(&r.ask_signature)
        ));
        // Who answered and who decided, what they chose and wrote, and who signed it.
        for (verb, step) in [("answered", &r.answered), ("decided", &r.decided)] {
            if let Some(s) = step {
                lines.push(step_line(verb, s));
            }
        }
    }
    for p in &a.problems {
        lines.push(format!(
            "problem [{}] {}: {}",
            p.code,
            p.id.as_deref().unwrap_or("-"),
            p.message
        ));
    }
    lines.push(format!(
        "{} round(s), {}; {}",
        a.total_rounds,
        if a.all_resolved {
            "all resolved"
        } else {
            "not all resolved"
        },
        if a.verified {
            "verified"
        } else {
            "NOT verified"
        }
    ));
    lines.join("\n")
}
