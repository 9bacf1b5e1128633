//! The workspace pass: every ledger (and the index rebuilt from what it read), or only the
//! ledgers the index marks (the monitor that follows a command).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use agentx_clarify_command::paths::ledger_read;
use agentx_clarify_command::LedgerRead;
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::index::{Found, Index};
use crate::{file_name, parallel_map, read, DiskStore, FileLock, LockPolicy};

/// Whether a read ledger keeps a marker: it can need action, or it must keep being reported.
fn found(read: &LedgerRead) -> Found {
    match &read.ledger {
        Ok(ledger) if !may_act(ledger) => Found::Finished,
        _ => Found::Marked,
    }
}

/// Pruning never waits long for a lock nor breaks one by age: it is housekeeping.
const PRUNE_POLICY: LockPolicy = LockPolicy {
    timeout_ms: 100,
    stale_ms: u64::MAX,
};

impl DiskStore {
    fn ledger_file(&self, issue: u64) -> PathBuf {
        self.clarifications_dir()
            .join(format!("issue-{issue}.json"))
    }

    /// Every ledger, ascending; the index is rebuilt (or checked) from what was read.
    pub(crate) fn scan_all<R: Send>(
        &self,
        visit: &(impl Fn(LedgerRead) -> R + Sync),
    ) -> Result<Vec<R>, ClarifyError> {
        // Only a workspace with ledgers gets an index (a pass in an empty directory creates
        // nothing).
        let rebuild = self
            .clarifications_dir()
            .is_dir()
            .then(|| self.index.begin_rebuild())
            .flatten();
        let listing = self.list_clarifications()?;
        *self
            .listed_temps
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(listing.temp_files);
        let out = parallel_map(&listing.ledgers, |(n, path)| {
            read::with_buffer(|buf| {
                let bytes = read::read_into(path, buf).map(|()| buf.as_slice());
                let read = ledger_read(*n, file_name(path), bytes);
                let found = found(&read);
                (visit(read), found)
            })
        });
        if let Some(rebuild) = rebuild {
            let superfluous = self
                .index
                .finish_rebuild(&rebuild, &found_by_issue(&listing.ledgers, &out));
            self.prune(&superfluous);
        }
        Ok(out.into_iter().map(|(r, _)| r).collect())
    }

    /// The marked ledgers and the one just written, ascending.
    pub(crate) fn scan_marked<R: Send>(
        &self,
        issues: BTreeSet<u64>,
        written: Option<u32>,
        visit: &(impl Fn(LedgerRead) -> R + Sync),
    ) -> Vec<R> {
        // No listing, so no temp files to sweep: full passes do that.
        *self
            .listed_temps
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Vec::new());
        let files: Vec<(u64, PathBuf)> = issues
            .into_iter()
            .map(|n| (n, self.ledger_file(n)))
            .collect();
        let out = parallel_map(&files, |(n, path)| {
            read::with_buffer(|buf| {
                let read = match read::read_if_exists(path, buf) {
                    Ok(false) => return (None, Found::Finished),
                    Ok(true) => ledger_read(*n, file_name(path), Ok(buf.as_slice())),
                    Err(e) => ledger_read(*n, file_name(path), Err(e)),
                };
                let found = found(&read);
                (Some(visit(read)), found)
            })
        });
        // The ledger just written had its marker set or removed by its writer, under its lock.
        self.prune(&finished(&files, &out, written.map(u64::from)));
        out.into_iter().filter_map(|(r, _)| r).collect()
    }

    /// Removes the markers of ledgers found finished (or gone), each re-checked under the
    /// ledger's lock: a writer may have just made it active again.
    fn prune(&self, issues: &[u64]) {
        prune_markers(
            &self.index,
            issues,
            |issue| Some(self.ledger_file(issue)),
            |issue, path, bytes| {
                u32::try_from(issue).is_ok_and(|n| {
                    Ledger::parse(&file_name(path), bytes, Some(n)).is_ok_and(|l| !may_act(&l))
                })
            },
        );
    }
}

/// What a pass over `files` found of each, by issue (`out` is its result, file by file).
pub(crate) fn found_by_issue<R>(files: &[(u64, PathBuf)], out: &[(R, Found)]) -> Vec<(u64, Found)> {
    files
        .iter()
        .zip(out)
        .map(|((n, _), (_, f))| (*n, *f))
        .collect()
}

/// The issues a pass over marked `files` found finished (or gone), but `except`: their
/// markers are superfluous.
pub(crate) fn finished<R>(
    files: &[(u64, PathBuf)],
    out: &[(R, Found)],
    except: Option<u64>,
) -> Vec<u64> {
    found_by_issue(files, out)
        .into_iter()
        .filter(|&(n, f)| f == Found::Finished && Some(n) != except)
        .map(|(n, _)| n)
        .collect()
}

/// Removes `index`'s markers of `issues` whose ledger (at `path_of`; `None`: no valid number,
/// the marker simply goes) is gone or `finished` by its bytes, each re-checked under the
/// ledger's lock. Pruning is housekeeping: a lock not granted at once leaves the marker.
pub(crate) fn prune_markers(
    index: &Index,
    issues: &[u64],
    path_of: impl Fn(u64) -> Option<PathBuf>,
    finished: impl Fn(u64, &Path, &[u8]) -> bool,
) {
    if issues.is_empty() {
        return;
    }
    // Lock files come and go in the ledgers' directory: a session says it was us.
    let _session = index.begin();
    for &issue in issues {
        let Some(path) = path_of(issue) else {
            index.unmark(issue);
            continue;
        };
        let Ok(_lock) = FileLock::acquire(&path, "monitor", PRUNE_POLICY) else {
            continue;
        };
        let gone_or_finished = read::with_buffer(|buf| match read::read_if_exists(&path, buf) {
            Ok(false) => true,
            Ok(true) => finished(issue, &path, buf),
            Err(_) => false,
        });
        if gone_or_finished {
            index.unmark(issue);
        }
    }
}
