//! `MemStore`: a workspace held in memory as the files a `DiskStore` would hold (relative
//! path → bytes), so every decision about bytes — parse errors, raw ledgers, pretty-printing —
//! is the same as on disk. It serves the vector runners, the wasm package and the playground.
//! One owner at a time: it excludes other writers by Rust's borrow rules, not by locks.

mod files;
mod state;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;
use serde_json::Value;

pub use crate::file_map::FileMap;
use crate::store::ledgers::LedgerKind;
use crate::store::paths;

#[derive(Debug, Default)]
pub struct MemStore {
    files: RefCell<FileMap>,
    /// The directories that exist (a handful: a `Vec` costs less code than a set).
    dirs: RefCell<Vec<String>>,
    /// The change feed (docs/protocol.md §21): a count of writes, and the count at which
    /// each path was last written.
    revision: Cell<u64>,
    written: RefCell<BTreeMap<String, u64>>,
}

impl MemStore {
    /// An empty workspace (no `.agentx/` at all).
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// A workspace holding exactly `files` (their directories exist).
    pub fn from_files(files: FileMap) -> MemStore {
        let store = MemStore::new();
        *store.files.borrow_mut() = files;
        store.add_dirs(&paths::STATE_DIRS);
        store
    }

    /// A workspace from a conformance vector's `setup` (tests/vectors/README.md).
    pub fn from_setup(setup: &Value) -> Result<MemStore, ClarifyError> {
        Ok(MemStore::from_files(paths::setup_files(setup)?))
    }

    /// Every file, for snapshots (undo, sharing) and for writing the workspace out.
    pub fn files(&self) -> FileMap {
        self.files.borrow().clone()
    }

    /// One file's bytes.
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        self.files.borrow().get(path).cloned()
    }

    /// Replaces one file (`None` removes it), as another writer would.
    pub fn put(&self, path: &str, bytes: Option<Vec<u8>>) {
        let revision = self.revision.get() + 1;
        self.revision.set(revision);
        self.written.borrow_mut().insert(path.to_owned(), revision);
        let mut files = self.files.borrow_mut();
        match bytes {
            Some(b) => {
                files.insert(path.to_owned(), b);
            }
            None => {
                files.remove(path);
            }
        }
    }

    /// Adds the directories not there yet; returns those it added, in order.
    fn add_dirs(&self, dirs: &[&str]) -> Vec<String> {
        let mut have = self.dirs.borrow_mut();
        let mut added = Vec::new();
        for dir in dirs {
            if !have.iter().any(|d| d == dir) {
                have.push((*dir).to_owned());
                added.push((*dir).to_owned());
            }
        }
        added
    }

    /// The body of every ledger update, compiled once per kind (the generic method only
    /// wraps it: the wasm package carries one copy, not one per command).
    fn update_once<K: LedgerKind>(
        &self,
        issue: u32,
        decide: &mut dyn FnMut(Option<K::Ledger>) -> Result<Option<K::Ledger>, ClarifyError>,
    ) -> Result<(), ClarifyError> {
        let path = K::path(issue);
        let current = self
            .text(&path)
            .map(|bytes| K::parse_issue(issue, &bytes))
            .transpose()?;
        if let Some(ledger) = decide(current)? {
            self.add_dirs(&paths::STATE_DIRS);
            self.put(&path, Some(K::print(&ledger).into_bytes()));
        }
        Ok(())
    }

    fn text(&self, path: &str) -> Option<Vec<u8>> {
        self.files.borrow().get(path).cloned()
    }

    /// The files directly in `dir` (a path ending in `/`): their names there and bytes.
    pub(crate) fn files_in(&self, dir: &str) -> Vec<(String, Vec<u8>)> {
        let files = self.files.borrow();
        files
            .with_prefix(dir)
            .filter_map(|(path, bytes)| {
                let name = path.strip_prefix(dir).filter(|n| !n.contains('/'))?;
                Some((name.to_owned(), bytes.clone()))
            })
            .collect()
    }

    /// Ledger files (`issue-<n>.json`) of `dir`, ascending by issue number.
    pub(crate) fn issue_files(&self, dir: &str) -> Vec<(u64, String, Vec<u8>)> {
        let mut out: Vec<(u64, String, Vec<u8>)> = self
            .files_in(dir)
            .into_iter()
            .filter_map(|(name, bytes)| issue_of_file_name(&name).map(|n| (n, name, bytes)))
            .collect();
        // Path order is not issue order (issue-10 before issue-2).
        agentx_clarify_core::stable_sort::sort_by_key(&mut out, |(n, _, _)| *n);
        out
    }
}
