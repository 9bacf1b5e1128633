//! AgentX Clarify and the Agent2Agent protocol (A2A 1.0, docs/protocol.md §27).
//!
//! - [`HubRunner`]: the runner the CLI and the server hand to routing. Preset `a2a` reaches an
//!   A2A agent over HTTP ([`route`]); every other preset starts a process
//!   ([`agentx_clarify_runner::ProcessRunner`]).
//! - [`protocol`]: the official A2A 1.0 types (`a2a-lf`), which the server's A2A face
//!   (`serve/src/a2a/`) speaks too.
//!
//! An HTTP client: a shell crate, never the core, the command layer, the Node addon or wasm.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod client;
pub mod route;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentx_clarify_command::{RunFor, Runner};
use agentx_clarify_core::routing::{Invocation, Preset, RunResult};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_runner::ProcessRunner;
use agentx_clarify_workspace::{Workspace, WorkspaceFiles};

pub use a2a as protocol;

/// Runs routed agents: A2A agents over HTTP, the rest as processes in the workspace at
/// `root`.
#[derive(Clone, Debug)]
pub struct HubRunner {
    processes: ProcessRunner,
}

impl HubRunner {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        HubRunner {
            processes: ProcessRunner::new(root),
        }
    }
}

/// The hub's workspace at `root` for one command (the CLI): routing through [`HubRunner`].
/// The CLI, `agentx mcp` and `agentx serve` all open theirs here, so a `preset = "a2a"` agent
/// is reached the same way through every door of the hub.
pub fn open_workspace(root: &Path) -> Result<Workspace, ClarifyError> {
    hub_workspace(WorkspaceFiles::read(root, false)?, false)
}

/// [`open_workspace`] for a long-lived door (`agentx mcp`, `agentx serve`): the settings are
/// read again when they change.
pub fn open_workspace_watching(root: &Path) -> Result<Workspace, ClarifyError> {
    hub_workspace(WorkspaceFiles::read(root, true)?, true)
}

/// The hub's workspace on settings already read (the CLI points out their typos first);
/// `watching` as [`Workspace::open_watching`].
pub fn hub_workspace(files: WorkspaceFiles, watching: bool) -> Result<Workspace, ClarifyError> {
    let runner = Arc::new(HubRunner::new(files.root()));
    Workspace::with_files(files, runner, watching)
}

impl Runner for HubRunner {
    fn run(&self, invocation: &Invocation, prompt: &str) -> RunResult {
        match invocation.preset {
            Preset::A2a => route::run(invocation, prompt, None),
            _ => self.processes.run(invocation, prompt),
        }
    }

    fn run_for(&self, invocation: &Invocation, prompt: &str, record: &RunFor<'_>) -> RunResult {
        match invocation.preset {
            Preset::A2a => route::run(invocation, prompt, Some(record)),
            _ => self.processes.run(invocation, prompt),
        }
    }

    fn unavailable(&self, invocation: &Invocation) -> Option<String> {
        match invocation.preset {
            Preset::A2a => route::unavailable(invocation),
            _ => self.processes.unavailable(invocation),
        }
    }

    /// An A2A agent has no working directory to check.
    fn check(&self, invocation: &Invocation) -> Result<(), ClarifyError> {
        match invocation.preset {
            Preset::A2a => Ok(()),
            _ => self.processes.check(invocation),
        }
    }
}
