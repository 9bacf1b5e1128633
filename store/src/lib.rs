//! # agentx-clarify-store
//!
//! The file store (SPEC §3, §8): `DiskStore`, a workspace on disk behind the command layer's
//! [`Store`] trait, and the clock. Every mutation is read–decide–write under the file's
//! cross-process lock; writes are atomic (temp file, fsync, rename, fsync the directory); a
//! ledger that does not parse is never overwritten; paths are built only from validated issue
//! numbers and symlinks are refused; a workspace pass reads every ledger on all cores. The CLI,
//! the Node binding and the MCP server share it, so they lock and write identically.
#![forbid(unsafe_code)]

mod atomic;
pub mod clock;
mod index;
mod init;
mod lock;
mod parallel;
mod pass;
mod read;
mod sweep;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use agentx_clarify_command::paths;
use agentx_clarify_command::{LedgerRead, RawLedger, Scope, Store};
use agentx_clarify_core::agents::{parse_statuses, statuses_to_json, Statuses};
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::names::is_workflow_name;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Config, Ledger, Workflows};

pub use atomic::{refuse_symlink, write_atomic};
use index::Index;
pub use index::INDEX_DIR;
pub use lock::{lock_path, FileLock, LockPolicy};
pub use parallel::parallel_map;
pub use read::read_into;

pub(crate) fn io_error(what: &str, path: &Path, e: &std::io::Error) -> ClarifyError {
    ClarifyError::Io {
        message: format!("cannot {what} {}: {e}", path.display()),
    }
}

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
    /// The temp files the last workspace pass listed, so the sweep after a monitor run needs
    /// no second listing of a directory of thousands of ledgers.
    listed_temps: Mutex<Option<Vec<PathBuf>>>,
}

impl DiskStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        DiskStore {
            index: Index::new(&root, root.join(paths::CLARIFICATIONS_DIR)),
            root,
            listed_temps: Mutex::new(None),
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

    /// A path of SPEC §3 (`paths::…`) under this root.
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
        listing.ledgers.sort();
        Ok(listing)
    }
}

/// A file's name for reports.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Store for DiskStore {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        let path = self.path(paths::CONFIG);
        match std::fs::read(&path) {
            Ok(bytes) => Config::parse_bytes(&self.relative(&path), &bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(io_error("read", &path, &e)),
        }
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        let mut workflows = Workflows::new();
        let dir = self.path(paths::WORKFLOWS_DIR);
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
            let bytes = std::fs::read(&path).map_err(|e| io_error("read", &path, &e))?;
            workflows.insert_bytes_as(&name, &self.relative(&path), &bytes);
        }
        Ok(workflows)
    }

    fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        read::read_existing(&self.ledger_path(issue), |bytes| {
            Ledger::parse(&paths::ledger_name(issue), bytes, Some(issue))
        })
    }

    fn update_ledger<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(Option<Ledger>) -> Result<(Option<Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let dir = self.clarifications_dir();
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))?;
        let path = self.ledger_path(issue);
        // Dropped last: the session accounts for the lock file's coming and going too.
        let _session = self.index.begin();
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let current = self.read_ledger(issue)?;
        let (write, result) = decide(current)?;
        if let Some(ledger) = write {
            // The marker goes before a ledger that needs it and after one that does not: a
            // crash in between leaves one marker too many, never one too few.
            let marked = may_act(&ledger);
            if marked {
                self.index.mark(u64::from(issue))?;
            }
            write_atomic(&path, ledger.to_pretty_json().as_bytes())?;
            if !marked {
                self.index.unmark(u64::from(issue));
            }
        }
        Ok(result)
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        let statuses = read::read_existing(&self.path(paths::STATUS), |b| {
            parse_statuses(paths::STATUS_FILE, b)
        })?;
        Ok(statuses.unwrap_or_default())
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        mut change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let dir = self.path(paths::STATE_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))?;
        let path = self.path(paths::STATUS);
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let mut statuses = self.read_statuses()?;
        let before = statuses.clone();
        let result = change(&mut statuses)?;
        if statuses != before {
            write_atomic(&path, statuses_to_json(&statuses).as_bytes())?;
        }
        Ok(result)
    }

    fn scan<R: Send>(
        &self,
        scope: Scope,
        visit: impl Fn(LedgerRead) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        if let Scope::FollowUp { written } = scope {
            if let Some(mut issues) = self.index.trusted() {
                issues.extend(written.map(u64::from));
                return Ok(self.scan_marked(issues, written, &visit));
            }
        }
        self.scan_all(&visit)
    }

    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        let files = self.list_clarifications()?.ledgers;
        Ok(parallel_map(&files, |(_, path)| {
            let mut bytes = Vec::new();
            (file_name(path), read_into(path, &mut bytes).map(|()| bytes))
        }))
    }

    fn init(&self) -> Result<Vec<String>, ClarifyError> {
        init::init(self)
    }

    fn after_monitor(&self, config: &Config) {
        let listed = self
            .listed_temps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let temps = match listed {
            Some(temps) => temps,
            None => match self.list_clarifications() {
                Ok(listing) => listing.temp_files,
                Err(_) => return,
            },
        };
        // Removing a temp file changes the clarifications directory: a session says it was us.
        let _session = (!temps.is_empty()).then(|| self.index.begin());
        sweep::sweep_temp_files(&self.path(paths::STATE_DIR), config.stale_lock_ms, &temps);
    }
}
