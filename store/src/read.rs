//! Reading files the way a workspace pass needs: one `open` that refuses symlinks
//! (`O_NOFOLLOW`), one `fstat` and, normally, one `read` into a reused buffer — a pass reads
//! thousands of files, and the syscalls are most of its cost.

use std::path::Path;

use agentx_clarify_core::ClarifyError;

use crate::atomic::symlink_refused;
use crate::io_error;

thread_local! {
    /// One read buffer per thread, reused for every file it reads.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(16 * 1024));
}

/// Runs `f` on this thread's read buffer.
pub(crate) fn with_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    READ_BUFFER.with(|cell| f(&mut cell.borrow_mut()))
}

/// Reads a whole file into `buf` (reusing its allocation).
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), ClarifyError> {
    let file = open_nofollow(path).map_err(|e| read_error(path, &e))?;
    read_open(file, path, buf)
}

/// Reads a file, if it exists, into this thread's buffer and decodes it with `decode`.
pub(crate) fn read_existing<T>(
    path: &Path,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    let file = match open_nofollow(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(path, &e)),
    };
    with_buffer(|buf| {
        read_open(file, path, buf)?;
        decode(buf).map(Some)
    })
}

/// Reads a whole file into `buf`; `Ok(false)` when it does not exist.
pub(crate) fn read_if_exists(path: &Path, buf: &mut Vec<u8>) -> Result<bool, ClarifyError> {
    match open_nofollow(path) {
        Ok(file) => read_open(file, path, buf).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(read_error(path, &e)),
    }
}

/// Opens a file for reading; a symlink as its last component fails (`ELOOP`).
fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn read_error(path: &Path, e: &std::io::Error) -> ClarifyError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => symlink_refused(path),
        _ => io_error("read", path, e),
    }
}

/// Reads the whole of an open file into `buf`.
fn read_open(mut file: std::fs::File, path: &Path, buf: &mut Vec<u8>) -> Result<(), ClarifyError> {
    use std::io::Read;
    let len = file
        .metadata()
        .map_err(|e| io_error("read", path, &e))?
        .len();
    buf.clear();
    buf.reserve(usize::try_from(len).unwrap_or(0));
    // Ledgers are replaced by rename, never rewritten in place, so the size read by fstat is
    // the size of this inode: read exactly that much.
    (&mut file)
        .take(len)
        .read_to_end(buf)
        .map_err(|e| io_error("read", path, &e))?;
    Ok(())
}
