//! `agentx`: the AgentX Clarify command line. Parses arguments, reads the clock and the
//! workspace root once, dispatches to the command families of `commands/`, and exits with the
//! code of docs/protocol.md §11.1.
//!
//! `unsafe` is denied (the workspace's lints) everywhere but `alloc.rs`: the one call into
//! the allocator.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod alloc;
mod cli;
mod commands;
mod exit;
mod previews;
mod print;
mod typos;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::clock::{parse_now, system_now_ms};
use agentx_clarify_store::DiskStore;
use agentx_clarify_workspace::{Workspace, WorkspaceFiles};
use clap::{CommandFactory, Parser};
use cli::{Cli, ColorMode, Command};
#[cfg(feature = "mcp")]
use commands::mcp;
#[cfg(feature = "serve")]
use commands::serve;
use commands::{
    clarify, completions, decisions, delegate, demo, gate, github, keys, migrate, notify, people,
    signals, status, store,
};
use exit::Outcome;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            #[cfg(feature = "mcp")]
            if e.kind() == clap::error::ErrorKind::DisplayHelp
                && std::env::args().skip(1).any(|a| a == "mcp")
            {
                if let Some(help) = mcp::help(Cli::command()) {
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
    let json = cli.json;
    let root = match root(&cli) {
        Ok(root) => root,
        Err(e) => return print::fail(json, &e),
    };
    let result = match cli.command {
        // The workspace's own files, wherever its state is kept.
        Command::Init => store::init_workspace(&DiskStore::new(root), json),
        Command::Demo => demo::run(
            &DiskStore::new(root),
            cli.root.is_some(),
            cli.now.is_some().then_some(now),
            json,
        ),
        Command::Store(cmd) => store::run(&root, json, cmd),
        // The sinks are settings: `notify test` touches no state.
        Command::Notify(cmd) => notify::run(&root, now, json, cmd),
        Command::Github(cmd) => github::run(&root, now, json, cmd),
        #[cfg(feature = "mcp")]
        Command::Mcp(a) => mcp::run(cli.root.as_deref(), &a),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(root, args),
        #[cfg(feature = "serve")]
        Command::Tokens(cmd) => serve::tokens(&root, now, json, cmd),
        Command::Completions(a) => completions::run(&a, Cli::command()),
        command => open(&root).and_then(|ws| on_state(&ws, now, cli.now.is_some(), json, command)),
    };
    result.unwrap_or_else(|e| print::fail(json, &e))
}

/// The workspace root: `--root` (which must exist, but for the commands that create theirs:
/// docs/protocol.md §20), else the nearest ancestor of the working directory holding `.agentx/`.
fn root(cli: &Cli) -> Result<PathBuf, ClarifyError> {
    let Some(root) = &cli.root else {
        let cwd = std::env::current_dir().map_err(|e| ClarifyError::Io {
            message: format!("cannot read the current directory: {e}"),
        })?;
        return Ok(DiskStore::discover(&cwd));
    };
    let creates_root = matches!(
        cli.command,
        Command::Init | Command::Demo | Command::Completions(_)
    );
    if !creates_root {
        DiskStore::new(root).require_root()?;
    }
    Ok(root.clone())
}

/// The workspace at `root`, opened once for the command: its settings read (their typos
/// pointed out on stderr before anything runs), its store and the hub's runner.
fn open(root: &std::path::Path) -> Result<Workspace, ClarifyError> {
    let files = WorkspaceFiles::read(root, false)?;
    typos::warn(&files);
    agentx_clarify_a2a::hub_workspace(files, false)
}

/// The commands that read or change the state, on the workspace's store.
fn on_state(ws: &Workspace, now: i64, fixed: bool, json: bool, command: Command) -> Outcome {
    let runner = ws.runner();
    let ws = &*ws.store()?;
    match command {
        Command::Clarify(c) => clarify::run(ws, runner, now, fixed, json, c),
        Command::Signals(c) => signals::run(ws, now, json, c),
        Command::Delegate(c) => delegate::run(ws, now, json, c),
        Command::Hook(h) => status::hook(ws, now, json, h),
        Command::Ready(a) => status::ready(ws, now, json, &a),
        Command::State(a) => status::state(ws, now, json, a),
        Command::Migrate(a) => migrate::run(ws, json, a.dry_run),
        Command::Gate(a) => gate::run(ws, json, &a),
        Command::Decisions(c) => decisions::run(ws, json, c),
        Command::Keys(c) => keys::run(ws, json, c),
        Command::People(c) => people::run(ws, now, json, c),
        other => Err(ClarifyError::Internal {
            message: format!("{other:?} does not run on the store"),
        }),
    }
}
