//! The file store (SPEC §3, §8): where a workspace's files live and how they are read and
//! changed. Every mutation is read–decide–write under the file's lock; writes are atomic;
//! a ledger that does not parse is never overwritten; paths are built only from validated
//! issue numbers and symlinks are refused. Shared by the CLI and the Node binding.

mod atomic;
mod lock;

use std::path::{Path, PathBuf};

use agentx_clarify_core::agents::{parse_statuses, statuses_to_json, Statuses};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::{is_workflow_name, MAX_ISSUE};
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Config, Ledger, Workflows};

pub use atomic::{refuse_symlink, write_atomic};
pub use lock::{lock_path, FileLock, LockPolicy};

pub(crate) fn io_error(what: &str, path: &Path, e: &std::io::Error) -> ClarifyError {
    ClarifyError::Io {
        message: format!("cannot {what} {}: {e}", path.display()),
    }
}

pub const STATUS_FILE: &str = "agent-status.json";

/// What the clarifications directory holds.
#[derive(Debug, Default)]
pub struct Listing {
    /// Ledger files, ascending by issue number.
    pub ledgers: Vec<(u64, PathBuf)>,
    /// Temp files of writes in flight or of writers that crashed.
    pub temp_files: Vec<PathBuf>,
}

/// A ledger file's name and its bytes (or why they could not be read).
pub type RawFile = (String, Result<Vec<u8>, ClarifyError>);

/// A workspace rooted at the directory that holds `.agentx/`.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Workspace { root: root.into() }
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

    pub fn agentx_dir(&self) -> PathBuf {
        self.root.join(".agentx")
    }

    pub fn workflows_dir(&self) -> PathBuf {
        self.agentx_dir().join("workflows")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.agentx_dir().join("state")
    }

    pub fn clarifications_dir(&self) -> PathBuf {
        self.state_dir().join("clarifications")
    }

    pub fn config_path(&self) -> PathBuf {
        self.agentx_dir().join("config.toml")
    }

    pub fn status_path(&self) -> PathBuf {
        self.state_dir().join(STATUS_FILE)
    }

    /// `issue-<n>.json`; `issue` is a validated number, so the path cannot escape.
    pub fn ledger_path(&self, issue: u32) -> PathBuf {
        self.clarifications_dir()
            .join(format!("issue-{issue}.json"))
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// `.agentx/config.toml`, defaults when absent.
    pub fn load_config(&self) -> Result<Config, ClarifyError> {
        let path = self.config_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&self.relative(&path), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(io_error("read", &path, &e)),
        }
    }

    /// Every `.agentx/workflows/<type>.toml` (parsed only when a request uses it).
    pub fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        let mut workflows = Workflows::new();
        let dir = self.workflows_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(workflows),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let path = entry.path();
                let name = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".toml")?
                    .to_owned();
                is_workflow_name(&name).then_some((name, path))
            })
            .collect();
        files.sort();
        for (name, path) in files {
            let text = std::fs::read_to_string(&path).map_err(|e| io_error("read", &path, &e))?;
            workflows.insert_text_as(&name, &self.relative(&path), &text);
        }
        Ok(workflows)
    }

    /// The ledger of `issue`, if the file exists. A file that does not parse is
    /// `LEDGER_CORRUPT`, and it is never overwritten.
    pub fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        read_existing(&self.ledger_path(issue), |bytes| {
            Ledger::parse(&format!("issue-{issue}.json"), bytes, Some(issue))
        })
    }

    /// The agent statuses (empty when the file does not exist yet).
    pub fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        let statuses = read_existing(&self.status_path(), |b| parse_statuses(STATUS_FILE, b))?;
        Ok(statuses.unwrap_or_default())
    }

    fn policy(config: &Config) -> LockPolicy {
        LockPolicy {
            timeout_ms: config.lock_timeout_ms,
            stale_ms: config.stale_lock_ms,
        }
    }

    fn ensure_state_dirs(&self) -> Result<(), ClarifyError> {
        let dir = self.clarifications_dir();
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))
    }

    /// Read–decide–write on one ledger under its lock. `decide` gets the current ledger
    /// (freshly read under the lock) and returns what to write, if anything, and a result.
    pub fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnOnce(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.ensure_state_dirs()?;
        let path = self.ledger_path(issue);
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let current = self.read_ledger(issue)?;
        let (write, result) = decide(current)?;
        if let Some(ledger) = write {
            write_atomic(&path, ledger.to_pretty_json().as_bytes())?;
        }
        Ok(result)
    }

    /// Read–change–write of `agent-status.json` under its own lock.
    pub fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        change: impl FnOnce(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        std::fs::create_dir_all(self.state_dir())
            .map_err(|e| io_error("create", &self.state_dir(), &e))?;
        let path = self.status_path();
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let mut statuses = self.read_statuses()?;
        let before = statuses.clone();
        let result = change(&mut statuses)?;
        if statuses != before {
            write_atomic(&path, statuses_to_json(&statuses).as_bytes())?;
        }
        Ok(result)
    }

    /// Ledger files, ascending by issue number (numbers above 2^31−1 included, to be reported).
    pub fn ledger_files(&self) -> Result<Vec<(u64, PathBuf)>, ClarifyError> {
        Ok(self.list_clarifications()?.ledgers)
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
        listing.ledgers.sort();
        Ok(listing)
    }

    /// Reads and parses every ledger, in parallel across the machine's cores (each file read
    /// once into one buffer). Unreadable ledgers become report errors, never failures.
    pub fn read_all(&self) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
        let files = self.ledger_files()?;
        let results = parallel_map(&files, |(n, path)| read_one(*n, path));
        let mut ledgers = Vec::with_capacity(results.len());
        let mut errors = Vec::new();
        for r in results {
            match r {
                Ok(l) => ledgers.push(l),
                Err(e) => errors.push(e),
            }
        }
        Ok((ledgers, errors))
    }

    /// Removes temp files left by writers that crashed mid-write (`.agentx-tmp-*` older than
    /// `stale_lock_ms`: a live writer holds its lock far less long): those of the
    /// clarifications directory found by its listing, and the state directory's. Best effort.
    pub fn sweep_temp_files(&self, config: &Config, listed: &[PathBuf]) {
        let max_age = std::time::Duration::from_millis(config.stale_lock_ms);
        let state_temps = std::fs::read_dir(self.state_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(atomic::TEMP_PREFIX))
            })
            .map(|entry| entry.path());
        for path in listed.iter().cloned().chain(state_temps) {
            let old = std::fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > max_age);
            if old {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// Raw bytes of every ledger file, for `verify` (which reports parse errors as problems).
    pub fn read_all_raw(&self) -> Result<Vec<RawFile>, ClarifyError> {
        let files = self.ledger_files()?;
        Ok(parallel_map(&files, |(_, path)| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut bytes = Vec::new();
            (name, read_into(path, &mut bytes).map(|()| bytes))
        }))
    }
}

/// Reads and parses one ledger file for a workspace-wide pass; failures become report errors.
pub fn read_one(n: u64, path: &Path) -> Result<Ledger, ReportError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fail = |e: ClarifyError| ReportError::new(name.as_str(), &e);
    if n > MAX_ISSUE {
        return Err(fail(ClarifyError::InvalidIssue {
            value: n.to_string(),
        }));
    }
    READ_BUFFER.with(|cell| {
        let mut buf = cell.borrow_mut();
        read_into(path, &mut buf).map_err(fail)?;
        Ledger::parse(&name, &buf, u32::try_from(n).ok()).map_err(fail)
    })
}

thread_local! {
    /// One read buffer per worker thread, reused for every file it reads.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(16 * 1024));
}

/// Reads a whole file into `buf` (reusing its allocation) with one `open` that refuses
/// symlinks (`O_NOFOLLOW`), one `fstat` and, normally, one `read`: a workspace pass reads
/// thousands of files, and the syscalls are most of its cost.
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), ClarifyError> {
    let file = open_nofollow(path).map_err(|e| read_error(path, &e))?;
    read_open(file, path, buf)
}

/// Reads a file, if it exists, into this thread's buffer and decodes it with `decode`.
fn read_existing<T>(
    path: &Path,
    decode: impl FnOnce(&[u8]) -> Result<T, ClarifyError>,
) -> Result<Option<T>, ClarifyError> {
    let file = match open_nofollow(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(path, &e)),
    };
    READ_BUFFER.with(|cell| {
        let mut buf = cell.borrow_mut();
        read_open(file, path, &mut buf)?;
        decode(&buf).map(Some)
    })
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
        Some(libc::ELOOP) => atomic::symlink_refused(path),
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

/// Maps `f` over `items` on all cores, keeping the order.
pub fn parallel_map<I: Sync, O: Send>(items: &[I], f: impl Fn(&I) -> O + Sync) -> Vec<O> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len().max(1));
    if threads <= 1 || items.len() < 64 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(&f).collect::<Vec<O>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}
