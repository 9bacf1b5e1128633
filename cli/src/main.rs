//! `agentx`: the AgentX Clarify command line. Parses arguments, reads the clock once, calls
//! the shared commands, prints, and exits with the code of docs/protocol.md §11.1.

mod args;
mod clarify;
mod delegate;
mod demo;
mod demo_routing;
mod exit;
mod github;
mod kinds;
mod layer4;
#[cfg(feature = "mcp")]
mod mcp;
mod migrate;
mod notify;
mod previews;
mod print;
mod route;
#[cfg(feature = "serve")]
mod serve;
mod signals;
mod store;
mod typos;

use std::io::Write;
use std::process::ExitCode;

use agentx_clarify_command::{self as commands, HookEvent, Mutation, Store};
use agentx_clarify_core::listing::ready_line;
use agentx_clarify_core::render::{text_report, text_thread};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::clock::{parse_now, system_now_ms};
use agentx_clarify_store::DiskStore;
use agentx_clarify_store_any::AnyStore as Workspace;
use args::{Cli, ColorMode, Command, Hook};
use clap::{CommandFactory, Parser};
use serde_json::json;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            #[cfg(feature = "mcp")]
            if e.kind() == clap::error::ErrorKind::DisplayHelp
                && std::env::args().skip(1).any(|a| a == "mcp")
            {
                if let Some(help) = mcp::help() {
                    print::text(help.trim_end());
                    return ExitCode::SUCCESS;
                }
            }
            e.exit()
        }
    };
    let choice = match cli.color {
        ColorMode::Auto => anstream::ColorChoice::Auto,
        ColorMode::Always => anstream::ColorChoice::Always,
        ColorMode::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let code = run(cli);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn run(cli: Cli) -> i32 {
    let now = match cli.now.as_deref().map(parse_now) {
        None => system_now_ms(),
        Some(Ok(ms)) => ms,
        Some(Err(why)) => {
            let mut err = anstream::stderr();
            let _ = writeln!(err, "error: invalid value for '--now <TIME>': {why}");
            return 2;
        }
    };
    let root = match &cli.root {
        Some(root) => root.clone(),
        None => match std::env::current_dir() {
            Ok(cwd) => DiskStore::discover(&cwd),
            Err(e) => {
                return print::fail(
                    cli.json,
                    &ClarifyError::Io {
                        message: format!("cannot read the current directory: {e}"),
                    },
                )
            }
        },
    };
    let json = cli.json;
    // A root that does not exist is an error, not an empty workspace (docs/protocol.md §20); `init` and
    // the demo create theirs.
    let creates_root = matches!(
        cli.command,
        Command::Init | Command::Demo | Command::Completions { .. }
    );
    if cli.root.is_some() && !creates_root {
        if let Err(e) = DiskStore::new(&root).require_root() {
            return print::fail(json, &e);
        }
    }
    let result = match cli.command {
        // The workspace's own files, wherever its state is kept.
        Command::Init => init(&DiskStore::new(root), json),
        Command::Demo => demo::run(
            &DiskStore::new(root),
            cli.root.is_some(),
            cli.now.is_some().then_some(now),
            json,
        ),
        Command::Store(cmd) => store::run(&root, json, cmd),
        // The sinks are workspace files (settings); sending touches no state.
        Command::Notify(cmd) => notify::run(&root, now, json, cmd),
        Command::Github(cmd) => github::run(&root, now, json, cmd),
        #[cfg(feature = "mcp")]
        Command::Mcp { agent, issue } => {
            let root = match mcp::root(cli.root.as_deref()) {
                Ok(root) => root,
                Err(why) => return mcp::refuse(&why),
            };
            mcp::announce(&root, &agent);
            agentx_clarify_store_any::location(&root).and_then(|location| {
                let changes = match location {
                    agentx_clarify_store_any::Location::Files => agentx_clarify_mcp::Changes::Files,
                    agentx_clarify_store_any::Location::Postgres(_) => {
                        agentx_clarify_mcp::Changes::Store
                    }
                };
                agentx_clarify_mcp::serve(root, &agent, issue.as_deref(), mcp_call, changes)
            })
        }
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(root, args),
        #[cfg(feature = "serve")]
        Command::Tokens(cmd) => serve::tokens(&root, now, json, cmd),
        Command::Completions { shell } => {
            // Generated in memory: clap_complete panics when its writer fails, and a closed
            // pipe (`agentx completions bash | head`) must end the command quietly.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "agentx", &mut script);
            let _ = std::io::stdout().write_all(&script);
            Ok(0)
        }
        command => {
            typos::warn(&root);
            agentx_clarify_store_any::open(&root)
                .and_then(|ws| on_state(&ws, now, cli.now.is_some(), json, command))
        }
    };
    result.unwrap_or_else(|e| print::fail(json, &e))
}

/// The commands that read or change the state, on the workspace's store.
fn on_state(ws: &Workspace, now: i64, fixed: bool, json: bool, command: Command) -> Outcome {
    match command {
        Command::Clarify(c) => clarify::run(ws, now, fixed, json, c),
        Command::Signals(c) => signals::run(ws, now, json, c),
        Command::Delegate(c) => delegate::run(ws, now, json, c),
        Command::Hook(Hook::Start { agent, issue }) => {
            hook(ws, now, json, HookEvent::Start, &agent, issue.as_deref())
        }
        Command::Hook(Hook::Finish { agent, issue }) => {
            hook(ws, now, json, HookEvent::Finish, &agent, issue.as_deref())
        }
        Command::Ready(a) => ready(ws, now, json, !a.no_escalated),
        Command::State(a) => state(ws, now, json, a),
        Command::Migrate { dry_run } => migrate::run(ws, json, dry_run),
        Command::Gate(a) => layer4::run_gate(ws, json, &a),
        Command::Keys(c) => layer4::run_keys(ws, json, c),
        other => Err(ClarifyError::Internal {
            message: format!("{other:?} does not run on the store"),
        }),
    }
}

/// The MCP server's store calls: each opens the workspace's store (a pooled connection for
/// PostgreSQL) and runs one operation of the command layer.
#[cfg(feature = "mcp")]
fn mcp_call(root: &std::path::Path, op: &str, input: &serde_json::Value) -> serde_json::Value {
    match agentx_clarify_store_any::open(root) {
        Ok(ws) => {
            let runner = agentx_clarify_a2a::HubRunner::new(root);
            // A plan without a session gets a new one here: the layers below draw no
            // randomness.
            let with_session = agentx_clarify_store::with_new_session(op, input);
            let input = with_session.as_ref().unwrap_or(input);
            commands::call_routed(&ws, &runner, op, input, &system_now_ms)
        }
        Err(e) => agentx_clarify_core::envelope::failure(&e),
    }
}

pub(crate) type Outcome = Result<i32, ClarifyError>;

pub(crate) fn parse_issue_opt(text: Option<&str>) -> Result<Option<u32>, ClarifyError> {
    text.map(agentx_clarify_core::names::parse_issue)
        .transpose()
}

fn init(ws: &DiskStore, json: bool) -> Outcome {
    let created = ws.init()?;
    if json {
        print::json(&json!({"ok": true, "created": created}));
    } else if created.is_empty() {
        print::text(&format!(
            "{} is already initialised: nothing to create",
            ws.agentx_dir().display()
        ));
    } else {
        for path in &created {
            print::text(&format!("created {path}"));
        }
    }
    Ok(0)
}

pub(crate) fn print_or(
    json: bool,
    v: &serde_json::Value,
    text: impl FnOnce() -> String,
) -> Outcome {
    if json {
        print::json(v);
    } else {
        print::text(&text());
    }
    Ok(0)
}

/// Prints a mutation; `MAX_ROUNDS_EXCEEDED` prints the escalated thread and fails with 4.
/// Warnings (what failed after the ledger write) go to stderr; the command succeeded.
pub(crate) fn mutation(json: bool, m: &Mutation) -> Outcome {
    print::warnings(&m.warnings);
    if json {
        print::json(&m.to_json());
    } else {
        if let Some(record) = &m.clarification {
            print::text(&text_thread(m.issue, record, print::STYLE));
        }
        if m.idempotent {
            print::text("(idempotent replay: the request already exists; nothing written)");
        }
        if !m.monitor.report.is_quiet() || !m.monitor.report.errors.is_empty() {
            print::text(&format!(
                "\n{}",
                text_report(&m.monitor.report, print::STYLE)
            ));
        }
        if let Some(e) = &m.error {
            print::error_line(e);
        }
    }
    Ok(m.error.as_ref().map_or(0, exit::code))
}

fn hook(
    ws: &Workspace,
    now: i64,
    json: bool,
    event: HookEvent,
    agent: &str,
    issue: Option<&str>,
) -> Outcome {
    let issue = parse_issue_opt(issue)?;
    let outcome = commands::hook(ws, now, event, agent, issue)?;
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

fn ready(ws: &Workspace, now: i64, json: bool, include_escalated: bool) -> Outcome {
    let outcome = commands::ready(ws, now, include_escalated)?;
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

fn state(ws: &Workspace, now: i64, json: bool, a: args::StateArgs) -> Outcome {
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
