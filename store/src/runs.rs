//! What routing reads and writes on disk besides ledgers: the runner settings, persona files
//! and run logs (`.agentx/state/runs/<id>.r<round>.<n>.json`, each name claimed with
//! create-new so two logs never share one).
//!
//! docs/protocol.md §31: a persona is read from inside the workspace only (no `..`, not absolute, no link
//! on the way, at most 1 MiB, never a FIFO or a device); run logs hold the prompt and the
//! agent's output, so they are created owner-only (0600) and `.agentx/state/.gitignore`
//! keeps them out of git.

use std::path::Component;
use std::path::Path;

use agentx_clarify_core::ClarifyError;

pub use agentx_clarify_command::paths::{STATE_GITIGNORE, STATE_GITIGNORE_TEXT};

/// Writes `.agentx/state/.gitignore` at `path` when it is missing, and brings one an older
/// `agentx` wrote (byte for byte) up to date: it left the state documents tracked. A user's
/// own is left as it is; a link there is refused, never written through.
pub(crate) fn state_gitignore(path: &Path) -> Result<(), ClarifyError> {
    if crate::inside::write_new(path, STATE_GITIGNORE_TEXT.as_bytes(), 0o644)? {
        return Ok(());
    }
    let old = crate::read::read_small(path, |bytes| {
        Ok(bytes == agentx_clarify_command::paths::STATE_GITIGNORE_OLD_TEXT.as_bytes())
    })?;
    if old == Some(true) {
        crate::atomic::write_atomic(path, STATE_GITIGNORE_TEXT.as_bytes())?;
    }
    Ok(())
}

/// A relative path without `..`: it names something inside the directory it is joined to.
pub(crate) fn is_inside(path: &Path) -> bool {
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Each existing directory from `root` (exclusive) down to `dir` is a real directory.
pub(crate) fn check_components(root: &Path, dir: &Path) -> Result<(), ClarifyError> {
    let Ok(below) = dir.strip_prefix(root) else {
        return Ok(());
    };
    let mut here = root.to_path_buf();
    for part in below.components() {
        here.push(part);
        match std::fs::symlink_metadata(&here) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(crate::atomic::symlink_refused(&here))
            }
            Ok(_) | Err(_) => return Ok(()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_without_dot_dot_are_inside() {
        assert!(is_inside(Path::new(".github/agents/a.agent.md")));
        assert!(is_inside(Path::new("./p.md")));
        assert!(!is_inside(Path::new("../../etc/passwd")));
        assert!(!is_inside(Path::new("a/../../b")));
        assert!(!is_inside(Path::new("/etc/passwd")));
        assert!(!is_inside(Path::new("")));
    }
}
