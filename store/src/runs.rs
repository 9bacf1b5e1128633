//! What routing reads and writes on disk besides ledgers: the runner settings, persona files
//! and run logs (`.agentx/state/runs/<id>.r<round>.<n>.json`, each name claimed with
//! create-new so two logs never share one).
//!
//! docs/protocol.md §31: a persona is read from inside the workspace only (no `..`, not absolute, no link
//! on the way, at most 1 MiB, never a FIFO or a device); run logs hold the prompt and the
//! agent's output, so they are created owner-only (0600) and `.agentx/state/.gitignore`
//! keeps them out of git.

use std::io::Write;
use std::path::{Component, Path};

use agentx_clarify_command::paths;
use agentx_clarify_command::{run_log_name, RunStore, RUNS_DIR};
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::{ClarifyError, Config};
use serde_json::Value;

use crate::{inside, io_error, read, DiskStore};

/// `.agentx/state/.gitignore`, written with the first run log when missing.
pub const STATE_GITIGNORE: &str = ".agentx/state/.gitignore";
pub const STATE_GITIGNORE_TEXT: &str =
    "# Run logs hold prompts and agents' output: they stay on this machine.\nruns/\n";

impl RunStore for DiskStore {
    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        self.check_layout()?;
        let path = self.path(paths::CONFIG);
        let config = read::read_small(&path, |bytes| {
            Config::parse_bytes_with_runners(paths::CONFIG, bytes)
        })?
        .unwrap_or_default();
        read::set_max_file_bytes(config.max_file_bytes);
        Ok(config)
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        let relative = Path::new(path);
        if !is_inside(relative) {
            return Err(ClarifyError::ConfigInvalid {
                file: paths::CONFIG.to_owned(),
                location: None,
                message: format!(
                    "the persona file '{path}' must be a relative path inside the workspace (no '..', not absolute)"
                ),
            });
        }
        let full = self.root().join(relative);
        // Every directory on the way is a real one: a linked `.github/agents/` leads out.
        if let Some(parent) = full.parent() {
            check_components(self.root(), parent)?;
        }
        read::read_small(&full, |bytes| {
            Ok(String::from_utf8_lossy(bytes).into_owned())
        })
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        ClarificationId::parse(id)?;
        let dir = self.path(RUNS_DIR);
        inside::make_dir(&dir)?;
        inside::write_new(
            &self.path(STATE_GITIGNORE),
            STATE_GITIGNORE_TEXT.as_bytes(),
            0o644,
        )?;
        let mut text = serde_json::to_vec_pretty(log).unwrap_or_default();
        text.push(b'\n');
        for n in 1..=u32::MAX {
            let name = run_log_name(id, round, n);
            let path = dir.join(&name);
            // create-new + O_NOFOLLOW, 0600: a regular file there is another run's log (take
            // the next name); a link or a FIFO there is refused by name.
            if let Some(mut file) = inside::create_new(&path, 0o600)? {
                file.write_all(&text)
                    .map_err(|e| io_error("write", &path, &e))?;
                return Ok(format!("{RUNS_DIR}{name}"));
            }
        }
        Err(ClarifyError::Internal {
            message: format!("no free run log name for {id} round {round}"),
        })
    }
}

/// A relative path without `..`: it names something inside the directory it is joined to.
pub(crate) fn is_inside(path: &Path) -> bool {
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Each existing directory from `root` (exclusive) down to `dir` is a real directory.
fn check_components(root: &Path, dir: &Path) -> Result<(), ClarifyError> {
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
