//! `agentx hook start|finish`, `agentx state` and `agentx ready`: what each agent is doing, and
//! which issues wait on open clarifications.

use agentx_clarify_command::{self as commands, HookEvent};
use agentx_clarify_core::listing::ready_line;
use agentx_clarify_core::render::text_report;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::{Args, Subcommand, ValueEnum};

use crate::commands::parse_issue_opt;
use crate::exit::Outcome;
use crate::print;

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum Hook {
    /// The agent starts working (status working)
    #[command(after_help = "Example:\n  agentx hook start engineer 42")]
    Start {
        agent: String,
        issue: Option<String>,
    },
    /// The agent finished (status done)
    #[command(after_help = "Example:\n  agentx hook finish engineer 42")]
    Finish {
        agent: String,
        issue: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct ReadyArgs {
    /// Count escalated blocking records (their requester waits on a human): the default
    #[arg(long, conflicts_with = "no_escalated")]
    pub include_escalated: bool,
    /// Count only pending and stale records: an escalated one does not block its issue
    #[arg(long)]
    pub no_escalated: bool,
}

#[derive(Args, Debug)]
pub struct StateArgs {
    #[arg(long, requires = "status")]
    pub agent: Option<String>,
    #[arg(long, value_enum, requires = "agent")]
    pub status: Option<AgentStateArg>,
    #[arg(long, value_name = "N", requires = "agent")]
    pub issue: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AgentStateArg {
    Idle,
    Working,
    Clarifying,
    BlockedClarification,
    Done,
    Stuck,
}

impl AgentStateArg {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStateArg::Idle => "idle",
            AgentStateArg::Working => "working",
            AgentStateArg::Clarifying => "clarifying",
            AgentStateArg::BlockedClarification => "blocked-clarification",
            AgentStateArg::Done => "done",
            AgentStateArg::Stuck => "stuck",
        }
    }
}

pub fn hook(ws: &Workspace, now: i64, json: bool, cmd: Hook) -> Outcome {
    let (event, agent, issue) = match cmd {
        Hook::Start { agent, issue } => (HookEvent::Start, agent, issue),
        Hook::Finish { agent, issue } => (HookEvent::Finish, agent, issue),
    };
    let issue = parse_issue_opt(issue.as_deref())?;
    let outcome = commands::hook(ws, now, event, &agent, issue)?;
    if let Some(w) = &outcome.warning {
        print::warn(w);
    }
    print::warnings(&outcome.warnings);
    if json {
        print::json(&outcome.to_json());
    } else {
        let on = issue.map_or_else(String::new, |n| format!(" on issue #{n}"));
        print::text(&format!("{agent}: {}{on}", outcome.written.status));
        if !outcome.monitor.report.is_quiet() || !outcome.monitor.report.errors.is_empty() {
            print::text(&text_report(&outcome.monitor.report, print::STYLE));
        }
    }
    Ok(0)
}

pub fn ready(ws: &Workspace, now: i64, json: bool, a: &ReadyArgs) -> Outcome {
    let outcome = commands::ready(ws, now, !a.no_escalated)?;
    if json {
        print::report_errors(&outcome.monitor.report.errors);
        print::json(&outcome.to_json());
    } else {
        // The text report lists the errors (on stdout, with the rest of the report).
        if !outcome.monitor.report.is_quiet() || !outcome.monitor.report.errors.is_empty() {
            print::text(&text_report(&outcome.monitor.report, print::STYLE));
        }
        if outcome.issues.is_empty() {
            print::text("no issue has clarifications");
        }
        for issue in &outcome.issues {
            print::text(&ready_line(issue));
        }
    }
    Ok(0)
}

pub fn state(ws: &Workspace, now: i64, json: bool, a: StateArgs) -> Outcome {
    let outcome = match (a.agent, a.status) {
        (Some(agent), Some(status)) => commands::state_set(
            ws,
            now,
            &agent,
            status.as_str(),
            parse_issue_opt(a.issue.as_deref())?,
        )?,
        _ => commands::state_get(ws)?,
    };
    if let Some(w) = &outcome.warning {
        print::warn(w);
    }
    if json {
        print::json(&outcome.to_json());
    } else if outcome.statuses.is_empty() {
        print::text("no agent statuses recorded");
    } else {
        for (name, s) in &outcome.statuses {
            let issue = s
                .issue
                .map_or_else(|| String::from("-"), |n| format!("#{n}"));
            let mut line = format!("{name:<20} {:<22} {issue:<8}", s.status);
            if let Some(w) = &s.waiting_on {
                line.push_str(&format!(" waiting on {w}"));
            }
            if let Some(r) = &s.responding_to {
                line.push_str(&format!(" answering {r}"));
            }
            if let Some(id) = &s.clarification_id {
                line.push_str(&format!(" ({id})"));
            }
            print::text(line.trim_end());
        }
    }
    Ok(0)
}
