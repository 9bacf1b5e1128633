//! `agentx init` on disk: the default workflows and settings and an empty state directory.
//! Never overwrites: run again, it creates only what is missing.

use agentx_clarify_command::paths::{init_files, INIT_DIRS};
use agentx_clarify_core::ClarifyError;

use crate::DiskStore;

/// Creates what is missing; returns the paths created, relative to the root.
pub(crate) fn init(store: &DiskStore) -> Result<Vec<String>, ClarifyError> {
    let mut created = Vec::new();
    for dir in INIT_DIRS {
        let path = store.root().join(dir);
        if !crate::inside::check_dir(&path)? {
            crate::inside::make_dir(&path)?;
            created.push(dir.to_owned());
        }
    }
    for (rel, text) in init_files() {
        let path = store.root().join(&rel);
        // create_new: an existing file is the user's and is never touched (a link there is
        // refused, never written through).
        if crate::inside::write_new(&path, text.as_bytes(), crate::atomic::NEW_FILE_MODE)? {
            created.push(rel);
        }
    }
    Ok(created)
}
