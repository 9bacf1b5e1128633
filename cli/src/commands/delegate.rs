//! `agentx delegate request|accept|complete|reject|fail|show|list` (docs/protocol.md §18): the grammar,
//! and the words of a delegation. Flags fill the operations' input structs every surface
//! decodes (`agentx_clarify_core::call::store`), so the CLI checks them as they do.

use agentx_clarify_command::delegate::{self, DelegationFilter, DelegationOutcome};
use agentx_clarify_core::call::store::{DelegateComplete, DelegateReject, DelegateRequest, List};
use agentx_clarify_core::call::{opt_issue, Integer, IssueArg};
use agentx_clarify_core::delegation::{Action, Delegation, Status};
use agentx_clarify_core::render::{sanitize_terminal, text_report};
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::print;

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum Delegate {
    /// Ask another agent to take a piece of work (seed 003's delegation envelope)
    #[command(
        after_help = "A target whose manifest (.agentx/agents/<name>.toml) lacks or excludes the capability\nis recorded as REJECTED_CAPABILITY at once.\n\nExamples:\n  agentx delegate request --issue 42 --from engineer --to architect \\\n      --capability architecture.design.system --objective \"Design the session cache\" \\\n      --context-slice '{\"constraints\": [\"p99 < 5 ms\"]}' --output-contract '{\"format\": \"adr\"}' \\\n      --timeout-minutes 90"
    )]
    Request(RequestArgs),
    /// The target takes the work on (its deadline starts: accepted + timeout minutes)
    #[command(after_help = "Example:\n  agentx delegate accept DLG-42-001 --from architect")]
    Accept {
        id: String,
        #[arg(long)]
        from: String,
    },
    /// The target hands the work back with its response envelope
    #[command(
        after_help = "Example:\n  agentx delegate complete DLG-42-001 --from architect --artifact docs/adr/0007-cache.md \\\n      --summary \"Redis with LRU eviction\" --metrics '{\"confidence\": 0.9}' \\\n      --follow-up \"Load-test the cache\" --unresolved \"TTL for admin sessions\""
    )]
    Complete(CompleteArgs),
    /// The target declines: the capability is not its own, or critical context is missing
    #[command(
        after_help = "Examples:\n  agentx delegate reject DLG-42-001 --from architect --reason capability\n  agentx delegate reject DLG-42-001 --from architect --reason context -m \"Which tenant model?\""
    )]
    Reject {
        id: String,
        #[arg(long)]
        from: String,
        /// `capability` (REJECTED_CAPABILITY) or `context` (REJECTED_CONTEXT)
        #[arg(long, default_value = "context")]
        reason: String,
        #[arg(short = 'm', long = "message", value_name = "TEXT")]
        message: Option<String>,
    },
    /// The target could not do the work (FAILED_EXECUTION)
    #[command(
        after_help = "Example:\n  agentx delegate fail DLG-42-001 --from architect -m \"The benchmark host is down\""
    )]
    Fail {
        id: String,
        #[arg(long)]
        from: String,
        #[arg(short = 'm', long = "message", value_name = "TEXT")]
        message: Option<String>,
    },
    /// Show one delegation with its thread, or every delegation of an issue
    #[command(
        after_help = "Examples:\n  agentx delegate show DLG-42-001\n  agentx delegate show --issue 42 --json"
    )]
    Show {
        #[arg(required_unless_present = "issue", conflicts_with = "issue")]
        id: Option<String>,
        #[arg(long, value_name = "N")]
        issue: Option<String>,
    },
    /// List delegations (default: open ones, REQUESTED and ACCEPTED)
    #[command(
        after_help = "Examples:\n  agentx delegate list\n  agentx delegate list --issue 42 --all\n  agentx delegate list --status TIMEOUT --status FAILED_EXECUTION --json"
    )]
    List {
        #[arg(long, value_name = "N")]
        issue: Option<String>,
        #[arg(long, value_name = "STATUS")]
        status: Vec<String>,
        /// Include finished delegations
        #[arg(long)]
        all: bool,
    },
}

#[derive(Args, Debug)]
pub struct RequestArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    #[arg(long)]
    pub from: String,
    #[arg(long)]
    pub to: String,
    /// A dotted capability name (e.g. research.context.deepen)
    #[arg(long)]
    pub capability: Option<String>,
    #[arg(long)]
    pub objective: String,
    /// What the target needs to know, as a JSON object
    #[arg(long, value_name = "JSON")]
    pub context_slice: Option<String>,
    /// What the result must look like, as a JSON object
    #[arg(long, value_name = "JSON")]
    pub output_contract: Option<String>,
    /// Minutes from acceptance to the monitor's TIMEOUT (default 60, at most 10080)
    #[arg(long, value_name = "MIN")]
    pub timeout_minutes: Option<String>,
}

#[derive(Args, Debug)]
pub struct CompleteArgs {
    pub id: String,
    #[arg(long)]
    pub from: String,
    /// Where the result is (a path or URL)
    #[arg(long, value_name = "PATH")]
    pub artifact: Option<String>,
    #[arg(long)]
    pub summary: Option<String>,
    /// Measured results, as a JSON object
    #[arg(long, value_name = "JSON")]
    pub metrics: Option<String>,
    /// A recommended next step (repeatable)
    #[arg(long = "follow-up", value_name = "TEXT")]
    pub follow_up: Vec<String>,
    /// An open point passed upstream (repeatable)
    #[arg(long, value_name = "TEXT")]
    pub unresolved: Vec<String>,
}

/// A JSON flag's value (`--context-slice`, `--metrics`): any JSON, checked by the input.
fn json_flag(flag: &str, text: Option<String>) -> Result<Option<Value>, ClarifyError> {
    text.map(|t| {
        serde_json::from_str(&t)
            .map_err(|e| ClarifyError::input(format!("--{flag} is not JSON: {e}")))
    })
    .transpose()
}

/// `--timeout-minutes`: a whole number.
fn minutes(text: Option<String>) -> Result<Option<Integer>, ClarifyError> {
    text.map(|t| {
        t.parse::<i64>().map(Integer).map_err(|_| {
            ClarifyError::input(format!(
                "`timeoutMinutes`: expected an integer, found \"{}\"",
                agentx_clarify_core::error::shown(&t)
            ))
        })
    })
    .transpose()
}

/// `request`'s input (`delegateRequest`). The issue is checked first, then the JSON flags,
/// then the input's fields.
fn request_input(a: RequestArgs) -> Result<DelegateRequest, ClarifyError> {
    let issue = agentx_clarify_core::names::parse_issue(&a.issue)?;
    Ok(DelegateRequest {
        issue_number: IssueArg::from(issue),
        from: a.from,
        to: a.to,
        capability: a.capability,
        objective: a.objective,
        context_slice: json_flag("context-slice", a.context_slice)?,
        output_contract: json_flag("output-contract", a.output_contract)?,
        timeout_minutes: minutes(a.timeout_minutes)?,
    })
}

/// `complete`'s input (`delegateComplete`): the response envelope.
fn complete_input(a: CompleteArgs) -> Result<DelegateComplete, ClarifyError> {
    Ok(DelegateComplete {
        id: a.id,
        from: a.from,
        message: None,
        artifact_path: a.artifact,
        summary: a.summary,
        metrics: json_flag("metrics", a.metrics)?,
        follow_up_recommended: Some(a.follow_up),
        unresolved: Some(a.unresolved),
    })
}

pub fn run(ws: &Workspace, now: i64, json: bool, cmd: Delegate) -> Result<i32, ClarifyError> {
    let outcome = match cmd {
        Delegate::Request(a) => delegate::request(ws, now, &request_input(a)?.into_delegation()?)?,
        Delegate::Accept { id, from } => delegate::act(ws, now, &id, &Action::accept(&from))?,
        Delegate::Complete(a) => {
            let c = complete_input(a)?;
            let id = c.id.clone();
            delegate::act(ws, now, &id, &c.action()?)?
        }
        Delegate::Reject {
            id,
            from,
            reason,
            message,
        } => {
            let r = DelegateReject {
                id,
                from,
                message,
                reason: Some(reason),
            };
            let id = r.id.clone();
            delegate::act(ws, now, &id, &r.action()?)?
        }
        Delegate::Fail { id, from, message } => {
            delegate::act(ws, now, &id, &Action::fail(&from, message))?
        }
        Delegate::Show { id, issue } => return show(ws, json, id, issue),
        Delegate::List { issue, status, all } => {
            let input = List {
                issue: issue.as_deref().map(IssueArg::from),
                status: Some(status),
                all: Some(all),
            };
            return list(ws, json, &input);
        }
    };
    if json {
        print::json(&outcome.to_json());
    } else {
        print_outcome(&outcome);
    }
    Ok(0)
}

/// `list [--issue N] [--status S]… [--all]` (`delegateList`'s input).
fn list(ws: &Workspace, json: bool, input: &List) -> Result<i32, ClarifyError> {
    let filter = DelegationFilter {
        issue: opt_issue(input.issue.as_ref())?,
        statuses: input.delegation_statuses()?,
        all: input.all.unwrap_or(false),
    };
    let listed = delegate::list(ws, &filter)?;
    for e in &listed.errors {
        print::warn(&format!("{}: {}", e.file, e.message));
    }
    if json {
        print::json(&listed.to_json());
    } else if listed.delegations.is_empty() {
        print::text("no delegations");
    } else {
        for (issue, d) in &listed.delegations {
            print::text(&summary_line(*issue, d));
        }
    }
    Ok(0)
}

fn show(
    ws: &Workspace,
    json: bool,
    id: Option<String>,
    issue: Option<String>,
) -> Result<i32, ClarifyError> {
    if let Some(id) = id {
        let (issue, d) = delegate::show(ws, &id)?;
        if json {
            print::json(&json!({"ok": true, "delegation": d.to_output(issue)}));
        } else {
            print::text(&text_delegation(issue, &d));
        }
        return Ok(0);
    }
    let issue = agentx_clarify_core::names::parse_issue(issue.as_deref().unwrap_or(""))?;
    let ledger = delegate::show_issue(ws, issue)?;
    if json {
        print::json(&json!({"ok": true, "ledger": ledger.to_value()}));
    } else {
        let mut parts: Vec<String> = ledger
            .delegations
            .iter()
            .map(|d| text_delegation(issue, d))
            .collect();
        for r in &ledger.reports {
            parts.push(format!(
                "completion report by {} ({}), closing no delegation: {}",
                r.agent,
                r.status,
                sanitize_terminal(&r.deliverables.join(", "))
            ));
        }
        if parts.is_empty() {
            parts.push(format!("issue #{issue} has no delegations"));
        }
        print::text(&parts.join("\n\n"));
    }
    Ok(0)
}

fn print_outcome(o: &DelegationOutcome) {
    if let Some(d) = &o.delegation {
        print::text(&text_delegation(o.issue, d));
    }
    if o.idempotent {
        print::text("(idempotent replay: the delegation already exists; nothing written)");
    }
    if !o.monitor.report.is_quiet() || !o.monitor.report.errors.is_empty() {
        print::text(&format!(
            "\n{}",
            text_report(&o.monitor.report, print::STYLE)
        ));
    }
}

/// `DLG-42-001  #42  engineer -> architect  ACCEPTED  architecture.design.system  Design …`.
fn summary_line(issue: u32, d: &Delegation) -> String {
    format!(
        "{}  #{issue}  {} -> {}  {:<19}  {}  {}",
        d.id,
        d.from,
        d.to,
        d.current_status().as_str(),
        d.capability.as_deref().unwrap_or("-"),
        sanitize_terminal(d.objective.lines().next().unwrap_or_default())
    )
}

/// One delegation: its envelope, its thread, its response.
fn text_delegation(issue: u32, d: &Delegation) -> String {
    let mut out = vec![print::STYLE.bold(&summary_line(issue, d))];
    let fold = d.fold();
    if let (Some(deadline), Status::Accepted) = (&fold.deadline, fold.status) {
        out.push(format!("  deadline {} (then TIMEOUT)", deadline.as_str()));
    }
    for (label, map) in [
        ("context", &d.context_slice),
        ("output contract", &d.output_contract),
    ] {
        if !map.is_empty() {
            out.push(format!(
                "  {label}: {}",
                sanitize_terminal(&Value::Object(map.clone()).to_string())
            ));
        }
    }
    for e in &d.thread {
        out.push(format!(
            "  {}  {:<19} {:<16} {}",
            format_ms(e.timestamp.ms()),
            e.status.as_str(),
            e.from,
            sanitize_terminal(&e.body)
        ));
    }
    if let Some(r) = &fold.response {
        if let Some(p) = &r.artifact_path {
            out.push(format!("  artifact: {}", sanitize_terminal(p)));
        }
        for (label, items) in [
            ("follow-up", &r.follow_up_recommended),
            ("unresolved", &r.unresolved),
        ] {
            for item in items {
                out.push(format!("  {label}: {}", sanitize_terminal(item)));
            }
        }
    }
    out.join("\n")
}
