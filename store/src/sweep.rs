//! Temp files left by writers that crashed mid-write (`.agentx-tmp-*`): a live writer holds
//! its lock far less long than `stale_lock_ms`, so an older one is orphaned.

use std::path::{Path, PathBuf};

use crate::atomic::TEMP_PREFIX;

/// Removes the orphaned temp files among `listed` and in `state_dir`. Best effort.
pub(crate) fn sweep_temp_files(state_dir: &Path, stale_ms: u64, listed: &[PathBuf]) {
    let max_age = std::time::Duration::from_millis(stale_ms);
    let state_temps = std::fs::read_dir(state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(TEMP_PREFIX))
        })
        .map(|entry| entry.path());
    for path in listed.iter().cloned().chain(state_temps) {
        let old = std::fs::symlink_metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > max_age);
        if old {
            let _ = std::fs::remove_file(&path);
        }
    }
}
