//! `clarify route`, `ask --route [--wait]`, `monitor --route` and `resume-prompt`: the
//! command layer's routing with the `runner` crate's processes, and how each is printed.

use agentx_clarify_command::Files;
use std::io::Read;
use std::path::{Path, PathBuf};

use agentx_clarify_command::route::{parse_run, route_outcome, route_prompt, RoutedAll};
use agentx_clarify_command::{self as commands, Clock, Mutation, Routed, Runner, Scope};
use agentx_clarify_core::render::{text_report, text_thread};
use agentx_clarify_core::routing::Outcome as RouteOutcome;
use agentx_clarify_core::{ClarifyError, NewRequest, Status};
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;
use serde_json::{json, Value};

use super::act::ReopenArgs;
use crate::exit::{self, Outcome};
use crate::print;

#[derive(Args, Debug)]
pub struct RouteArgs {
    /// The clarification to route
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Every pending or stale record whose target has a runner and no routing in progress
    #[arg(long)]
    pub all: bool,
    /// With --all: how many agents run at once
    #[arg(long, value_name = "N", default_value_t = 1, requires = "all", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Print the prompt (and, with --json, the runner) instead of running anything
    #[arg(long, conflicts_with_all = ["all", "interpret"])]
    pub print_prompt: bool,
    /// With --print-prompt: take the persona from this file instead of the runner's
    #[arg(long, value_name = "FILE", requires = "print_prompt")]
    pub persona: Option<PathBuf>,
    /// Show what routing would do with a run's output given as JSON ({"exit", "stdout",
    /// "stderr", "timedOut", "signal", …}, "-" for stdin); nothing runs, nothing is written
    #[arg(long, value_name = "FILE", conflicts_with = "all")]
    pub interpret: Option<PathBuf>,
}

/// The workspace handle's runner (`agentx_clarify_a2a::open_workspace`: A2A agents over
/// HTTP, every other preset as a process).
pub type Run<'r> = &'r (dyn Runner + Sync);

fn read_file(path: &Path) -> Result<String, ClarifyError> {
    let mut text = String::new();
    let read = if path == Path::new("-") {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|e| ClarifyError::input(format!("cannot read {}: {e}", path.display())))?;
    Ok(text)
}

/// `agentx clarify route`.
pub fn route(
    ws: &Workspace,
    runner: Run<'_>,
    clock: Clock<'_>,
    json: bool,
    a: RouteArgs,
) -> Outcome {
    if a.all {
        let all = commands::route_all(ws, runner, clock, a.jobs as usize)?;
        return Ok(print_all(json, &all));
    }
    let id = a.id.unwrap_or_default();
    if a.print_prompt {
        let persona = a.persona.as_deref().map(read_file).transpose()?;
        let view = route_prompt(ws, &id, persona.as_deref())?;
        if json {
            print::json(&view.to_json());
        } else {
            print::text(view.prompt.trim_end());
        }
        return Ok(0);
    }
    if let Some(file) = &a.interpret {
        let value: Value = serde_json::from_str(&read_file(file)?)
            .map_err(|e| ClarifyError::input(format!("{} is not JSON: {e}", file.display())))?;
        let run = parse_run(&value)?;
        let v = route_outcome(ws, &id, &run, clock())?;
        return Ok(print_outcome_view(json, &v));
    }
    let routed = commands::route(ws, runner, &id, clock, true)?;
    Ok(print_routed(json, &routed))
}

/// `agentx clarify reopen <id> --route`: the target needs a runner before anything is
/// written; then the record is reopened and routed here, and the routing's outcome printed.
pub fn reopen(
    ws: &Workspace,
    runner: Run<'_>,
    clock: Clock<'_>,
    json: bool,
    a: ReopenArgs,
) -> Outcome {
    let config = ws.load_runner_config()?;
    let (_, record) = commands::show_id(ws, &a.id)?;
    if config.agents.for_agent(&record.to).is_none() {
        return Err(ClarifyError::NoRunner { agent: record.to });
    }
    let reopened = commands::reopen(ws, clock(), &a.id, a.from.as_deref(), a.message.as_deref())?;
    print::warnings(&reopened.warnings);
    let routed = commands::route(ws, runner, &a.id, clock, true)?;
    Ok(print_routed(json, &routed))
}

/// `agentx clarify ask … --route [--wait]`: the target needs a runner before anything is
/// written. Without `--wait` the routing runs in a detached `agentx clarify route` and the
/// ask returns at once; with it, here, and the routing's outcome is printed.
pub fn ask(
    ws: &Workspace,
    runner: Run<'_>,
    clock: Clock<'_>,
    fixed_now: Option<i64>,
    json: bool,
    req: &NewRequest,
    wait: bool,
) -> Outcome {
    let config = ws.load_runner_config()?;
    if config.agents.for_agent(&req.to).is_none() && req.validate(&config).is_ok() {
        return Err(ClarifyError::NoRunner {
            agent: req.to.clone(),
        });
    }
    let asked = commands::ask(ws, clock(), req)?;
    let routable = asked
        .clarification
        .as_ref()
        .is_some_and(|r| matches!(r.current_status(), Status::Pending | Status::Stale));
    if !routable {
        // An idempotent replay of a record already answered or closed: nothing to route.
        return print::mutation(json, &asked);
    }
    if wait {
        let routed = commands::route(ws, runner, &asked.id, clock, true)?;
        return Ok(print_routed(json, &routed));
    }
    let background = spawn_route(ws.files.root(), fixed_now, &asked.id);
    print_asked(json, &asked, &background)
}

/// Starts `agentx clarify route <id>` detached (its own process group, no terminal output):
/// it outlives this command; the ledger and the run log record what it did.
fn spawn_route(root: &Path, fixed_now: Option<i64>, id: &str) -> Result<u32, String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--root").arg(root);
    if let Some(now) = fixed_now {
        cmd.arg("--now").arg(now.to_string());
    }
    cmd.args(["clarify", "route", id])
        .env_remove("AGENTX_NOW")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    cmd.spawn().map(|c| c.id()).map_err(|e| e.to_string())
}

fn print_asked(json: bool, asked: &Mutation, background: &Result<u32, String>) -> Outcome {
    let code = asked.error.as_ref().map_or(0, exit::code);
    if json {
        let mut v = asked.to_json();
        if let Value::Object(m) = &mut v {
            m.insert(
                "routing".into(),
                match background {
                    Ok(pid) => json!({"background": true, "pid": pid}),
                    Err(e) => json!({"background": false, "error": e}),
                },
            );
        }
        print::json(&v);
    } else {
        print::mutation(false, asked)?;
        match background {
            Ok(pid) => print::text(&format!(
                "\nrouting {} to {} in the background (pid {pid}); `agentx clarify show {}` shows the outcome",
                asked.id,
                asked.clarification.as_ref().map_or("its target", |r| r.to.as_str()),
                asked.id
            )),
            Err(e) => print::warn(&format!(
                "could not start the routing of {}: {e}; run `agentx clarify route {}`",
                asked.id, asked.id
            )),
        }
    }
    Ok(if background.is_err() { 1 } else { code })
}

/// `agentx clarify monitor [--route]`.
pub fn monitor(
    ws: &Workspace,
    runner: Run<'_>,
    clock: Clock<'_>,
    json: bool,
    dry_run: bool,
    route: Option<bool>,
    jobs: u32,
) -> Outcome {
    let config = ws.load_runner_config()?;
    let wanted = route.unwrap_or(config.route_on_retry) && !dry_run;
    let run = commands::run_monitor(ws, &config, clock(), dry_run, Scope::Monitor)?;
    let routed = if wanted {
        Some(commands::route_ids(
            ws,
            runner,
            clock,
            jobs as usize,
            &run.report.retried,
        )?)
    } else {
        None
    };
    if json {
        let mut v = run.to_json();
        if let (Value::Object(m), Some(all)) = (&mut v, &routed) {
            m.insert("routed".into(), all.to_json());
        }
        print::json(&v);
    } else {
        if dry_run {
            print::text("(dry run: nothing written)");
        }
        print::text(&text_report(&run.report, print::STYLE));
        if let Some(all) = &routed {
            print::text(&all_text(all));
        }
    }
    Ok(0)
}

fn interpretation_line(v: Option<&Value>) -> String {
    let kind = v.and_then(|v| v.get("kind")).and_then(Value::as_str);
    let text = |k: &str| {
        v.and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match kind {
        Some("agent-error") => format!("agent error: {}", text("cause")),
        Some("stopped") => format!("stopped: {}", text("blockerType")),
        Some("asked-back") => String::from("asked back"),
        Some("answer") => String::from("answered"),
        _ => String::new(),
    }
}

/// One routing, printed: the outcome line, the thread, the question asked back, the log.
fn print_routed(json: bool, r: &Routed) -> i32 {
    let code = r.error.as_ref().map_or(0, exit::code);
    if json {
        print::json(&r.to_json());
        return code;
    }
    let agent = r.run.get("agent").and_then(Value::as_str).unwrap_or("?");
    let ms = r.run.get("durationMs").and_then(Value::as_i64).unwrap_or(0);
    let how = interpretation_line(r.run.get("interpretation"));
    #[allow(clippy::cast_precision_loss)]
    let secs = ms as f64 / 1000.0;
    print::text(&format!(
        "{} → {agent}: {} in {secs:.1} s ({how})",
        r.id,
        r.outcome.as_str()
    ));
    if let Some(record) = &r.clarification {
        print::text(&text_thread(r.issue, record, print::STYLE));
    }
    if let Some(asked) = &r.asked_back {
        print::text(&format!("\nasked back as {}:", asked.id));
        print::text(&text_thread(r.issue, asked, print::STYLE));
    }
    if r.outcome == RouteOutcome::Superseded {
        print::text("(superseded: the record changed while the agent ran; nothing written)");
    }
    if let Some(log) = r.run.get("log").and_then(Value::as_str) {
        print::text(&format!("run log: {log}"));
    }
    if !r.monitor.report.is_quiet() || !r.monitor.report.errors.is_empty() {
        print::text(&format!(
            "\n{}",
            text_report(&r.monitor.report, print::STYLE)
        ));
    }
    if let Some(e) = &r.error {
        print::error_line(e);
    }
    code
}

fn all_text(all: &RoutedAll) -> String {
    let mut lines = Vec::new();
    for r in &all.routed {
        let mut line = format!("{}  {}", r.id, r.outcome.as_str());
        if let Some(a) = &r.asked_back {
            line.push_str(&format!(" ({})", a.id));
        }
        if let Some(ClarifyError::AgentError { cause, .. }) = &r.error {
            line.push_str(&format!(": {cause}"));
        }
        lines.push(line);
    }
    for (id, why) in &all.skipped {
        lines.push(format!("{id}  skipped: {why}"));
    }
    for (id, e) in &all.failed {
        lines.push(format!("{id}  failed: {e}"));
    }
    if lines.is_empty() {
        lines.push(String::from("nothing to route"));
    }
    lines.join("\n")
}

fn print_all(json: bool, all: &RoutedAll) -> i32 {
    let error = all.error();
    if json {
        print::json(&all.to_json());
    } else {
        print::text(&all_text(all));
        if !all.monitor.report.is_quiet() || !all.monitor.report.errors.is_empty() {
            print::text(&format!(
                "\n{}",
                text_report(&all.monitor.report, print::STYLE)
            ));
        }
        if let Some(e) = &error {
            print::error_line(e);
        }
    }
    error.as_ref().map_or(0, exit::code)
}

fn print_outcome_view(json: bool, v: &Value) -> i32 {
    let code = v
        .pointer("/error/code")
        .and_then(Value::as_str)
        .map_or(0, |c| {
            exit::of_class(agentx_clarify_core::error::class_of(c))
        });
    if json {
        print::json(v);
        return code;
    }
    let outcome = v.get("outcome").and_then(Value::as_str).unwrap_or("?");
    print::text(&format!(
        "would be {outcome} ({}); nothing written",
        interpretation_line(v.get("interpretation"))
    ));
    if let Some(answer) = v.pointer("/interpretation/answer").and_then(Value::as_str) {
        print::text(&format!("answer:\n{answer}"));
    }
    code
}
