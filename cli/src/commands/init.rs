//! `agentx init`: the default workflows and an empty state dir. Never overwrites: run again,
//! it creates only what is missing.

use std::path::PathBuf;

use agentx_clarify_core::defaults::{CONFIG_TOML, DEFAULT_WORKFLOWS};
use agentx_clarify_core::ClarifyError;

use crate::store::{io_error, Workspace};

/// Creates what is missing; returns the paths created, relative to the root.
pub fn init(ws: &Workspace) -> Result<Vec<String>, ClarifyError> {
    let mut created = Vec::new();
    let rel = |p: &PathBuf| p.strip_prefix(ws.root()).unwrap_or(p).display().to_string();
    for dir in [
        ws.agentx_dir(),
        ws.workflows_dir(),
        ws.state_dir(),
        ws.clarifications_dir(),
    ] {
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))?;
            created.push(format!("{}/", rel(&dir)));
        }
    }
    let mut files: Vec<(PathBuf, &str)> = DEFAULT_WORKFLOWS
        .iter()
        .map(|(name, text)| (ws.workflows_dir().join(format!("{name}.toml")), *text))
        .collect();
    files.push((ws.config_path(), CONFIG_TOML));
    for (path, text) in files {
        // create_new: an existing file is the user's and is never touched.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                std::io::Write::write_all(&mut f, text.as_bytes())
                    .map_err(|e| io_error("write", &path, &e))?;
                created.push(rel(&path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error("create", &path, &e)),
        }
    }
    Ok(created)
}
