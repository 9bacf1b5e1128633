//! Reading files the way a workspace pass needs: one `open` that refuses symlinks
//! (`O_NOFOLLOW`) and never blocks (`O_NONBLOCK`: a FIFO opens at once instead of waiting for
//! a writer that never comes), one `fstat` that refuses anything but a regular file (docs/protocol.md §20:
//! a FIFO, device or directory at a ledger's path is named and refused, never read) and,
//! normally, one `read` into a reused buffer — a pass reads thousands of files, and the
//! syscalls are most of its cost. The checks add flags and look at the `fstat` the read needs
//! anyway: no syscall more per file.

use std::fs::{File, Metadata};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use agentx_clarify_core::ClarifyError;

use crate::atomic::symlink_refused;
use crate::io_error;

/// Default of `[clarify] max_file_bytes`: the most a ledger (or the status file) may hold.
pub use agentx_clarify_core::config::DEFAULT_MAX_FILE_BYTES;
/// The most a settings, workflow, manifest, persona or key file may hold (docs/protocol.md §31): a
/// 52 MB settings file once cost 2.4 GB of memory on every command.
pub const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;
/// The most the store's own small files (leases, index stamps) may hold.
pub(crate) const MAX_TINY_FILE_BYTES: u64 = 64 << 10;

/// `[clarify] max_file_bytes` as the settings last read in this process say (every command
/// reads them before any ledger). Process-wide: the cap guards memory, which is too.
static MAX_FILE_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_BYTES);

/// Sets the ledger cap from the settings (`[clarify] max_file_bytes`): whoever reads them
/// sets it before any ledger is read.
pub fn set_max_file_bytes(bytes: u64) {
    MAX_FILE_BYTES.store(bytes, Ordering::Relaxed);
}

fn max_file_bytes() -> u64 {
    MAX_FILE_BYTES.load(Ordering::Relaxed)
}

thread_local! {
    /// One read buffer per thread, reused for every file it reads.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(16 * 1024));
}

/// Runs `f` on this thread's read buffer.
pub(crate) fn with_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    READ_BUFFER.with(|cell| f(&mut cell.borrow_mut()))
}

/// Reads a whole ledger file into `buf` (reusing its allocation); a missing file is an error.
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), ClarifyError> {
    let (file, meta) = open_regular(path)?.ok_or_else(|| {
        io_error(
            "read",
            path,
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    read_open(file, &meta, path, buf, max_file_bytes())
}

/// Reads a ledger-sized file, if it exists, into this thread's buffer and decodes it.
pub(crate) fn read_existing<T>(
    path: &Path,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    read_capped(path, max_file_bytes(), decode)
}

/// Reads a settings-sized file (settings, workflows, manifests, personas: at most
/// [`MAX_SMALL_FILE_BYTES`]), if it exists, and decodes it.
pub(crate) fn read_small<T>(
    path: &Path,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    read_capped(path, MAX_SMALL_FILE_BYTES, decode)
}

/// Reads a settings file (`config.toml`, a workflow, a manifest, a persona), named `file` in
/// messages, as [`read_small`] does; one over [`MAX_SMALL_FILE_BYTES`] is the settings' fault,
/// not the disk's: `CONFIG_INVALID` naming the file and the cap (issue 49), so the person who
/// wrote it learns what to change.
pub(crate) fn read_setting<T>(
    path: &Path,
    file: &str,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    let Some((opened, meta)) = open_regular(path)? else {
        return Ok(None);
    };
    if meta.len() > MAX_SMALL_FILE_BYTES {
        return Err(ClarifyError::ConfigInvalid {
            file: file.to_owned(),
            location: None,
            message: format!(
                "the file holds {} bytes, over the 1 MiB ({MAX_SMALL_FILE_BYTES} bytes) a settings file may hold (settings, workflows, manifests and personas are read whole)",
                meta.len()
            ),
        });
    }
    with_buffer(|buf| {
        read_open(opened, &meta, path, buf, MAX_SMALL_FILE_BYTES)?;
        decode(buf).map(Some)
    })
}

/// Reads a file of at most `cap` bytes, if it exists, into this thread's buffer and decodes it.
pub(crate) fn read_capped<T>(
    path: &Path,
    cap: u64,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    let Some((file, meta)) = open_regular(path)? else {
        return Ok(None);
    };
    with_buffer(|buf| {
        read_open(file, &meta, path, buf, cap)?;
        decode(buf).map(Some)
    })
}

/// Whether a ledger file is at `path`, checked as a read would check it (symlinks, FIFOs and
/// directories refused) but without reading it.
pub(crate) fn is_regular(path: &Path) -> Result<bool, ClarifyError> {
    open_regular(path).map(|found| found.is_some())
}

/// Reads a whole file into `buf`; `Ok(false)` when it does not exist.
pub(crate) fn read_if_exists(path: &Path, buf: &mut Vec<u8>) -> Result<bool, ClarifyError> {
    let Some((file, meta)) = open_regular(path)? else {
        return Ok(false);
    };
    read_open(file, &meta, path, buf, max_file_bytes()).map(|()| true)
}

/// A small file's bytes and its metadata (`None` when it does not exist); for lock files,
/// whose age is their mtime, and keys, whose mode matters.
pub(crate) fn read_with_metadata(path: &Path) -> Result<Option<(Vec<u8>, Metadata)>, ClarifyError> {
    let Some((file, meta)) = open_regular(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    read_open(file, &meta, path, &mut bytes, MAX_SMALL_FILE_BYTES)?;
    Ok(Some((bytes, meta)))
}

/// Opens a regular file for reading without blocking and without following a link (docs/protocol.md
/// §31: every file read, settings and personas included); `None` when it does not exist.
fn open_regular(path: &Path) -> Result<Option<(File, Metadata)>, ClarifyError> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOCTTY: a terminal device at the path must not become this process's terminal before
    // fstat refuses it.
    let flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(open_error(path, &e)),
    };
    let meta = file.metadata().map_err(|e| io_error("read", path, &e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok(Some((file, meta)))
}

fn open_error(path: &Path, e: &std::io::Error) -> ClarifyError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => symlink_refused(path),
        // A socket (or a FIFO opened for writing) cannot be opened: say what it is.
        Some(libc::ENXIO) => match std::fs::symlink_metadata(path) {
            Ok(meta) => not_regular(path, &meta),
            Err(_) => io_error("read", path, e),
        },
        _ => io_error("read", path, e),
    }
}

/// `refusing to read X: it is a FIFO (named pipe), not a regular file`.
pub(crate) fn not_regular(path: &Path, meta: &Metadata) -> ClarifyError {
    not_regular_to("read", path, meta)
}

/// [`not_regular`] for another use (`write`, …).
pub(crate) fn not_regular_to(verb: &str, path: &Path, meta: &Metadata) -> ClarifyError {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    };
    ClarifyError::Io {
        message: format!(
            "refusing to {verb} {}: it is {what}, not a regular file",
            path.display()
        ),
    }
}

/// Reads the whole of an open regular file of at most `cap` bytes into `buf`.
fn read_open(
    mut file: File,
    meta: &Metadata,
    path: &Path,
    buf: &mut Vec<u8>,
    cap: u64,
) -> Result<(), ClarifyError> {
    use std::io::Read;
    let len = meta.len();
    if len > cap {
        return Err(ClarifyError::Io {
            message: format!(
                "refusing to read {}: it holds {len} bytes, more than the {cap} allowed (a ledger's limit is [clarify] max_file_bytes)",
                path.display()
            ),
        });
    }
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

/// Reads a settings-sized file as every settings read does (a regular file, no link, opened
/// non-blocking, at most [`MAX_SMALL_FILE_BYTES`]); `None` when it is absent. For shells that
/// look at the workspace's settings themselves (the CLI's typo warnings).
pub fn read_settings(path: &Path) -> Result<Option<Vec<u8>>, ClarifyError> {
    read_small(path, |bytes| Ok(bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_directories_and_symlinks_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("issue-3.json");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        // Without O_NONBLOCK this open would wait for a writer forever.
        let e = read_existing(&fifo, |_| Ok(())).unwrap_err();
        assert_eq!(e.code(), "IO_ERROR");
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(e.to_string().contains("issue-3.json"), "{e}");
        let sub = dir.path().join("issue-4.json");
        std::fs::create_dir(&sub).unwrap();
        let e = read_into(&sub, &mut Vec::new()).unwrap_err();
        assert!(
            e.to_string().contains("a directory, not a regular file"),
            "{e}"
        );
        let link = dir.path().join("issue-5.json");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let e = read_into(&link, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // Settings and personas are never followed through a link either (docs/protocol.md §31).
        let e = read_small(&link, |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_small(&zero, |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = read_small(Path::new("/dev/zero"), |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        assert_eq!(
            read_existing(&dir.path().join("absent"), |_| Ok(())).unwrap(),
            None
        );
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; 2 << 20]).unwrap();
        let e = read_small(&big, |_| Ok(())).unwrap_err();
        assert!(
            e.to_string().contains("more than the 1048576 allowed"),
            "{e}"
        );
    }

    #[test]
    fn a_settings_file_over_the_cap_is_the_settings_fault() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("feature.toml");
        std::fs::write(&big, vec![b'#'; (1 << 20) + 1]).unwrap();
        let e = read_setting(&big, ".agentx/workflows/feature.toml", |_| Ok(())).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        let text = e.to_string();
        assert!(text.contains(".agentx/workflows/feature.toml"), "{text}");
        assert!(text.contains("1048577 bytes, over the 1 MiB"), "{text}");
        // At the cap exactly it is read.
        std::fs::write(&big, vec![b'#'; 1 << 20]).unwrap();
        assert_eq!(
            read_setting(&big, "f", |b| Ok(b.len())).unwrap(),
            Some(1 << 20)
        );
    }
}
