//! `agentx mcp`: the checks and messages around the MCP server (docs/protocol.md, "MCP").
//! It refuses to start where no workspace is (every inbox would be empty), says on stderr
//! which root and agent it serves, and warns when no workflow step runs that agent (a typo in
//! `--agent` or `AGENTX_AGENT`). Its help leaves out the global options it ignores.

use agentx_clarify_command::Files;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::args::Cli;

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

/// Logs where the server runs, and warns when `agent` has no step in any workflow.
pub fn announce(root: &Path, agent: &str) {
    let mut err = anstream::stderr();
    let _ = writeln!(
        err,
        "agentx mcp: serving agent '{agent}' on the workspace {}",
        root.display()
    );
    crate::typos::warn(root);
    let Ok(ws) = agentx_clarify_store_any::open(root) else {
        return;
    };
    let Ok(workflows) = ws.load_workflows() else {
        return;
    };
    let names: Vec<String> = workflows.names().map(str::to_owned).collect();
    let mut agents: Vec<String> = Vec::new();
    for name in &names {
        if let Some(Ok(w)) = workflows.get(name) {
            agents.extend(w.steps.iter().map(|s| s.agent.clone()));
        }
    }
    if !agents.iter().any(|a| a == agent) {
        agents.sort();
        agents.dedup();
        let _ = writeln!(
            err,
            "warning: agent '{agent}' has no step in any workflow ({}), so it cannot ask anyone; agents with a step: {}",
            names.join(", "),
            agents.join(", ")
        );
    }
}

/// The help of `agentx mcp` without the global options it ignores (`--now`, `--json`,
/// `--color`): printed when a help request names the `mcp` command.
pub fn help() -> Option<String> {
    let mut cli = Cli::command();
    cli.build();
    let mcp = cli.find_subcommand_mut("mcp")?.clone();
    let mut mcp = mcp
        .mut_arg("now", |a| a.hide(true))
        .mut_arg("json", |a| a.hide(true))
        .mut_arg("color", |a| a.hide(true));
    Some(mcp.render_help().ansi().to_string())
}
