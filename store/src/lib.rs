//! # agentx-clarify-store
//!
//! The file store (docs/protocol.md §3, §8): `DiskStore`, a workspace on disk behind the command layer's
//! [`Store`] trait, and the clock. Every mutation is read–decide–write under the file's
//! cross-process lock; writes are atomic (temp file, fsync, rename, fsync the directory); a
//! ledger that does not parse is never overwritten; paths are built only from validated issue
//! numbers and symlinks are refused; a workspace pass reads every ledger on all cores. The CLI,
//! the Node binding and the MCP server share it, so they lock and write identically.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod atomic;
pub mod clock;
mod delegations;
mod feed;
mod files;
#[cfg(feature = "fulltext")]
mod fulltext;
mod index;
mod init;
mod inside;
mod keys;
mod kinds;
mod lease;
mod lock;
mod parallel;
mod pass;
mod pending;
mod read;
mod runs;
mod stamp;
mod state;
mod sweep;
mod watch;

use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use agentx_clarify_command::paths;
use agentx_clarify_command::store::ledgers::LedgerKind;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_core::Config;

pub use atomic::{refuse_symlink, write_atomic, write_private};
pub use feed::DiskCursor;
use index::Index;
pub use index::INDEX_DIR;
pub use keys::{new_uuid_v4, random_seed, with_new_session};
pub use lease::DiskLease;
pub use lock::{lock_path, pid_alive, this_host, FileLock, LockPolicy};
pub use parallel::parallel_map;
pub use read::{
    read_into, read_settings, set_max_file_bytes, DEFAULT_MAX_FILE_BYTES, MAX_SMALL_FILE_BYTES,
};
pub use stamp::SettingsStamp;
pub use watch::{safety_tick, SettingsWatch, FALLBACK_TICK, SAFETY_TICK};

pub(crate) fn io_error(what: &str, path: &Path, e: &std::io::Error) -> ClarifyError {
    // By kind, not errno: tempfile's errors wrap the OS error with the temp file's path.
    let message = if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem {
        // Say which filesystem: the user must remount it or work elsewhere, not retry.
        format!(
            "cannot {what} {}: it is on a read-only filesystem (mounted at {})",
            path.display(),
            mount_point(path).display()
        )
    } else {
        format!("cannot {what} {}: {e}", path.display())
    };
    ClarifyError::Io { message }
}

/// The mount point of the filesystem holding `path`: its nearest ancestor whose parent is on
/// another device (or `/`).
fn mount_point(path: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    let mut here = path
        .ancestors()
        .find(|p| dev(p).is_some())
        .unwrap_or(path)
        .to_path_buf();
    while let Some(parent) = here.parent() {
        if parent.as_os_str().is_empty() || dev(parent) != dev(&here) {
            break;
        }
        here = parent.to_path_buf();
    }
    here
}

/// The directories of docs/protocol.md §3 and §19 under `.agentx/` ([`DiskStore::check_layout`]).
const LAYOUT_DIRS: [&str; 13] = [
    paths::AGENTX_DIR,
    paths::WORKFLOWS_DIR,
    paths::AGENTS_DIR,
    paths::KEYS_DIR,
    paths::STATE_DIR,
    paths::CLARIFICATIONS_DIR,
    paths::DELEGATIONS_DIR,
    agentx_clarify_command::RUNS_DIR,
    pending::PENDING_DIR,
    INDEX_DIR,
    ".agentx/index/active/",
    ".agentx/index/delegations/",
    ".agentx/index/delegations/active/",
];

/// Files every command may read or write before it knows which ledger it needs: a FIFO or a
/// link to a device there would hang or flood it ([`DiskStore::check_layout`]).
const LAYOUT_FILES: [&str; 9] = [
    paths::CONFIG,
    paths::STATUS,
    ".agentx/index/stamp",
    ".agentx/index/lock",
    ".agentx/index/writers",
    ".agentx/index/.gitignore",
    ".agentx/index/delegations/stamp",
    ".agentx/index/delegations/lock",
    ".agentx/index/delegations/writers",
];

/// What the clarifications directory holds.
#[derive(Debug, Default)]
pub struct Listing {
    /// Ledger files, ascending by issue number.
    pub ledgers: Vec<(u64, PathBuf)>,
    /// Temp files of writes in flight or of writers that crashed.
    pub temp_files: Vec<PathBuf>,
}

/// A workspace on disk, rooted at the directory that holds `.agentx/`.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
    /// The index of active records: what the monitor after a command reads.
    index: Index,
    /// The same for delegation ledgers: those the monitor's timeout phase can act on.
    delegation_index: Index,
    /// The temp files the last workspace pass listed, so the sweep after a monitor run needs
    /// no second listing of a directory of thousands of ledgers.
    listed_temps: Mutex<Option<Vec<PathBuf>>>,
    /// The layout check passed on this handle (`check_layout`): a handle lives for one
    /// command in the CLI and one call in the servers, and the settings, the store's URL and
    /// the documents each asked for it again (about 45 `stat`s each time).
    layout_checked: std::sync::atomic::AtomicBool,
}

impl DiskStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        DiskStore {
            index: Index::new(&root, root.join(paths::CLARIFICATIONS_DIR)),
            delegation_index: Index::for_delegations(&root, root.join(paths::DELEGATIONS_DIR)),
            root,
            listed_temps: Mutex::new(None),
            layout_checked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The nearest ancestor of `start` (itself included) holding `.agentx/`, else `start`.
    pub fn discover(start: &Path) -> PathBuf {
        start
            .ancestors()
            .find(|dir| dir.join(".agentx").is_dir())
            .unwrap_or(start)
            .to_path_buf()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Fails unless the root is an existing directory (docs/protocol.md §20: `--root` naming a missing
    /// directory is an error, not an empty workspace). Every command but `init` checks it.
    pub fn require_root(&self) -> Result<(), ClarifyError> {
        match std::fs::metadata(&self.root) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(ClarifyError::Io {
                message: format!("workspace root {} is not a directory", self.root.display()),
            }),
            Err(e) => Err(ClarifyError::Io {
                message: format!(
                    "workspace root {} does not exist or cannot be read ({e}); `init` creates it",
                    self.root.display()
                ),
            }),
        }
    }

    /// docs/protocol.md §31: every directory the store uses under `.agentx/` that exists is a real
    /// directory inside the workspace (a link among them is `IO_ERROR` naming it), and the
    /// index's fixed files are regular files — checked when the settings are read, before a
    /// command reads or writes anything else. About forty `lstat`s, once per handle.
    pub fn check_layout(&self) -> Result<(), ClarifyError> {
        use std::sync::atomic::Ordering;
        if self.layout_checked.load(Ordering::Relaxed) {
            return Ok(());
        }
        for dir in LAYOUT_DIRS {
            inside::check_dir(&self.path(dir))?;
        }
        for file in LAYOUT_FILES {
            let path = self.path(file);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(atomic::symlink_refused(&path))
                }
                Ok(meta) if !meta.is_file() => return Err(read::not_regular(&path, &meta)),
                _ => {}
            }
        }
        self.layout_checked.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// A path of docs/protocol.md §3 (`paths::…`) under this root.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn agentx_dir(&self) -> PathBuf {
        self.path(paths::AGENTX_DIR)
    }

    pub fn clarifications_dir(&self) -> PathBuf {
        self.path(paths::CLARIFICATIONS_DIR)
    }

    /// `issue-<n>.json`; `issue` is a validated number, so the path cannot escape.
    pub fn ledger_path(&self, issue: u32) -> PathBuf {
        self.path(&paths::ledger_path(issue))
    }

    /// The path of the ledger of kind `K` for `issue`, its directory created.
    fn ledger_dir_made<K: LedgerKind>(&self, issue: u32) -> Result<PathBuf, ClarifyError> {
        inside::make_dir(&self.path(K::DIR))?;
        Ok(self.path(&K::path(issue)))
    }

    /// When the settings file was last modified (epoch ms), if there is one: the latest
    /// moment its `[[notify]]` sinks can have been configured, from which a sink first seen
    /// afterwards is owed its events (docs/notifications.md, "What a new sink is owed").
    /// A link is not followed (the settings reader refuses one anyway).
    pub fn config_modified_ms(&self) -> Option<i64> {
        let meta = std::fs::symlink_metadata(self.path(paths::CONFIG)).ok()?;
        let since = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        i64::try_from(since.as_millis()).ok()
    }

    /// Writes a ledger under its lock and keeps its marker in `index`: the marker goes before
    /// a ledger that needs it and after one that does not, so a crash in between leaves one
    /// marker too many, never one too few.
    ///
    /// The follow-up's keys likewise (docs/protocol.md §29): `new` (the keys of what is written) are added
    /// before the write, and those of `old` (of what it replaces) that `new` lacks removed
    /// after it.
    fn write_indexed(
        index: &Index,
        issue: u32,
        path: &Path,
        bytes: &[u8],
        marked: bool,
        (old, new): (&[PathBuf], &[PathBuf]),
    ) -> Result<(), ClarifyError> {
        if marked {
            index.mark(u64::from(issue))?;
        }
        index.put_keys(&index::minus(new, old))?;
        write_atomic(path, bytes)?;
        clock::bench_commit();
        index.journal_written(issue);
        index.drop_keys(&index::minus(old, new));
        if !marked {
            index.unmark(u64::from(issue));
        }
        Ok(())
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    fn policy(config: &Config) -> LockPolicy {
        LockPolicy {
            timeout_ms: config.lock_timeout_ms,
            stale_ms: config.stale_lock_ms,
        }
    }

    /// One listing of the clarifications directory: its ledgers and its temp files.
    pub fn list_clarifications(&self) -> Result<Listing, ClarifyError> {
        let dir = self.clarifications_dir();
        let mut listing = Listing::default();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(listing),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(n) = issue_of_file_name(name) {
                listing.ledgers.push((n, entry.path()));
            } else if name.starts_with(atomic::TEMP_PREFIX) {
                listing.temp_files.push(entry.path());
            }
        }
        // A ledger's name is its issue's canonical decimal: no two files share a number, so
        // the number alone orders them.
        listing.ledgers.sort_unstable_by_key(|(n, _)| *n);
        Ok(listing)
    }
}

/// A file's name for reports.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
