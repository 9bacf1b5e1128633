//! `agentx`: the AgentX Clarify command line. Parses arguments, reads the clock once, calls
//! the shared commands, prints, and exits with the code of SPEC §11.1.

mod args;
mod demo;
mod exit;
mod print;
mod store;
mod views;

use std::io::Write;
use std::process::ExitCode;

use agentx_clarify_command::{self as commands, HookEvent, Mutation, Scope, Store};
use agentx_clarify_core::render::{text_list, text_report, text_stats, text_thread};
use agentx_clarify_core::views::{ready_line, ListFilter};
use agentx_clarify_core::{Action, ClarifyError, NewRequest};
use agentx_clarify_store::clock::{parse_now, system_now_ms};
use agentx_clarify_store::DiskStore;
use agentx_clarify_workspace::AnyStore as Workspace;
use args::{Clarify, Cli, ColorMode, Command, Hook};
use clap::{CommandFactory, Parser};
use serde_json::json;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        #[cfg(feature = "mcp")]
        Command::Mcp { agent, issue } => {
            agentx_clarify_workspace::location(&root).and_then(|location| {
                let changes = match location {
                    agentx_clarify_workspace::Location::Files => agentx_clarify_mcp::Changes::Files,
                    agentx_clarify_workspace::Location::Postgres(_) => {
                        agentx_clarify_mcp::Changes::Store
                    }
                };
                agentx_clarify_mcp::serve(root, &agent, issue.as_deref(), mcp_call, changes)
            })
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "agentx", &mut std::io::stdout());
            Ok(0)
        }
        command => agentx_clarify_workspace::open(&root)
            .and_then(|ws| on_state(&ws, now, json, command)),
    };
    result.unwrap_or_else(|e| print::fail(json, &e))
}

/// The commands that read or change the state, on the workspace's store.
fn on_state(ws: &Workspace, now: i64, json: bool, command: Command) -> Outcome {
    match command {
        Command::Clarify(c) => clarify(ws, now, json, c),
        Command::Hook(Hook::Start { agent, issue }) => {
            hook(ws, now, json, HookEvent::Start, &agent, issue.as_deref())
        }
        Command::Hook(Hook::Finish { agent, issue }) => {
            hook(ws, now, json, HookEvent::Finish, &agent, issue.as_deref())
        }
        Command::Ready(a) => ready(ws, now, json, a.include_escalated),
        Command::State(a) => state(ws, now, json, a),
        other => Err(ClarifyError::Internal {
            message: format!("{other:?} does not run on the store"),
        }),
    }
}

/// The MCP server's store calls: each opens the workspace's store (a pooled connection for
/// PostgreSQL) and runs one operation of the command layer.
#[cfg(feature = "mcp")]
fn mcp_call(root: &std::path::Path, op: &str, input: &serde_json::Value) -> serde_json::Value {
    match agentx_clarify_workspace::open(root) {
        Ok(ws) => commands::call(&ws, op, input, system_now_ms()),
        Err(e) => json!({"ok": false, "error": agentx_clarify_core::api::error_value(&e)}),
    }
}

type Outcome = Result<i32, ClarifyError>;

fn parse_issue_opt(text: Option<&str>) -> Result<Option<u32>, ClarifyError> {
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

fn clarify(ws: &Workspace, now: i64, json: bool, cmd: Clarify) -> Outcome {
    match cmd {
        Clarify::Ask(a) => {
            let issue = agentx_clarify_core::names::parse_issue(&a.issue)?;
            let req = NewRequest {
                issue_number: u64::from(issue),
                from: a.from,
                to: a.to,
                topic: a.topic,
                question: a.question,
                blocking: !a.non_blocking,
                workflow: a.workflow,
                step: a.step,
                field: a.field,
                suggestions: a.suggestions,
                idempotency_key: a.idempotency_key,
            };
            mutation(json, &commands::ask(ws, now, &req)?)
        }
        Clarify::Answer { id, from, body } => mutation(
            json,
            &commands::act(ws, now, &id, &Action::Answer { from, body })?,
        ),
        Clarify::FollowUp { id, from, question } => mutation(
            json,
            &commands::act(ws, now, &id, &Action::FollowUp { from, question })?,
        ),
        Clarify::Resolve(c) => mutation(
            json,
            &commands::act(
                ws,
                now,
                &c.id,
                &Action::Resolve {
                    from: c.from,
                    message: c.message,
                },
            )?,
        ),
        Clarify::Escalate(c) => mutation(
            json,
            &commands::act(
                ws,
                now,
                &c.id,
                &Action::Escalate {
                    from: c.from,
                    message: c.message,
                },
            )?,
        ),
        Clarify::Abandon(c) => mutation(
            json,
            &commands::act(
                ws,
                now,
                &c.id,
                &Action::Abandon {
                    from: c.from,
                    message: c.message,
                },
            )?,
        ),
        Clarify::List { issue, status, all } => {
            let filter = ListFilter {
                issue: parse_issue_opt(issue.as_deref())?,
                statuses: status.into_iter().map(args::StatusArg::status).collect(),
                all,
            };
            let records = commands::list(ws, &filter)?;
            if json {
                print::json(&commands::query::list_json(&records));
            } else {
                let refs: Vec<_> = records.iter().map(|(i, r)| (*i, r)).collect();
                print::text(&text_list(&refs, print::STYLE));
            }
            Ok(0)
        }
        Clarify::Show { id, issue } => {
            if let Some(id) = id {
                let (issue, record) = commands::show_id(ws, &id)?;
                if json {
                    print::json(&json!({"ok": true, "clarification": record.to_output(issue)}));
                } else {
                    print::text(&text_thread(issue, &record, print::STYLE));
                }
            } else {
                let issue =
                    agentx_clarify_core::names::parse_issue(issue.as_deref().unwrap_or(""))?;
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
            }
            Ok(0)
        }
        Clarify::Monitor { dry_run } => {
            let config = ws.load_config()?;
            let run = commands::run_monitor(ws, &config, now, dry_run, Scope::Monitor)?;
            if json {
                print::json(&run.to_json());
            } else {
                if dry_run {
                    print::text("(dry run: nothing written)");
                }
                print::text(&text_report(&run.report, print::STYLE));
            }
            Ok(0)
        }
        Clarify::Verify => {
            let outcome = commands::verify(ws)?;
            if !json {
                // Records written by another tool: `agentx migrate` upgrades them.
                for w in &outcome.warnings {
                    print::warn(&format!(
                        "{}  {}  {}",
                        w.file,
                        w.id.as_deref().unwrap_or("-"),
                        w.message
                    ));
                }
            }
            if json {
                print::json(&outcome.to_json());
            } else if outcome.problems.is_empty() {
                print::text(&format!(
                    "verified {} ledger file(s): no problems{}",
                    outcome.files,
                    if outcome.warnings.is_empty() {
                        String::new()
                    } else {
                        format!(", {} warning(s)", outcome.warnings.len())
                    }
                ));
            } else {
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
        Clarify::Scope(a) => {
            let question = agentx_clarify_core::scope::Question {
                from: a.from.unwrap_or_default(),
                to: a.to.unwrap_or_default(),
                blocking: !a.non_blocking,
                workflow: a.workflow,
                step: a.step,
            };
            let issue = parse_issue_opt(a.issue.as_deref())?;
            let preview = commands::query::scope_preview(ws, &question, issue)?;
            let v = json!({"ok": true, "preview": preview});
            print_or(json, &v, || views::scope_text(&question, &preview))
        }
        Clarify::Wakeup => {
            let wakeup = commands::query::next_wakeup(ws, now)?;
            let v = json!({"ok": true, "wakeup": wakeup});
            print_or(json, &v, || views::wakeup_text(wakeup, now))
        }
        Clarify::Graph { issue } => {
            let graphs = commands::query::wait_for_graphs(ws, parse_issue_opt(issue.as_deref())?)?;
            let v = json!({"ok": true, "graphs": graphs});
            print_or(json, &v, || views::graph_text(&graphs))
        }
        Clarify::Stats { since } => {
            let since = since.as_deref().map(parse_now).transpose().map_err(|why| {
                ClarifyError::InvalidInput {
                    message: format!("--since: {why}"),
                }
            })?;
            let stats = commands::stats(ws, since)?;
            if json {
                print::json(&json!({"ok": true, "stats": stats}));
            } else {
                print::text(&text_stats(&stats));
            }
            Ok(0)
        }
    }
}

fn print_or(json: bool, v: &serde_json::Value, text: impl FnOnce() -> String) -> Outcome {
    if json {
        print::json(v);
    } else {
        print::text(&text());
    }
    Ok(0)
}

/// Prints a mutation; `MAX_ROUNDS_EXCEEDED` prints the escalated thread and fails with 4.
fn mutation(json: bool, m: &Mutation) -> Outcome {
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
        print::json(&outcome.to_json());
    } else {
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
