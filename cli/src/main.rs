//! `agentx`: the AgentX Clarify command line. Parses arguments, reads the clock once, calls
//! the shared commands, prints, and exits with the code of docs/protocol.md §11.1.

mod args;
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
use agentx_clarify_core::listing::{ready_line, ListFilter};
use agentx_clarify_core::render::{text_list, text_report, text_stats, text_thread};
use agentx_clarify_core::{Action, ClarifyError, NewRequest, Severity};
use agentx_clarify_store::clock::{parse_now, system_now_ms};
use agentx_clarify_store::DiskStore;
use agentx_clarify_workspace::AnyStore as Workspace;
use args::{Clarify, Cli, ColorMode, Command, Hook};
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
            agentx_clarify_workspace::open(&root)
                .and_then(|ws| on_state(&ws, now, cli.now.is_some(), json, command))
        }
    };
    result.unwrap_or_else(|e| print::fail(json, &e))
}

/// The commands that read or change the state, on the workspace's store.
fn on_state(ws: &Workspace, now: i64, fixed: bool, json: bool, command: Command) -> Outcome {
    match command {
        Command::Clarify(c) => clarify(ws, now, fixed, json, c),
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
    match agentx_clarify_workspace::open(root) {
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

fn clarify(ws: &Workspace, now: i64, fixed: bool, json: bool, cmd: Clarify) -> Outcome {
    // Routing reads the clock at each step (a run takes time), unless --now fixes it.
    let clock = move || if fixed { now } else { system_now_ms() };
    match cmd {
        Clarify::Ask(a) => {
            let a = *a;
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
                severity: a
                    .severity
                    .map(|s| Severity::parse(&s).map_err(ClarifyError::input))
                    .transpose()?,
                context: a.context,
                blocked_operations: a.blocked_operations,
                session_id: a.session_id,
                gap_id: a.gap_id,
                answer: a.kinds.spec()?,
                ask_again: a.kinds.ask_again,
                extra: a
                    .asked_back_from
                    .map(|id| {
                        (
                            agentx_clarify_core::routing::ASKED_BACK.to_owned(),
                            id.into(),
                        )
                    })
                    .into_iter()
                    .collect(),
            };
            if a.route {
                return route::ask(ws, &clock, fixed.then_some(now), json, &req, a.wait);
            }
            mutation(json, &commands::ask(ws, now, &req)?)
        }
        Clarify::Route(a) => route::route(ws, &clock, json, a),
        Clarify::Reopen(a) if a.route => route::reopen(ws, &clock, json, a),
        Clarify::Reopen(a) => mutation(
            json,
            &commands::reopen(ws, now, &a.id, a.from.as_deref(), a.message.as_deref())?,
        ),
        Clarify::ResumePrompt { id } => signals::resume(ws, json, &id),
        Clarify::Answer {
            id,
            from,
            body,
            value,
        } => {
            let action = kinds::answer_action(ws, &id, from, body, &value)?;
            mutation(json, &commands::act(ws, now, &id, &action)?)
        }
        Clarify::FollowUp { id, from, question } => mutation(
            json,
            &commands::act(ws, now, &id, &Action::FollowUp { from, question })?,
        ),
        Clarify::Resolve(r) => {
            let c = r.close;
            let action = kinds::resolve_action(ws, &c.id, c.from, c.message, &r.value)?;
            mutation(json, &commands::act(ws, now, &c.id, &action)?)
        }
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
            let listed = commands::list(ws, &filter)?;
            print::report_errors(&listed.errors);
            if json {
                print::json(&listed.to_json());
            } else {
                let refs: Vec<_> = listed.records.iter().map(|(i, r)| (*i, r)).collect();
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
        Clarify::Monitor {
            dry_run,
            route,
            no_route,
            jobs,
        } => {
            let wanted = (route || no_route).then_some(route);
            route::monitor(ws, &clock, json, dry_run, wanted, jobs)
        }
        Clarify::Check(a) => layer4::run_check(ws, now, json, a),
        Clarify::Audit(a) => layer4::run_audit(ws, json, &a),
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
            print_or(json, &v, || previews::scope_text(&question, &preview))
        }
        Clarify::Wakeup => {
            let monitor = commands::query::next_wakeup(ws, now)?;
            // A workspace with notification sinks: its outbox's next retry, ladder step
            // or reminder counts too (run `agentx notify send` at the wake-up as well).
            let notify = if DiskStore::new(ws.root()).notify_sinks()?.is_empty() {
                None
            } else {
                agentx_clarify_notify::home::Home::open(ws.root())?
                    .read_outbox()?
                    .next_due()
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
            print_or(json, &v, || previews::wakeup_text(wakeup, now))
        }
        Clarify::Graph { issue } => {
            let graphs = commands::query::wait_for_graphs(ws, parse_issue_opt(issue.as_deref())?)?;
            let v = json!({"ok": true, "graphs": graphs});
            print_or(json, &v, || previews::graph_text(&graphs))
        }
        Clarify::Stats { since } => {
            // Spelled as every surface spells the field (the vectors deep-equal the results).
            let since = since.as_deref().map(parse_now).transpose().map_err(|why| {
                ClarifyError::InvalidInput {
                    message: format!("`since`: {why}"),
                }
            })?;
            let outcome = commands::stats(ws, since)?;
            print::report_errors(&outcome.errors);
            if json {
                print::json(&outcome.to_json());
            } else {
                print::text(&text_stats(&outcome.stats));
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
/// Warnings (what failed after the ledger write) go to stderr; the command succeeded.
fn mutation(json: bool, m: &Mutation) -> Outcome {
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
