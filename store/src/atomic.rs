//! Crash-safe file replacement: write a temp file in the same directory, fsync it, rename it
//! over the target, fsync the directory. A crash at any instant leaves the old file or the new
//! one, never a torn one.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use agentx_clarify_core::ClarifyError;

use crate::io_error;

/// Temp files of in-flight writes start with this.
pub const TEMP_PREFIX: &str = ".agentx-tmp-";

/// Refuses paths that are symlinks (a ledger or lock redirected elsewhere is an attack or a
/// mistake, never something to follow).
pub fn refuse_symlink(path: &Path) -> Result<(), ClarifyError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlink_refused(path)),
        _ => Ok(()),
    }
}

pub(crate) fn symlink_refused(path: &Path) -> ClarifyError {
    ClarifyError::Io {
        message: format!("refusing to use {}: it is a symbolic link", path.display()),
    }
}

/// Atomically replaces `path` with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ClarifyError> {
    refuse_symlink(path)?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // tempfile creates owner-only (0600) files; a new ledger gets the mode any new file gets
    // (0666 less the umask), and a rewritten one keeps its own.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| io_error("create a temporary file in", dir, &e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(|e| io_error("set the permissions of", tmp.path(), &e))?;
    }
    tmp.write_all(bytes)
        .map_err(|e| io_error("write", tmp.path(), &e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| io_error("sync", tmp.path(), &e))?;
    tmp.persist(path)
        .map_err(|e| io_error("replace", path, &e.error))?;
    // The rename is durable only once the directory entry is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
