//! `agentx mcp`: the checks and messages around the MCP server (docs/protocol.md, "MCP").
//! It refuses to start where no workspace is (every inbox would be empty), says on stderr
//! which root and agent it serves, and warns when no workflow step runs that agent (a typo in
//! `--agent` or `AGENTX_AGENT`). Its help leaves out the global options it ignores.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentx_clarify_command::Files as _;
use agentx_clarify_workspace::{Workspace, WorkspaceFiles};
use clap::Args;

use crate::exit::Outcome;

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The agent every tool call acts as (default: the AGENTX_AGENT environment variable,
    /// so a project's shared MCP configuration can leave the name to each person)
    #[arg(long, env = "AGENTX_AGENT")]
    pub agent: String,
    /// The default issue of clarify_ask and clarify_show
    #[arg(long, value_name = "N")]
    pub issue: Option<String>,
    /// The person who runs this client (a person of .agentx/people.toml): elicitation asks
    /// them only about records they may decide, and records the decision as theirs
    #[arg(long, value_name = "PERSON", env = "AGENTX_OPERATOR")]
    pub operator: Option<String>,
}

/// `agentx mcp`: the server on stdio until its client goes away, on the workspace opened
/// once (its settings read again when they change) with the hub's runner — the same handle
/// and the same hub as `agentx serve`'s `/mcp`.
pub fn run(given: Option<&Path>, a: &McpArgs) -> Outcome {
    let root = match root(given) {
        Ok(root) => root,
        Err(why) => return Ok(refuse(&why)),
    };
    announce(&root, &a.agent);
    let files = WorkspaceFiles::read(&root, true)?;
    crate::typos::warn(&files);
    let ws = agentx_clarify_a2a::hub_workspace(files, true)?;
    warn_without_step(&ws, &a.agent);
    if let Some(o) = &a.operator {
        let people = ws.store()?.load_config()?.people;
        let refusal = people.and_then(|p| agentx_clarify_core::people::token_refusal(&p.people, o));
        if let Some(why) = refusal {
            return Ok(refuse(&format!("--operator: {why}")));
        }
    }
    let operator = a.operator.as_deref();
    agentx_clarify_mcp::serve(Arc::new(ws), &a.agent, a.issue.as_deref(), operator)
}

/// The workspace root `agentx mcp` serves: `--root` as given, else the nearest ancestor of
/// the working directory holding `.agentx/`; with none, the directories searched.
pub fn root(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(root) = given {
        return Ok(root.to_path_buf());
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    if let Some(found) = cwd.ancestors().find(|d| d.join(".agentx").is_dir()) {
        return Ok(found.to_path_buf());
    }
    let searched: Vec<String> = cwd.ancestors().map(|d| d.display().to_string()).collect();
    Err(format!(
        "no .agentx/ workspace found: searched {}; run `agentx init` in the project, or pass --root DIR",
        searched.join(", ")
    ))
}

/// Refuses to start (exit 2, as a usage error) with `why` on stderr.
pub fn refuse(why: &str) -> i32 {
    let _ = writeln!(anstream::stderr(), "error: agentx mcp: {why}");
    2
}

/// Logs where the server runs.
pub fn announce(root: &Path, agent: &str) {
    let _ = writeln!(
        anstream::stderr(),
        "agentx mcp: serving agent '{agent}' on the workspace {}",
        root.display()
    );
}

/// Warns when `agent` has no step in any workflow.
fn warn_without_step(ws: &Workspace, agent: &str) {
    let mut err = anstream::stderr();
    let Ok(store) = ws.store() else {
        return;
    };
    if let Some(warning) = agentx_clarify_command::status::no_step_warning(&*store, agent) {
        let _ = writeln!(err, "warning: {warning}");
    }
}

/// The help of `agentx mcp` without the global options it ignores (`--now`, `--json`,
/// `--color`): printed when a help request names the `mcp` command. `cli` is the whole
/// command line's grammar (`Cli::command()`, handed down by `main`).
pub fn help(mut cli: clap::Command) -> Option<String> {
    cli.build();
    let mcp = cli.find_subcommand_mut("mcp")?.clone();
    let mut mcp = mcp
        .mut_arg("now", |a| a.hide(true))
        .mut_arg("json", |a| a.hide(true))
        .mut_arg("color", |a| a.hide(true));
    Some(mcp.render_help().ansi().to_string())
}
