//! One module per command family: its grammar (clap's `Args`/`Subcommand`) beside its
//! handler, from the flags to the command layer and back to the terminal or `--json`.
//! `main.rs` only parses, reads the clock and the root, and dispatches here.

use agentx_clarify_core::ClarifyError;

pub mod clarify;
pub mod completions;
pub mod decisions;
pub mod delegate;
pub mod demo;
pub mod gate;
pub mod github;
pub mod keys;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod migrate;
pub mod notify;
pub mod people;
#[cfg(feature = "serve")]
pub mod serve;
pub mod signals;
pub mod status;
pub mod store;

/// An optional `--issue N` / `[ISSUE]` argument, checked as every surface checks it.
pub fn parse_issue_opt(text: Option<&str>) -> Result<Option<u32>, ClarifyError> {
    text.map(agentx_clarify_core::names::parse_issue)
        .transpose()
}
