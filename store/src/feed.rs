//! The file store's change feed (docs/protocol.md §21). Every write replaces a file by rename,
//! which changes its directory's stamp: a look costs three `stat`s (the state directory and
//! the two ledger directories), and only when one moved are the ledgers' stamps listed to
//! name the issues. Any process's write shows: the CLI, an MCP server, `agentx serve`, the
//! extension. Only metadata is looked at, never a file's contents.
//!
//! The revision is the cursor's own count of the changes it saw: files carry no revision,
//! and a count is monotone and opaque, which is all a reader may assume.
//!
//! A reader need not look on a timer: the cursor's wake (`watch.rs`) fires on the kernel's
//! file events in the state directories, and the look above stays the check.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::time::SystemTime;

use agentx_clarify_command::paths::CLARIFICATIONS_DIR;
use agentx_clarify_command::paths::DELEGATIONS_DIR;
use agentx_clarify_command::paths::STATE_DIR;
use agentx_clarify_command::paths::STATUS;
use agentx_clarify_core::verify::issue_of_file_name;

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
    pub(crate) revision: u64,
    pub(crate) dir_stamps: Vec<Option<Stamp>>,
    /// Each state file (relative path) and its stamp.
    pub(crate) files: BTreeMap<String, Stamp>,
    /// The last look saw a change: look at the files once more even if the directories look
    /// the same (a second write in the same clock tick leaves a directory's stamp as it was).
    pub(crate) settling: bool,
    /// The file watch behind [`State::wake`](agentx_clarify_command::State::wake), once a
    /// reader asked for it (`Err`: it could not start; said once in the log).
    pub(crate) watching: Option<Result<crate::watch::Watching, String>>,
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
            watching: None,
        }
    }

    pub(crate) fn dir_stamps(&self) -> Vec<Option<Stamp>> {
        DIRS.iter().map(|d| stamp(&self.path(d))).collect()
    }

    /// Every state file's stamp: the statuses and each ledger of either kind.
    pub(crate) fn state_stamps(&self) -> BTreeMap<String, Stamp> {
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
