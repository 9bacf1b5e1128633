//! `agentx clarify list|show|verify|scope|wakeup|graph|stats`: the commands that read the
//! records. `list` and `scope` build the JSON object every surface sends (the command layer's
//! JSON route) and the core's decoders read their filter and question from it.

use agentx_clarify_command as commands;
use agentx_clarify_core::call::store as input;
use agentx_clarify_core::call::IssueArg;
use agentx_clarify_core::render::{text_list, text_people, text_stats, text_thread};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::clock::parse_now;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::{Args, ValueEnum};
use serde_json::json;

use crate::commands::parse_issue_opt;
use crate::exit::{self, Outcome};
use crate::{previews, print};

#[derive(Args, Debug)]
pub struct ScopeArgs {
    /// The requester (without it: which agents may ask at all)
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub to: Option<String>,
    /// The issue (its ledger records the workflow of its first request)
    #[arg(long, value_name = "N")]
    pub issue: Option<String>,
    #[arg(long)]
    pub non_blocking: bool,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(long)]
    pub step: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    Pending,
    Stale,
    Answered,
    Escalated,
    Resolved,
    Abandoned,
}

impl StatusArg {
    pub fn status(self) -> agentx_clarify_core::Status {
        use agentx_clarify_core::Status;
        match self {
            StatusArg::Pending => Status::Pending,
            StatusArg::Stale => Status::Stale,
            StatusArg::Answered => Status::Answered,
            StatusArg::Escalated => Status::Escalated,
            StatusArg::Resolved => Status::Resolved,
            StatusArg::Abandoned => Status::Abandoned,
        }
    }
}

/// `list [--issue N] [--status S]… [--all]`: the `list` operation's input.
pub fn list_input(issue: Option<String>, status: &[StatusArg], all: bool) -> input::List {
    input::List {
        issue: issue.map(|i| IssueArg::from(i.as_str())),
        status: Some(
            status
                .iter()
                .map(|s| s.status().as_str().to_owned())
                .collect(),
        ),
        all: Some(all),
    }
}

pub fn list(ws: &Workspace, json: bool, input: &input::List) -> Outcome {
    let listed = commands::list(ws, &input.filter()?)?;
    print::report_errors(&listed.errors);
    if json {
        print::json(&listed.to_json());
    } else {
        let refs: Vec<_> = listed.records.iter().map(|(i, r)| (*i, r)).collect();
        print::text(&text_list(&refs, print::STYLE));
    }
    Ok(0)
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The words to look for
    pub query: String,
    #[arg(long, value_name = "N")]
    pub issue: Option<String>,
    /// Only records in these statuses (repeat for several)
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Vec<StatusArg>,
    /// Only records of this field
    #[arg(long, value_name = "F")]
    pub field: Option<String>,
    /// Only records this agent asked
    #[arg(long, value_name = "AGENT")]
    pub from: Option<String>,
    /// Only records asked of this agent
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// At most this many hits (1–100)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub limit: i64,
}

/// `search "<query>" [--issue N] [--status S]… [--field F] [--limit N]`: the `search`
/// operation's input.
pub fn search_input(a: SearchArgs) -> input::Search {
    input::Search {
        query: a.query,
        issue: a.issue.map(|i| IssueArg::from(i.as_str())),
        status: Some(
            a.status
                .iter()
                .map(|s| s.status().as_str().to_owned())
                .collect(),
        ),
        field: a.field,
        from: a.from,
        to: a.to,
        limit: Some(agentx_clarify_core::call::Integer(a.limit)),
    }
}

pub fn search(ws: &Workspace, json: bool, input: input::Search) -> Outcome {
    let query = agentx_clarify_core::search::Query {
        text: &input.query,
        field: input.field.as_deref(),
    };
    let found = commands::search::search(ws, &query, &input.filter()?)?;
    print::report_errors(&found.errors);
    if json {
        print::json(&found.to_json());
    } else {
        print::text(&agentx_clarify_core::render::text_hits(
            &found.hits,
            print::STYLE,
        ));
    }
    Ok(0)
}

pub fn show(ws: &Workspace, json: bool, id: Option<String>, issue: Option<String>) -> Outcome {
    if let Some(id) = id {
        let (issue, record) = commands::show_id(ws, &id)?;
        if json {
            print::json(&agentx_clarify_command::query::show_json(issue, &record));
        } else {
            print::text(&text_thread(issue, &record, print::STYLE));
        }
        return Ok(0);
    }
    let issue = agentx_clarify_core::names::parse_issue(issue.as_deref().unwrap_or(""))?;
    let ledger = commands::show_issue(ws, issue)?;
    if json {
        print::json(&json!({"ok": true, "ledger": ledger.output()}));
    } else if ledger.clarifications.is_empty() {
        print::text(&format!("issue #{issue} has no clarifications"));
    } else {
        let threads: Vec<String> = ledger
            .clarifications
            .iter()
            .map(|r| text_thread(issue, r, print::STYLE))
            .collect();
        print::text(&threads.join("\n\n"));
    }
    Ok(0)
}

pub fn verify(ws: &Workspace, json: bool) -> Outcome {
    let outcome = commands::verify(ws)?;
    if json {
        print::json(&outcome.to_json());
    } else {
        // Records written by another tool: `agentx migrate` upgrades them.
        for w in &outcome.warnings {
            print::warn(&format!(
                "{}  {}  {}",
                w.file,
                w.id.as_deref().unwrap_or("-"),
                w.message
            ));
        }
        if outcome.problems.is_empty() {
            let warnings = if outcome.warnings.is_empty() {
                String::new()
            } else {
                format!(", {} warning(s)", outcome.warnings.len())
            };
            print::text(&format!(
                "verified {} ledger file(s): no problems{warnings}",
                outcome.files
            ));
        }
        for p in &outcome.problems {
            print::text(&format!(
                "{}  {}  {}",
                p.file,
                p.id.as_deref().unwrap_or("-"),
                p.message
            ));
        }
    }
    Ok(outcome.error().map_or(0, |e| {
        if !json {
            print::error_line(&e);
        }
        exit::code(&e)
    }))
}

/// `scope`'s flags: the `scopePreview` operation's input.
pub fn scope_input(a: &ScopeArgs) -> input::ScopePreview {
    input::ScopePreview {
        from: a.from.clone(),
        to: a.to.clone(),
        blocking: Some(!a.non_blocking),
        workflow: a.workflow.clone(),
        step: a.step.clone(),
        issue_number: a.issue.as_deref().map(IssueArg::from),
    }
}

pub fn scope(ws: &Workspace, json: bool, input: input::ScopePreview) -> Outcome {
    let issue = agentx_clarify_core::call::opt_issue(input.issue_number.as_ref())?;
    let question = input.question();
    let preview = commands::query::scope_preview(ws, &question, issue)?;
    let v = json!({"ok": true, "preview": preview});
    print::or(json, &v, || previews::scope_text(&question, &preview))
}

pub fn wakeup(ws: &Workspace, now: i64, json: bool) -> Outcome {
    let monitor = commands::query::next_wakeup(ws, now)?;
    // A workspace with notification sinks: its outbox's next retry, ladder step
    // or reminder counts too (run `agentx notify send` at the wake-up as well).
    let sinks = ws.files.settings().sinks()?;
    let notify = if sinks.is_empty() {
        None
    } else {
        let outbox = agentx_clarify_notify::home::Home(ws)
            .read_outbox()?
            .next_due();
        // A ladder's next step (`then`) is owed nothing until it assigns: it counts too.
        let ladder = if sinks.iter().any(|s| !s.then.is_empty()) {
            let (ledgers, _) = commands::query::read_all(ws)?;
            let refs: Vec<_> = ledgers.iter().collect();
            agentx_clarify_core::people::ladder_next(sinks, &refs, now)
        } else {
            None
        };
        outbox.into_iter().chain(ladder).min()
    };
    let wakeup = match (monitor, notify) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut v = json!({"ok": true, "wakeup": wakeup});
    if notify.is_some() {
        v["monitor"] = json!(monitor);
        v["notify"] = json!(notify);
    }
    print::or(json, &v, || previews::wakeup_text(wakeup, now))
}

pub fn graph(ws: &Workspace, json: bool, issue: Option<&str>) -> Outcome {
    let graphs = commands::query::wait_for_graphs(ws, parse_issue_opt(issue)?)?;
    let v = json!({"ok": true, "graphs": graphs});
    print::or(json, &v, || previews::graph_text(&graphs))
}

/// `stats [--since TIME] [--people]`: the time as `--now` reads it (also epoch milliseconds).
pub fn stats(ws: &Workspace, json: bool, since: Option<&str>, people: bool) -> Outcome {
    // Spelled as every surface spells the field (the vectors deep-equal the results).
    let since = since
        .map(parse_now)
        .transpose()
        .map_err(|why| ClarifyError::InvalidInput {
            message: format!("`since`: {why}"),
        })?;
    let outcome = if people {
        commands::stats_people(ws, since)?
    } else {
        commands::stats(ws, since)?
    };
    print::report_errors(&outcome.errors);
    if json {
        print::json(&outcome.to_json());
    } else {
        let mut text = text_stats(&outcome.stats);
        if let Some(rows) = &outcome.people {
            text.push_str("\n\n");
            text.push_str(&text_people(rows));
        }
        print::text(&text);
    }
    Ok(0)
}
