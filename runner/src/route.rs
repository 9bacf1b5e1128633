//! The process runner the shells hand to the command layer's routing: an invocation with its
//! prompt bound, run in the workspace, as the core's [`RunResult`].

use std::path::PathBuf;

use agentx_clarify_command::Runner;
use agentx_clarify_core::routing::{Invocation, RunResult};
use agentx_clarify_core::ClarifyError;

use crate::{run, Exit, RunOutput, Spec};

/// Runs routed agents for the workspace at `root` (programs with a `/` and `cwd` are
/// relative to it).
#[derive(Clone, Debug)]
pub struct ProcessRunner {
    root: PathBuf,
}

impl ProcessRunner {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcessRunner { root: root.into() }
    }
}

impl Runner for ProcessRunner {
    /// The working directory must be a directory inside the workspace once links are
    /// resolved (docs/protocol.md §31); `cwd = "/nonexistent"` was once blamed on the agent.
    fn check(&self, invocation: &Invocation) -> Result<(), ClarifyError> {
        let cwd = self.root.join(&invocation.cwd);
        let bad = |why: String| ClarifyError::ConfigInvalid {
            file: String::from(".agentx/config.toml"),
            location: None,
            message: format!(
                "the runner's cwd \"{}\" of '{}' {why}",
                invocation.cwd, invocation.agent
            ),
        };
        let resolved = match std::fs::canonicalize(&cwd) {
            Ok(p) if p.is_dir() => p,
            Ok(_) => return Err(bad(String::from("is not a directory"))),
            Err(e) => return Err(bad(format!("cannot be used: {e}"))),
        };
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        if !resolved.starts_with(&root) {
            return Err(bad(String::from(
                "leads outside the workspace through a symbolic link",
            )));
        }
        Ok(())
    }

    fn run(&self, invocation: &Invocation, prompt: &str) -> RunResult {
        let spec = Spec::for_invocation(invocation, prompt, &self.root);
        let started_ms = crate::run::now_ms();
        match run(&spec) {
            Ok(out) => result_of(out),
            Err(e) => RunResult {
                spawn_error: Some(e.to_string()),
                started_ms,
                ended_ms: crate::run::now_ms(),
                ..RunResult::default()
            },
        }
    }

    fn unavailable(&self, invocation: &Invocation) -> Option<String> {
        if invocation.preset == agentx_clarify_core::routing::Preset::A2a {
            // No process to start: the agentx CLI and server reach A2A agents (crate a2a).
            return Some(format!(
                "'{}' is an A2A agent (preset \"a2a\"): route it with the agentx CLI or server",
                invocation.agent
            ));
        }
        crate::locate::unavailable(&Spec::for_invocation(invocation, "", &self.root))
    }
}

/// A finished run as the core reads it (invalid UTF-8 replaced).
pub fn result_of(out: RunOutput) -> RunResult {
    let (exit, signal) = match out.exit {
        Exit::Code(c) => (Some(c), None),
        Exit::Signal(s) => (None, Some(s)),
    };
    RunResult {
        exit,
        signal,
        timed_out: out.timed_out,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        stdout_truncated: out.stdout_truncated,
        stderr_truncated: out.stderr_truncated,
        spawn_error: None,
        started_ms: out.started_ms,
        ended_ms: out.ended_ms,
    }
}
