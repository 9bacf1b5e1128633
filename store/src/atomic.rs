//! Crash-safe file replacement: write a temp file in the same directory, fsync it, rename it
//! over the target, fsync the directory. A crash at any instant leaves the old file or the new
//! one, never a torn one.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use agentx_clarify_core::ClarifyError;

use crate::io_error;

/// The mode every shared state file is created with (before the umask): ledgers, statuses,
/// locks, leases, the index, `.gitignore` files. Never 0666, whatever the umask; private
/// ones (state documents, run logs, keys) are 0600.
pub const NEW_FILE_MODE: u32 = 0o644;

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
    replace(path, bytes, false)
}

/// Atomically replaces `path` with `bytes`, owner-only (0600) whatever mode a file there had:
/// the temp file is made 0600 before a byte is written, so the text is never readable by
/// others, not even between a write and a `chmod` (state documents, docs/security.md).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ClarifyError> {
    replace(path, bytes, true)
}

fn replace(path: &Path, bytes: &[u8], private: bool) -> Result<(), ClarifyError> {
    refuse_symlink(path)?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // tempfile creates owner-only (0600) files; a new ledger is readable by others but never
    // writable by them (0644 less the umask: under `umask 000` too, issue 48), and a
    // rewritten one keeps its own.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(NEW_FILE_MODE));
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| io_error("create a temporary file in", dir, &e))?;
    // Set, not created with: the umask would take bits from a created mode, never add them.
    let keep = if private {
        Some(std::os::unix::fs::PermissionsExt::from_mode(0o600))
    } else {
        std::fs::metadata(path).ok().map(|meta| meta.permissions())
    };
    if let Some(permissions) = keep {
        tmp.as_file()
            .set_permissions(permissions)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_private_write_is_owner_only_new_or_not_and_a_plain_one_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        write_private(&new, b"{}\n").unwrap();
        assert_eq!(
            (mode(&new), std::fs::read(&new).unwrap()),
            (0o600, b"{}\n".to_vec())
        );
        // One left readable by others (an older agentx, a hand edit) is owner-only again.
        let old = dir.path().join("old.json");
        std::fs::write(&old, b"[]").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&old, b"[1]").unwrap();
        assert_eq!(
            (mode(&old), std::fs::read(&old).unwrap()),
            (0o600, b"[1]".to_vec())
        );
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&old, b"[2]").unwrap();
        assert_eq!(mode(&old), 0o640);
    }
}
