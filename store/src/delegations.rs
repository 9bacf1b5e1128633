//! Delegations on disk (docs/protocol.md §18): `.agentx/state/delegations/issue-<n>.json`, written exactly
//! as clarification ledgers are — under the file's cross-process lock, atomically, read with
//! `O_NOFOLLOW`, never overwritten when it does not parse, indexed (`.agentx/index/delegations/`:
//! the ledgers with an accepted delegation that can time out) — and the capability manifests
//! `.agentx/agents/<name>.toml`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agentx_clarify_command::store::delegations::parse_delegations;
use agentx_clarify_command::store::delegations::DelegationRead;
use agentx_clarify_command::store::ledgers::{read_bytes, Delegations};
use agentx_clarify_command::{paths, Scope};
use agentx_clarify_core::delegation::next_wakeup;
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_core::Config;

use agentx_clarify_core::monitor::follow::FollowKeys;

use crate::index::minus;
use crate::index::paths_of;
use crate::index::Found;
use crate::index::Selected;
use crate::io_error;
use crate::parallel_map;
use crate::pass::finished;
use crate::pass::found_by_issue;
use crate::pass::prune_keys;
use crate::pass::prune_markers;
use crate::read;
use crate::read_into;
use crate::DiskStore;

impl DiskStore {
    /// `.agentx/state/delegations/issue-<n>.json`; `issue` is a validated number.
    pub fn delegation_path(&self, issue: u32) -> PathBuf {
        self.path(&paths::delegation_path(issue))
    }

    /// The delegation ledgers on disk, ascending by issue number (none when the directory
    /// does not exist yet).
    pub(crate) fn delegation_files(&self) -> Result<Vec<(u64, PathBuf)>, ClarifyError> {
        let dir = self.path(paths::DELEGATIONS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(u64, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let n = issue_of_file_name(entry.file_name().to_str()?)?;
                Some((n, entry.path()))
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// Removes temp files that crashed writers left among the delegation ledgers (best effort;
    /// after a monitor run that may write, like the clarifications' sweep).
    pub(crate) fn sweep_delegation_temps(&self, config: &Config) {
        crate::sweep::sweep_temp_files(
            &self.path(paths::DELEGATIONS_DIR),
            config.stale_lock_ms,
            &[],
        );
    }
}

/// Whether a read delegation ledger keeps a marker: it can time out, or it must keep being
/// reported.
pub(crate) fn found(read: &DelegationRead) -> Found {
    match &read.ledger {
        Ok(ledger) if next_wakeup(ledger).is_none() => Found::Finished,
        _ => Found::Marked,
    }
}

/// The follow-up's keys of a delegation ledger as read: due at its next deadline, or at once
/// when it could not be read.
pub(crate) fn delegation_keys<E>(issue: u64, ledger: Result<&DelegationLedger, E>) -> Vec<PathBuf> {
    let keys = match ledger {
        Ok(l) => next_wakeup(l).map(|t| FollowKeys::due_at(Some(t))),
        Err(_) => Some(FollowKeys::unreadable()),
    };
    paths_of(issue, keys.as_ref())
}

impl DiskStore {
    /// The delegation ledgers `scope` names: those due by a follow-up's `now`, else every
    /// ledger (and the index rebuilt from what was read; a workspace without delegations
    /// gets none).
    pub(crate) fn scan_delegation_files(
        &self,
        scope: Scope<'_>,
    ) -> Result<Vec<DelegationRead>, ClarifyError> {
        if let Scope::FollowUp { now, .. } = scope {
            if let Some(selected) = self.delegation_index.follow(now, &[]) {
                return Ok(self.scan_marked_delegations(selected));
            }
        }
        // Every ledger, and the index rebuilt from what was read (a workspace without
        // delegations gets none).
        let rebuild = (!matches!(scope, Scope::MonitorDryRun | Scope::Read)
            && self.path(paths::DELEGATIONS_DIR).is_dir())
        .then(|| self.delegation_index.begin_rebuild())
        .flatten();
        let files = self.delegation_files()?;
        let out = parallel_map(&files, |(n, path)| {
            read::with_buffer(|buf| {
                let bytes = read_into(path, buf).map(|()| buf.as_slice());
                let read = read_bytes::<Delegations>(*n, bytes);
                let found = crate::delegations::found(&read);
                (read, found)
            })
        });
        if let Some(rebuild) = rebuild {
            let keys: BTreeMap<u64, Vec<PathBuf>> = files
                .iter()
                .zip(&out)
                .map(|((n, _), (read, _))| {
                    (
                        *n,
                        crate::delegations::delegation_keys(*n, read.ledger.as_ref()),
                    )
                })
                .collect();
            let (superfluous, extra_keys) = self.delegation_index.finish_rebuild(
                &rebuild,
                &found_by_issue(&files, &out),
                &keys,
            );
            self.prune_delegations(&superfluous);
            self.prune_delegation_keys(extra_keys);
        }
        Ok(out.into_iter().map(|(r, _)| r).collect())
    }

    /// The delegation ledgers due by the follow-up's `now`, ascending; markers and keys found
    /// superfluous are pruned.
    pub(crate) fn scan_marked_delegations(&self, selected: Selected) -> Vec<DelegationRead> {
        let Selected { issues, seen } = selected;
        let files: Vec<(u64, PathBuf)> = issues
            .into_iter()
            .filter_map(|n| Some((n, self.delegation_path(u32::try_from(n).ok()?))))
            .collect();
        let out = parallel_map(&files, |(n, path)| {
            read::with_buffer(|buf| match read::read_if_exists(path, buf) {
                Ok(false) => (None, Found::Finished),
                Ok(true) => {
                    let read = read_bytes::<Delegations>(*n, Ok(buf.as_slice()));
                    let found = found(&read);
                    (Some(read), found)
                }
                Err(e) => (Some(read_bytes::<Delegations>(*n, Err(e))), Found::Marked),
            })
        });
        self.prune_delegations(&finished(&files, &out, None));
        let extra: BTreeMap<u64, Vec<PathBuf>> = files
            .iter()
            .zip(&out)
            .filter_map(|((n, _), (read, _))| {
                let want = read
                    .as_ref()
                    .map_or_else(Vec::new, |r| delegation_keys(*n, r.ledger.as_ref()));
                let extra = minus(seen.get(n)?, &want);
                (!extra.is_empty()).then_some((*n, extra))
            })
            .collect();
        self.prune_delegation_keys(extra);
        out.into_iter().filter_map(|(r, _)| r).collect()
    }

    /// Removes the delegation keys a pass found superfluous, each re-checked under the
    /// ledger's lock.
    pub(crate) fn prune_delegation_keys(&self, extra: BTreeMap<u64, Vec<PathBuf>>) {
        prune_keys(
            &self.delegation_index,
            extra,
            |issue| Some(self.delegation_path(u32::try_from(issue).ok()?)),
            |issue, _, bytes| match (bytes, u32::try_from(issue)) {
                (None, _) => Vec::new(),
                (Some(bytes), Ok(n)) => {
                    delegation_keys(issue, parse_delegations(n, bytes).as_ref())
                }
                (Some(_), Err(_)) => delegation_keys::<()>(issue, Err(())),
            },
        );
    }

    /// Removes the markers of delegation ledgers found finished (or gone), each re-checked
    /// under the ledger's lock: a writer may have just accepted a delegation in it.
    pub(crate) fn prune_delegations(&self, issues: &[u64]) {
        prune_markers(
            &self.delegation_index,
            issues,
            |issue| Some(self.delegation_path(u32::try_from(issue).ok()?)),
            |issue, _, bytes| {
                u32::try_from(issue).is_ok_and(|n| {
                    parse_delegations(n, bytes).is_ok_and(|l| next_wakeup(&l).is_none())
                })
            },
        );
    }
}
