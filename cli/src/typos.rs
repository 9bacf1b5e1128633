//! Settings typos, pointed out on stderr before a command runs on the workspace
//! (`agentx_clarify_core::typos`): `file:line:col: unknown … ; did you mean …?`.

use std::path::Path;

use agentx_clarify_core::typos::{config_warnings, workflow_warnings};

/// The warnings for the workspace at `root`: `[clarify]` keys of `.agentx/config.toml`, and
/// `clarify_*` step keys of `.agentx/workflows/*.toml`. Unreadable files say nothing here
/// (the command reports them).
pub fn warnings(root: &Path) -> Vec<String> {
    let agentx = root.join(".agentx");
    let mut out = Vec::new();
    let config = agentx.join("config.toml");
    if let Some(text) = settings_text(&config) {
        out.extend(config_warnings(&config.display().to_string(), &text));
    }
    let Ok(entries) = std::fs::read_dir(agentx.join("workflows")) else {
        return out;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for file in files {
        if let Some(text) = settings_text(&file) {
            out.extend(workflow_warnings(&file.display().to_string(), &text));
        }
    }
    out
}

/// A settings file's text, read through the store's one reader (a FIFO, a device or a link
/// where settings belong must never hang or mislead a warning; the command reports them).
fn settings_text(path: &Path) -> Option<String> {
    let bytes = agentx_clarify_store::read_settings(path).ok()??;
    String::from_utf8(bytes).ok()
}

/// Prints [`warnings`] on stderr.
pub fn warn(root: &Path) {
    for w in warnings(root) {
        crate::print::warn(&w);
    }
}
