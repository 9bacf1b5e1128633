//! Nothing is written or read outside the workspace through a link (docs/protocol.md §31). A cloned
//! repository can hold symlinks anywhere under `.agentx/` (git keeps them), so every directory
//! the store uses under `.agentx/` must be a real directory, never a link, and every file it
//! creates is created with create-new and `O_NOFOLLOW`: a planted link is refused by name,
//! never written through.
//!
//! Directories are checked component by component from the workspace's `.agentx/` down
//! (`lstat`, a few syscalls per command), and created one `mkdir` at a time, so a link in the
//! middle of the path is found instead of followed. The workspace root itself (and anything
//! above it) is the user's choice and may be a link.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};

use agentx_clarify_core::ClarifyError;

use crate::atomic::symlink_refused;
use crate::io_error;

const AGENTX: &str = ".agentx";

/// Where the checked part of `dir` starts: the parent of its last `.agentx` component (the
/// workspace root), and the components below it. A path without one is not the store's
/// (tests, temp dirs): nothing to check.
fn split(dir: &Path) -> Option<(PathBuf, Vec<&OsStr>)> {
    let parts: Vec<Component<'_>> = dir.components().collect();
    let at = parts
        .iter()
        .rposition(|c| c.as_os_str() == OsStr::new(AGENTX))?;
    let base: PathBuf = parts.get(..at)?.iter().collect();
    let below = dir
        .components()
        .skip(at)
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    Some((base, below))
}

/// `refusing to use X: it is a symbolic link` for a link, `… not a directory` for a file.
fn not_a_dir(path: &Path, meta: &std::fs::Metadata) -> ClarifyError {
    if meta.file_type().is_symlink() {
        return ClarifyError::Io {
            message: format!(
                "refusing to use {}: it is a symbolic link (every directory under .agentx/ must be inside the workspace)",
                path.display()
            ),
        };
    }
    ClarifyError::Io {
        message: format!("refusing to use {}: it is not a directory", path.display()),
    }
}

/// Whether directory `dir` exists, every component of it from `.agentx/` down checked to be
/// a real directory (a link or a file among them is `IO_ERROR` naming it).
pub(crate) fn check_dir(dir: &Path) -> Result<bool, ClarifyError> {
    let Some((mut here, below)) = split(dir) else {
        return Ok(dir.is_dir());
    };
    for part in below {
        here.push(part);
        match std::fs::symlink_metadata(&here) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => return Err(not_a_dir(&here, &meta)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_error("read", &here, &e)),
        }
    }
    Ok(true)
}

/// Creates directory `dir` and its missing parents from `.agentx/` down, one `mkdir` at a
/// time; an existing component that is a link or a file is `IO_ERROR` naming it.
pub(crate) fn make_dir(dir: &Path) -> Result<(), ClarifyError> {
    let Some((mut here, below)) = split(dir) else {
        return std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, &e));
    };
    // The root is the user's choice (`init` creates a missing one): only what is below it
    // is checked.
    // 0755 before the umask, never 0777: under `umask 000` nobody else may add, replace or
    // remove a ledger (issue 48).
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
    if !here.as_os_str().is_empty() && !here.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .create(&here)
            .map_err(|e| io_error("create", &here, &e))?;
    }
    for part in below {
        here.push(part);
        match builder.create(&here) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // mkdir never follows a link in its last component: look at what is there.
                let meta =
                    std::fs::symlink_metadata(&here).map_err(|e| io_error("read", &here, &e))?;
                if !meta.is_dir() {
                    return Err(not_a_dir(&here, &meta));
                }
            }
            Err(e) => return Err(io_error("create", &here, &e)),
        }
    }
    Ok(())
}

/// Opens a new file for writing: create-new (an existing file, link or not, is never
/// opened), `O_NOFOLLOW`, `mode` before the umask. `Ok(None)` when something is already
/// there and is a regular file; a link or a special file there is `IO_ERROR` naming it.
pub(crate) fn create_new(path: &Path, mode: u32) -> Result<Option<std::fs::File>, ClarifyError> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => Err(symlink_refused(path)),
                Ok(meta) if !meta.is_file() => {
                    Err(crate::read::not_regular_to("write", path, &meta))
                }
                _ => Ok(None),
            }
        }
        Err(e) => Err(io_error("create", path, &e)),
    }
}

/// Writes `text` to a new file (see [`create_new`]); `Ok(false)` when a regular file is
/// already there (it is the user's and stays as it is).
pub(crate) fn write_new(path: &Path, text: &[u8], mode: u32) -> Result<bool, ClarifyError> {
    let Some(mut file) = create_new(path, mode)? else {
        return Ok(false);
    };
    if let Err(e) = file.write_all(text) {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(io_error("write", path, &e));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_directory_under_agentx_is_refused_by_name() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        let elsewhere = outer.path().join("elsewhere");
        std::fs::create_dir_all(root.join(".agentx")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".agentx/state")).unwrap();
        let e = make_dir(&root.join(".agentx/state/clarifications/")).unwrap_err();
        assert!(
            e.to_string()
                .contains(".agentx/state: it is a symbolic link"),
            "{e}"
        );
        let e = check_dir(&root.join(".agentx/state/runs")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // The root may be a link: only what is under .agentx/ is checked.
        let linked_root = outer.path().join("link");
        std::os::unix::fs::symlink(&root, &linked_root).unwrap();
        std::fs::remove_file(root.join(".agentx/state")).unwrap();
        make_dir(&linked_root.join(".agentx/state/runs")).unwrap();
        assert!(check_dir(&root.join(".agentx/state/runs")).unwrap());
        assert!(!check_dir(&root.join(".agentx/keys")).unwrap());
    }

    #[test]
    fn a_new_file_is_never_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "mine").unwrap();
        let link = dir.path().join(".gitignore");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_new(&link, b"*\n", 0o644).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
        assert!(!write_new(&victim, b"*\n", 0o644).unwrap());
        assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
        assert!(write_new(&dir.path().join("new"), b"*\n", 0o644).unwrap());
    }
}
