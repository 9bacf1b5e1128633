//! Layer 4 on the command line (docs/protocol.md §16): `clarify check`, `clarify audit`, `gate` and
//! `keys new|list` — reading the plan, drawing the session id and key seeds (the layers
//! below draw no randomness), and the words of each result.

mod keys_ignore;

use std::io::Read as _;

use agentx_clarify_command::keys::{list_json, list_keys, new_key};
use agentx_clarify_command::layer4::{
    audit, audit_error, audit_json, check, gate, gate_json, AuditTarget,
};
use agentx_clarify_core::layer4::{Audit, CheckArgs as CoreCheckArgs, Gate, Plan};
use agentx_clarify_core::names::parse_issue;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::{new_uuid_v4, random_seed};
use agentx_clarify_store_any::AnyStore as Workspace;
use clap::{Args, Subcommand};

use crate::{exit, print};

type Outcome = Result<i32, ClarifyError>;

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

#[derive(Args, Debug)]
pub struct GateArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    /// The operation about to run (e.g. deploy); none: any operation
    #[arg(long, value_name = "OP")]
    pub operation: Option<String>,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in args.rs
pub enum Keys {
    /// Create an agent's ed25519 key pair (.agentx/keys/<agent>.pub and the private .key, 0600)
    #[command(
        after_help = "Examples:\n  agentx keys new agent-x      # the hub key: signs monitor, agent-x and human entries\n  agentx keys new engineer\n\nFrom then on every entry by that agent written in this workspace is signed, and\n`agentx clarify verify` checks the signatures against the .pub files. The private\nkey is never printed; .agentx/keys/.gitignore keeps *.key out of git."
    )]
    New { agent: String },
    /// List the workspace's keys: public key, whether the private key is here
    #[command(after_help = "Examples:\n  agentx keys list\n  agentx keys list --json")]
    List,
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

pub fn run_gate(ws: &Workspace, json: bool, a: &GateArgs) -> Outcome {
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
        if let (Some(at), Some(answer)) = (&r.answer_timestamp, &r.answer) {
            lines.push(format!(
                "    answered {at} ({}): {answer}",
                signed(&r.answer_signature)
            ));
        }
        if r.resolved {
            lines.push(String::from("    resolved"));
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

pub fn run_keys(ws: &Workspace, json: bool, cmd: Keys) -> Outcome {
    match cmd {
        Keys::New { agent } => {
            let created = new_key(ws, &agent, &random_seed()?)?;
            let private = created.files.get(1).map_or("", String::as_str);
            let ignored = keys_ignore::check(ws.files.root(), private);
            if json {
                print::json(&created.to_json());
                if ignored == keys_ignore::Ignored::No {
                    print::warn(&format!(
                        "{private} is NOT git-ignored: add `*.key` to .agentx/keys/.gitignore"
                    ));
                }
            } else {
                print::text(&format!(
                    "created the key of {}: {}\n  public  {}\n  private {private} ({})",
                    created.agent,
                    created.public_key,
                    created.files.first().map_or("", String::as_str),
                    keys_ignore::describe(&ignored, private),
                ));
            }
        }
        Keys::List => {
            let keys = list_keys(ws)?;
            if json {
                print::json(&list_json(&keys));
            } else if keys.is_empty() {
                print::text("no keys: `agentx keys new <agent>` creates one");
            } else {
                for k in &keys {
                    let mut line = format!(
                        "{:<20} {}",
                        k.agent,
                        k.public_key.as_deref().unwrap_or("(no .pub file)")
                    );
                    if k.private {
                        line.push_str("  [private key here: signs]");
                    }
                    if k.mismatch {
                        line.push_str("  [MISMATCH: the .pub is not this private key's]");
                    }
                    print::text(&line);
                }
            }
        }
    }
    Ok(0)
}
