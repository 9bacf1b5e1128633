//! The workspace pass: every ledger (and the index rebuilt from what it read), or only the
//! ledgers the index marks (the monitor that follows a command).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use agentx_clarify_command::store::ledgers::{read_bytes, Clarifications};
use agentx_clarify_command::{LedgerRead, Scope};
use agentx_clarify_core::monitor::follow::{follow_keys, FollowKeys};
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::{ClarifyError, Ledger};

use crate::index::{minus, paths_of, Found, Index, Selected};
use crate::{file_name, parallel_map, read, DiskStore, FileLock, LockPolicy};

/// A ledger's key files, relative to the index directory.
type Keys = Vec<PathBuf>;

/// Whether a read ledger keeps a marker: it can need action, or it must keep being reported.
fn found(read: &LedgerRead) -> Found {
    match &read.ledger {
        Ok(ledger) if !may_act(ledger) => Found::Finished,
        _ => Found::Marked,
    }
}

/// The follow-up's keys (`index::paths_of`) of ledger `issue` as it stands (`None`: none).
pub(crate) fn ledger_keys(issue: u64, ledger: Option<&Ledger>) -> Vec<PathBuf> {
    paths_of(issue, ledger.and_then(follow_keys).as_ref())
}

/// The keys of a ledger as a read found it: one that could not be read is due at once, so
/// every follow-up keeps reporting it.
pub(crate) fn read_keys<E>(issue: u64, ledger: Result<&Ledger, E>) -> Vec<PathBuf> {
    match ledger {
        Ok(l) => ledger_keys(issue, Some(l)),
        Err(_) => paths_of(issue, Some(&FollowKeys::unreadable())),
    }
}

/// Pruning never waits long for a lock nor breaks one by age: it is housekeeping.
const PRUNE_POLICY: LockPolicy = LockPolicy {
    timeout_ms: 100,
    stale_ms: u64::MAX,
};

impl DiskStore {
    /// The clarification ledgers `scope` names: those the index selects for a follow-up,
    /// else every ledger (and the index rebuilt from what was read).
    pub(crate) fn scan_clarifications<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: &(impl Fn(LedgerRead) -> R + Sync),
    ) -> Result<Vec<R>, ClarifyError> {
        if let Scope::FollowUp {
            written,
            held,
            now,
            candidates,
        } = scope
        {
            if let Some(selected) = self.index.follow(now, candidates) {
                let Selected { mut issues, seen } = selected;
                match (written.map(u64::from), held) {
                    (Some(n), true) => issues.remove(&n),
                    (Some(n), false) => issues.insert(n),
                    (None, _) => false,
                };
                // Not listing the directory is the point (its size is the finished work):
                // temp files left by crashed writers wait for the next full pass's sweep.
                *self
                    .listed_temps
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(Vec::new());
                return Ok(self.scan_marked(issues, written, &seen, visit));
            }
        }
        self.scan_all(visit, !matches!(scope, Scope::MonitorDryRun | Scope::Read))
    }

    fn ledger_file(&self, issue: u64) -> PathBuf {
        self.clarifications_dir()
            .join(format!("issue-{issue}.json"))
    }

    /// Every ledger, ascending; with `repair`, the index is rebuilt (or checked) from what was
    /// read. Without it nothing is written (a dry run): checking the index's markers and keys
    /// against every ledger was a fifth of a 10,000-ledger pass (docs/benchmarks.md).
    pub(crate) fn scan_all<R: Send>(
        &self,
        visit: &(impl Fn(LedgerRead) -> R + Sync),
        repair: bool,
    ) -> Result<Vec<R>, ClarifyError> {
        // Only a workspace with ledgers gets an index (a pass in an empty directory creates
        // nothing).
        let rebuild = (repair && self.clarifications_dir().is_dir())
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
                let read = read_bytes::<Clarifications>(*n, bytes);
                let found = found(&read);
                let keys = rebuild
                    .is_some()
                    .then(|| read_keys(*n, read.ledger.as_ref()));
                (visit(read), (found, keys))
            })
        });
        let (out, keys): (Vec<(R, Found)>, Vec<Option<Keys>>) = out
            .into_iter()
            .map(|(r, (found, keys))| ((r, found), keys))
            .unzip();
        if let Some(rebuild) = rebuild {
            let keys: BTreeMap<u64, Vec<PathBuf>> = listing
                .ledgers
                .iter()
                .zip(keys)
                .map(|((n, _), k)| (*n, k.unwrap_or_default()))
                .collect();
            let (superfluous, extra_keys) =
                self.index
                    .finish_rebuild(&rebuild, &found_by_issue(&listing.ledgers, &out), &keys);
            self.prune(&superfluous);
            self.prune_keys(extra_keys);
        }
        Ok(out.into_iter().map(|(r, _)| r).collect())
    }

    /// The marked ledgers and the one just written, ascending.
    ///
    /// `seen`: the keys that named each issue; those its ledger no longer wants are pruned.
    pub(crate) fn scan_marked<R: Send>(
        &self,
        issues: BTreeSet<u64>,
        written: Option<u32>,
        seen: &BTreeMap<u64, Vec<PathBuf>>,
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
                let extra = |keys: Vec<PathBuf>| {
                    seen.get(n).map(|had| minus(had, &keys)).unwrap_or_default()
                };
                let read = match read::read_if_exists(path, buf) {
                    Ok(false) => return ((None, Found::Finished), extra(Vec::new())),
                    Ok(true) => read_bytes::<Clarifications>(*n, Ok(buf.as_slice())),
                    Err(e) => read_bytes::<Clarifications>(*n, Err(e)),
                };
                let found = found(&read);
                let extra = if seen.contains_key(n) {
                    extra(read_keys(*n, read.ledger.as_ref()))
                } else {
                    Vec::new()
                };
                ((Some(visit(read)), found), extra)
            })
        });
        let (out, extra): (Vec<(Option<R>, Found)>, Vec<Keys>) = out.into_iter().unzip();
        // The ledger just written had its marker set or removed by its writer, under its lock.
        self.prune(&finished(&files, &out, written.map(u64::from)));
        let extra: BTreeMap<u64, Vec<PathBuf>> = files
            .iter()
            .zip(extra)
            .filter(|(_, e)| !e.is_empty())
            .map(|((n, _), e)| (*n, e))
            .collect();
        self.prune_keys(extra);
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

impl DiskStore {
    /// Removes the keys a pass found superfluous, each re-checked under its ledger's lock.
    fn prune_keys(&self, extra: BTreeMap<u64, Vec<PathBuf>>) {
        prune_keys(
            &self.index,
            extra,
            |issue| Some(self.ledger_file(issue)),
            |issue, path, bytes| match (bytes, u32::try_from(issue)) {
                (None, _) => Vec::new(),
                (Some(bytes), Ok(n)) => read_keys(
                    issue,
                    Ledger::parse(&file_name(path), bytes, Some(n)).as_ref(),
                ),
                (Some(_), Err(_)) => read_keys::<()>(issue, Err(())),
            },
        );
    }
}

/// Removes `index`'s keys in `extra` that their ledger (at `path_of`) does not want now by
/// its bytes (`keys_of`; `None`: no ledger), each re-checked under the ledger's lock (a
/// writer may have just added them). Housekeeping: a lock not granted at once leaves them.
pub(crate) fn prune_keys(
    index: &Index,
    extra: BTreeMap<u64, Vec<PathBuf>>,
    path_of: impl Fn(u64) -> Option<PathBuf>,
    keys_of: impl Fn(u64, &Path, Option<&[u8]>) -> Vec<PathBuf>,
) {
    if extra.is_empty() {
        return;
    }
    let _session = index.begin();
    for (issue, keys) in extra {
        let Some(path) = path_of(issue) else {
            index.drop_keys(&keys);
            continue;
        };
        let Ok(_lock) = FileLock::acquire(&path, "monitor", PRUNE_POLICY) else {
            continue;
        };
        let want = read::with_buffer(|buf| match read::read_if_exists(&path, buf) {
            Ok(false) => Some(keys_of(issue, &path, None)),
            Ok(true) => Some(keys_of(issue, &path, Some(buf))),
            Err(_) => None,
        });
        if let Some(want) = want {
            index.drop_keys(&minus(&keys, &want));
        }
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
