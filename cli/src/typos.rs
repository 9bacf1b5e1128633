//! Settings typos, pointed out on stderr before a command runs on the workspace
//! (`agentx_clarify_core::typos`): `file:line:col: unknown … ; did you mean …?`.

use agentx_clarify_workspace::WorkspaceFiles;

/// Prints the warnings of the settings `files` read (`[clarify]` keys of
/// `.agentx/config.toml`, `clarify_*` step keys of `.agentx/workflows/*.toml`) on stderr.
/// Unreadable files say nothing here (the command reports them).
pub fn warn(files: &WorkspaceFiles) {
    for w in files.warnings() {
        crate::print::warn(&w);
    }
}
