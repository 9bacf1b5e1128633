//! `agentx store export DIR` and `agentx store import DIR` (docs/protocol.md §19).
//!
//! Export writes a complete file workspace into `DIR`: the workspace's own files under
//! `.agentx/` (settings, workflows, agent manifests — everything but `state/` and the file
//! store's index), and every document of the state from whichever store holds it, byte for
//! byte. The exported `config.toml` has no `[store]` table, so the export is a file workspace
//! and not a second door into the same database. Import reads the state documents of a file
//! workspace into PostgreSQL (settings and workflows stay files: they are shared through git).
//! Export → import → export gives identical files.

use std::path::{Path, PathBuf};

use agentx_clarify_command::paths::{self, CLARIFICATIONS_DIR, STATUS};
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Config};
use agentx_clarify_pg::documents::{document_of, DELEGATIONS_DIR};
use agentx_clarify_pg::Imported;
use agentx_clarify_store::{read_into, INDEX_DIR};

use crate::AnyState;

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The workspace's own files copied (relative paths).
    pub files: Vec<String>,
    /// State documents written.
    pub documents: usize,
}

fn io(what: &str, path: &Path, e: &std::io::Error) -> ClarifyError {
    ClarifyError::Io {
        message: format!("cannot {what} {}: {e}", path.display()),
    }
}

/// Writes the workspace at `root`, its state in `state`, into `dir` (which must not hold a
/// workspace yet).
pub fn export(root: &Path, state: &AnyState, dir: &Path) -> Result<Exported, ClarifyError> {
    let target = dir.join(paths::AGENTX_DIR);
    if target.exists() {
        return Err(ClarifyError::input(format!(
            "{} already exists: export writes a fresh workspace, choose an empty directory",
            target.display()
        )));
    }
    let files = copy_own_files(root, dir)?;
    for sub in paths::INIT_DIRS {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|e| io("create", &path, &e))?;
    }
    let put = |path: &str, bytes: &[u8]| write_file(dir, path, bytes);
    // The workspace's own `.gitignore` of the state directory (the state is not copied), or
    // the one `init` writes: what stays on the machine stays out of git.
    let mut ignore = Vec::new();
    let own = root.join(paths::STATE_GITIGNORE);
    if own.is_file() {
        read_into(&own, &mut ignore)?;
    } else {
        ignore.extend_from_slice(paths::STATE_GITIGNORE_TEXT.as_bytes());
    }
    put(paths::STATE_GITIGNORE, &ignore)?;
    let documents = match state {
        AnyState::Disk(_) => {
            let docs = read_documents(root)?;
            for (path, bytes) in &docs {
                put(path, bytes)?;
            }
            docs.len()
        }
        AnyState::Pg(pg) => pg.export_documents(put)?,
    };
    Ok(Exported { files, documents })
}

/// Reads the state documents of the file workspace at `dir` into the PostgreSQL store.
pub fn import(state: &AnyState, dir: &Path, replace: bool) -> Result<Imported, ClarifyError> {
    let AnyState::Pg(pg) = state else {
        return Err(ClarifyError::input(
            "the workspace's state is in its files: import reads a file workspace into PostgreSQL ([store] url or AGENTX_STORE names the database)",
        ));
    };
    if !dir.join(paths::AGENTX_DIR).is_dir() {
        return Err(ClarifyError::input(format!(
            "{} holds no .agentx/ directory: nothing to import",
            dir.display()
        )));
    }
    pg.import_documents(&read_documents(dir)?, replace)
}

/// The state documents of the file workspace at `root` as `(workspace path, bytes)`:
/// clarification ledgers, delegation ledgers (ascending by issue), then the statuses. Lock
/// and temp files are not documents; a symlink is refused.
pub fn read_documents(root: &Path) -> Result<Vec<(String, Vec<u8>)>, ClarifyError> {
    let mut out = Vec::new();
    for dir in [CLARIFICATIONS_DIR, DELEGATIONS_DIR] {
        let path = root.join(dir);
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("read", &path, &e)),
        };
        let mut names: Vec<(u64, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                issue_of_file_name(&name).map(|n| (n, name))
            })
            .collect();
        names.sort();
        for (_, name) in names {
            let rel = format!("{dir}{name}");
            out.push((rel.clone(), read(root, &rel)?));
        }
    }
    if root.join(STATUS).exists() {
        out.push((STATUS.to_owned(), read(root, STATUS)?));
    }
    debug_assert!(out.iter().all(|(p, _)| document_of(p).is_some()));
    Ok(out)
}

fn read(root: &Path, rel: &str) -> Result<Vec<u8>, ClarifyError> {
    let mut bytes = Vec::new();
    read_into(&root.join(rel), &mut bytes)?;
    Ok(bytes)
}

fn write_file(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), ClarifyError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
    }
    std::fs::write(&path, bytes).map_err(|e| io("write", &path, &e))
}

/// Copies `root/.agentx/` into `dir/.agentx/` but for the state and the index; returns the
/// relative paths copied.
fn copy_own_files(root: &Path, dir: &Path) -> Result<Vec<String>, ClarifyError> {
    let mut copied = Vec::new();
    let mut todo: Vec<PathBuf> = vec![PathBuf::from(paths::AGENTX_DIR)];
    let skip = [paths::STATE_DIR, INDEX_DIR].map(|d| PathBuf::from(d.trim_end_matches('/')));
    while let Some(rel) = todo.pop() {
        let from = root.join(&rel);
        let entries = match std::fs::read_dir(&from) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("read", &from, &e)),
        };
        for entry in entries.flatten() {
            let child = rel.join(entry.file_name());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && !skip.contains(&child) {
                todo.push(child);
            } else if kind.is_file() {
                let text = child.to_string_lossy().into_owned();
                let mut bytes = Vec::new();
                read_into(&root.join(&child), &mut bytes)?;
                if text == paths::CONFIG {
                    bytes = without_store(&bytes)?;
                }
                write_file(dir, &text, &bytes)?;
                copied.push(text);
            }
        }
    }
    copied.sort();
    Ok(copied)
}

/// `config.toml` without its `[store]` table (unchanged when it has no store url).
fn without_store(bytes: &[u8]) -> Result<Vec<u8>, ClarifyError> {
    if Config::store_url(paths::CONFIG, bytes)?.is_none() {
        return Ok(bytes.to_vec());
    }
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut in_store = false;
    for line in text.split_inclusive('\n') {
        let header = line.split('#').next().unwrap_or_default().trim();
        if header.starts_with('[') {
            in_store = header == "[store]" || header.starts_with("[store.");
        }
        if !in_store {
            out.push_str(line);
        }
    }
    if Config::store_url(paths::CONFIG, out.as_bytes())?.is_some() {
        return Err(ClarifyError::input(
            "cannot leave the store url out of the exported config.toml: write it as a `[store]` table with `url = \"…\"`",
        ));
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exported_config_has_no_store_table() {
        let text = "[clarify]\nmax_retries = 2\n\n[store] # the hub\nurl = \"postgres://a@/h\"\n\n[agents.x]\ncommand = \"x\"\n";
        let out = String::from_utf8(without_store(text.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            out,
            "[clarify]\nmax_retries = 2\n\n[agents.x]\ncommand = \"x\"\n"
        );
        let plain = b"[clarify]\nmax_retries = 2\n";
        assert_eq!(without_store(plain).unwrap(), plain);
        let inline = b"store = { url = \"postgres://a@/h\" }\n";
        assert_eq!(without_store(inline).unwrap_err().code(), "INVALID_INPUT");
    }

    #[test]
    fn a_file_workspace_exports_byte_for_byte() {
        let src = tempfile::tempdir().unwrap();
        let root = src.path();
        let store = crate::open_at(root, crate::Location::Files).unwrap();
        agentx_clarify_command::Store::init(&store).unwrap();
        let files = [
            (
                format!("{CLARIFICATIONS_DIR}issue-3.json"),
                b"{ not json".to_vec(),
            ),
            (
                format!("{CLARIFICATIONS_DIR}issue-12.json"),
                b"{\"x\": 1}\n".to_vec(),
            ),
            (format!("{DELEGATIONS_DIR}issue-3.json"), b"{}".to_vec()),
            (STATUS.to_owned(), b"{}\n".to_vec()),
            (
                format!("{CLARIFICATIONS_DIR}issue-3.json.lock"),
                b"{}".to_vec(),
            ),
        ];
        for (rel, bytes) in &files {
            write_file(root, rel, bytes).unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        let exported = export(store.files.root(), &store.state, out.path()).unwrap();
        assert_eq!(exported.documents, 4);
        assert!(exported.files.contains(&paths::CONFIG.to_owned()));
        for (rel, bytes) in &files[..4] {
            assert_eq!(
                &std::fs::read(out.path().join(rel)).unwrap(),
                bytes,
                "{rel}"
            );
        }
        assert!(
            !out.path().join(&files[4].0).exists(),
            "locks are not documents"
        );
        let again = export(store.files.root(), &store.state, out.path()).unwrap_err();
        assert_eq!(again.code(), "INVALID_INPUT");
        assert_eq!(
            import(&store.state, out.path(), false).unwrap_err().code(),
            "INVALID_INPUT"
        );
    }
}
