//! Runs one routed agent (docs/protocol.md §14.2 step 4): the program as the leader of its own session
//! and process group, the prompt on stdin or in its arguments, stdout and stderr captured
//! within a cap each (the rest drained, dropped and counted), and a timeout that kills the
//! whole group. Neither a chatty agent nor a grandchild that keeps a pipe open can hang the
//! hub. Unix only; std and libc, no async runtime. The calling process must ignore SIGPIPE
//! (Rust binaries and Node do): a program that closes its stdin early then costs a failed
//! write, not the hub.
//!
//! What to run comes from the core ([`agentx_clarify_core::routing::Invocation`], see
//! [`Spec::for_invocation`]); what the output means is the core's business too. Writing the
//! run log is the store's.
#![deny(clippy::indexing_slicing)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod capture;
mod locate;
mod route;
mod run;
mod spawn;
mod sys;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentx_clarify_core::routing::Invocation;

pub use route::{result_of, ProcessRunner};
pub use run::run;
pub use sys::raise_open_files;

/// Each of stdout and stderr keeps at most this many bytes (docs/protocol.md §14.2: 1 MiB).
pub const OUTPUT_CAP: usize = 1 << 20;

/// How long pipes are still read after the group was killed: a process that escaped the
/// group (its own `setsid`) may hold them open forever.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// One process to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Written to the child's stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Added to the inherited environment (same name: replaced).
    pub env: Vec<(String, String)>,
    /// `None`: the hub's own working directory.
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    /// Per stream; see [`OUTPUT_CAP`].
    pub cap: usize,
}

impl Spec {
    pub fn new(program: impl Into<PathBuf>, timeout: Duration) -> Self {
        Spec {
            program: program.into(),
            args: Vec::new(),
            stdin: None,
            env: Vec::new(),
            cwd: None,
            timeout,
            cap: OUTPUT_CAP,
        }
    }

    /// The process of an invocation with its prompt bound, for the workspace at `root`:
    /// `cwd` is relative to the root, and so is a program path with a `/` in it (a bare name
    /// is looked up on `PATH`). Without this, `exec` would resolve `./bin/agent` against the
    /// runner's `cwd`, not the workspace.
    pub fn for_invocation(invocation: &Invocation, prompt: &str, root: &Path) -> Self {
        // Absolute, so a relative `--root` is not applied twice: the child starts in `cwd`
        // (under the root) before it execs the program path.
        let root = &std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let program = Path::new(&invocation.program);
        let program = if invocation.program.contains('/') {
            root.join(program)
        } else {
            program.to_path_buf()
        };
        Spec {
            program,
            args: invocation.argv(prompt),
            stdin: invocation.stdin(prompt).map(|p| p.as_bytes().to_vec()),
            env: invocation
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            cwd: Some(root.join(&invocation.cwd)),
            timeout: Duration::from_secs(u64::from(invocation.timeout_seconds)),
            cap: OUTPUT_CAP,
        }
    }
}

/// How the program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it (SIGKILL after a timeout, or one of its own).
    Signal(i32),
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit status {c}"),
            Exit::Signal(s) => write!(f, "signal {s}"),
        }
    }
}

/// What one run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    pub exit: Exit,
    /// The timeout expired and the group was killed (then `exit` is `Signal(9)`, unless the
    /// program ended on its own in the same instant).
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// More than the cap was written: the middle was dropped (see `stdout_dropped`).
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Bytes dropped between the kept head and tail.
    pub stdout_dropped: u64,
    pub stderr_dropped: u64,
    /// Wall clock, Unix epoch milliseconds: the spawn, and the end of the output.
    pub started_ms: i64,
    pub ended_ms: i64,
}

impl RunOutput {
    /// stdout as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// A run that could not happen as a run: an agent error for the caller, with this cause.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (not found, not executable, bad cwd, arguments too
    /// long for the system).
    #[error("could not start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the program failed; its group was killed.
    #[error("lost track of {program}: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    pub fn io_error(&self) -> &std::io::Error {
        match self {
            RunError::Spawn { source, .. } | RunError::Wait { source, .. } => source,
        }
    }
}
