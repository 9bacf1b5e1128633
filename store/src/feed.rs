//! The file store's change feed (docs/protocol.md §21). Every write replaces a file by rename,
//! which changes its directory's stamp: a look costs three `stat`s (the state directory and
//! the two ledger directories), and only when one moved are the ledgers' stamps listed to
//! name the issues. Any process's write shows: the CLI, an MCP server, `agentx serve`, the
//! extension. Only metadata is looked at, never a file's contents.
//!
//! The revision is the cursor's own count of the changes it saw: files carry no revision,
//! and a count is monotone and opaque, which is all a reader may assume.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agentx_clarify_command::paths::{CLARIFICATIONS_DIR, DELEGATIONS_DIR, STATE_DIR, STATUS};
use agentx_clarify_command::{Changed, FeedStore};
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;

use crate::DiskStore;

type Stamp = (SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.modified().ok()?, m.len(), m.ino()))
}

/// Where a reader of the file store stands: the stamps it last saw.
#[derive(Debug)]
pub struct DiskCursor {
    revision: u64,
    dir_stamps: Vec<Option<Stamp>>,
    /// Each state file (relative path) and its stamp.
    files: BTreeMap<String, Stamp>,
    /// The last look saw a change: look at the files once more even if the directories look
    /// the same (a second write in the same clock tick leaves a directory's stamp as it was).
    settling: bool,
}

const DIRS: [&str; 3] = [STATE_DIR, CLARIFICATIONS_DIR, DELEGATIONS_DIR];

impl DiskStore {
    /// A cursor at the files as they are now (making one cannot fail: it is their stamps).
    pub fn cursor(&self) -> DiskCursor {
        DiskCursor {
            revision: 0,
            dir_stamps: self.dir_stamps(),
            files: self.state_stamps(),
            settling: false,
        }
    }

    fn dir_stamps(&self) -> Vec<Option<Stamp>> {
        DIRS.iter().map(|d| stamp(&self.path(d))).collect()
    }

    /// Every state file's stamp: the statuses and each ledger of either kind.
    fn state_stamps(&self) -> BTreeMap<String, Stamp> {
        let mut out = BTreeMap::new();
        if let Some(s) = stamp(&self.path(STATUS)) {
            out.insert(STATUS.to_owned(), s);
        }
        for dir in [CLARIFICATIONS_DIR, DELEGATIONS_DIR] {
            let Ok(entries) = std::fs::read_dir(self.path(dir)) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name();
                let Some(name) = name.to_str() else { continue };
                if issue_of_file_name(name).is_none() {
                    continue;
                }
                let path: PathBuf = e.path();
                if let Some(s) = stamp(&path) {
                    out.insert(format!("{dir}{name}"), s);
                }
            }
        }
        out
    }
}

impl FeedStore for DiskStore {
    type Cursor = DiskCursor;

    fn feed(&self) -> Result<DiskCursor, ClarifyError> {
        Ok(self.cursor())
    }

    fn revision(&self, cursor: &DiskCursor) -> u64 {
        cursor.revision
    }

    fn changes(&self, cursor: &mut DiskCursor) -> Result<Option<Changed>, ClarifyError> {
        let now = self.dir_stamps();
        let moved = now != cursor.dir_stamps;
        // A directory changed within the clock's granularity of the last look may change
        // again without its stamp moving: its files are compared until it is older.
        let recent = now.iter().flatten().any(|s| {
            s.0.elapsed()
                .map_or(true, |age| age < std::time::Duration::from_secs(1))
        });
        if !moved && !cursor.settling && !recent {
            return Ok(None);
        }
        cursor.dir_stamps = now;
        let files = self.state_stamps();
        let mut changed = Changed::default();
        let mut any = false;
        for (path, s) in &files {
            if cursor.files.get(path) != Some(s) {
                changed.add_path(path);
                any = true;
            }
        }
        for path in cursor.files.keys().filter(|p| !files.contains_key(*p)) {
            changed.add_path(path);
            any = true;
        }
        cursor.files = files;
        cursor.settling = moved || any;
        if !any {
            return Ok(None);
        }
        cursor.revision += 1;
        changed.revision = cursor.revision;
        Ok(changed.finish())
    }
}
