//! `agentx init` on disk: the default workflows and settings and an empty state directory.
//! Never overwrites: run again, it creates only what is missing.

use agentx_clarify_command::paths::{init_files, INIT_DIRS};
use agentx_clarify_core::ClarifyError;

use crate::{io_error, DiskStore};

/// Creates what is missing; returns the paths created, relative to the root.
pub(crate) fn init(store: &DiskStore) -> Result<Vec<String>, ClarifyError> {
    let mut created = Vec::new();
    for dir in INIT_DIRS {
        let path = store.root().join(dir);
        if !path.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| io_error("create", &path, &e))?;
            created.push(dir.to_owned());
        }
    }
    for (rel, text) in init_files() {
        let path = store.root().join(&rel);
        // create_new: an existing file is the user's and is never touched.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                std::io::Write::write_all(&mut f, text.as_bytes())
                    .map_err(|e| io_error("write", &path, &e))?;
                created.push(rel);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error("create", &path, &e)),
        }
    }
    Ok(created)
}
