//! The index of active records (docs/protocol.md §19), so the monitor that follows a command reads only
//! the ledgers that can need action — `agentx_clarify_core::monitor::may_act`: a ledger with
//! a pending, stale or answered record — plus those a pass could not read (they stay in its
//! `errors`), instead of every ledger of every finished issue.
//!
//! On disk, under `.agentx/index/` (a cache: deleting it costs one full pass):
//! - `active/issue-<n>.json`: one empty marker per such ledger. A writer maintains its ledger's
//!   marker under the ledger's own lock — created (durable against a process crash at once, and
//!   against a power cut by the stamp's boot, `stamp.rs`) *before* a ledger that can
//!   need action is written, removed *after* one that cannot is — so a crash at any instant
//!   leaves the markers a superset of what they must name, never less. No lock is shared
//!   between writers of different issues.
//! - `stamp`: the clarifications directory's identity and modification time when the markers
//!   were last known complete (see `stamp.rs`), updated under the kernel lock on `lock`.
//! - `writers`: every writer of this store holds a shared kernel lock on it while it works; a
//!   directory changed while one of them is at work is taken to be theirs.
//!
//! Delegation ledgers have an index of their own in `.agentx/index/delegations/`, the same
//! layout over the delegations directory: a marker per ledger with an accepted delegation
//! that can time out (`agentx_clarify_core::delegation::next_wakeup`), or that could not be
//! read, so the monitor's timeout phase after a command reads only those.
//!
//! - `due/`, `cycle/`, `asker/`: the keys of the monitor that follows a command (docs/protocol.md §29,
//!   `keys.rs`): it reads only the ledgers due now, on a wait-for cycle, or asked by an agent
//!   whose status may abandon them, not every ledger with an active record.
//!
//! Markers that name a ledger which no longer needs them (another tool finished it, a hand
//! fixed a corrupt file) are removed when a pass finds them so, under the ledger's lock.

mod keys;
mod stamp;

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use agentx_clarify_core::ClarifyError;

use crate::io_error;
pub(crate) use keys::{minus, paths_of, Selected};
use stamp::{DirStamp, Stamp};

/// Where the index lives, relative to the workspace root.
pub const INDEX_DIR: &str = ".agentx/index/";

/// The index of one workspace.
#[derive(Debug)]
pub(crate) struct Index {
    /// `.agentx/index/`.
    dir: PathBuf,
    /// The clarifications directory it indexes.
    ledgers: PathBuf,
    /// Its writers journal what they wrote for the search index (clarifications only).
    journal: bool,
}

/// What a full pass learnt about one ledger file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Readable and without an active record: no marker.
    Finished,
    /// Has an active record, or could not be read: a marker.
    Marked,
}

/// A rebuild under way: what the stamp must still say at the end for the rebuild to validate.
#[derive(Debug)]
pub(crate) struct Rebuild {
    invalidations: u64,
    dir: Option<DirStamp>,
}

/// A writer at work: it holds the shared lock on `writers`, and on drop it advances the stamp
/// over its own changes to the directory — if the directory was as the stamp says when it
/// began (or another writer was at work then).
pub(crate) struct Session<'a> {
    index: &'a Index,
    clean: bool,
    _shared: Option<File>,
}

impl Index {
    /// The index of clarification ledgers: `.agentx/index/`.
    pub(crate) fn new(root: &Path, ledgers: PathBuf) -> Index {
        Index {
            dir: root.join(INDEX_DIR),
            ledgers,
            journal: true,
        }
    }

    /// The index of delegation ledgers with an accepted delegation that can time out:
    /// `.agentx/index/delegations/`, the same layout for the delegations directory.
    pub(crate) fn for_delegations(root: &Path, ledgers: PathBuf) -> Index {
        Index {
            dir: root.join(INDEX_DIR).join("delegations"),
            ledgers,
            journal: false,
        }
    }

    fn markers(&self) -> PathBuf {
        self.dir.join("active")
    }

    fn marker(&self, issue: u64) -> PathBuf {
        self.markers().join(format!("issue-{issue}.json"))
    }

    fn stamp_path(&self) -> PathBuf {
        self.dir.join("stamp")
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join("lock")
    }

    /// Creates the index's directories (and a `.gitignore`: it is a local cache, never
    /// shared), once the workspace has a clarifications directory. docs/protocol.md §31: a cloned
    /// repository may plant links here (git keeps them), so every directory is checked to be
    /// a real one and the `.gitignore` is created new without following a link — a link is
    /// refused by name, never written through.
    pub(crate) fn ensure(&self) -> Result<(), ClarifyError> {
        let markers = self.markers();
        if crate::inside::check_dir(&markers)? {
            return Ok(());
        }
        crate::inside::make_dir(&self.dir)?;
        crate::inside::write_new(
            &self.dir.join(".gitignore"),
            b"*\n",
            crate::atomic::NEW_FILE_MODE,
        )?;
        crate::inside::make_dir(&markers)
    }

    /// Whether another writer holds its shared lock on `writers` (one that died released it).
    fn writers_busy(&self) -> bool {
        let Ok(file) = stamp::open_rw(&self.dir.join("writers")) else {
            return false;
        };
        // Our exclusive attempt fails exactly while someone holds a shared one.
        file.try_lock().is_err()
    }

    /// Starts a writer's session (best effort: without an index, nothing to keep).
    pub(crate) fn begin(&self) -> Session<'_> {
        let mut session = Session {
            index: self,
            clean: false,
            _shared: None,
        };
        if self.ensure().is_err() {
            return session;
        }
        let stamp = stamp::read(&self.lock_path(), &self.stamp_path());
        let now = DirStamp::of(&self.ledgers);
        session.clean = stamp.matches(now) || (stamp.valid && self.writers_busy());
        if stamp.valid && !session.clean {
            // Someone who keeps no index changed the directory since: until a rebuild, the
            // markers may miss a ledger, and no writer may claim otherwise.
            self.invalidate();
        }
        if let Ok(file) = stamp::open_rw(&self.dir.join("writers")) {
            if file.lock_shared().is_ok() {
                session._shared = Some(file);
            }
        }
        session
    }

    fn invalidate(&self) {
        let _ = stamp::update(&self.lock_path(), &self.stamp_path(), |s| {
            s.valid.then_some(Stamp {
                valid: false,
                dir: s.dir,
                invalidations: s.invalidations + 1,
                boot: s.boot,
            })
        });
    }

    /// The search index's journal (docs/protocol.md §36): the issue of every ledger this
    /// store's writers wrote, one per line, appended after the write and before the session
    /// advances the stamp. While the stamp explains the directory, the journal names every
    /// ledger written since the search index's commit, so a search reads those instead of
    /// listing the directory.
    pub(crate) fn journal_path(&self) -> PathBuf {
        self.dir.join("search-journal")
    }

    /// Journals a write of ledger `issue`. A journal that cannot be appended to must not be
    /// trusted: the stamp is invalidated, and searches list the directory until a rebuild.
    pub(crate) fn journal_written(&self, issue: u32) {
        if !self.journal {
            return;
        }
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let appended = self.ensure().is_ok()
            && std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(crate::atomic::NEW_FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW)
                .open(self.journal_path())
                .and_then(|mut f| f.write_all(format!("{issue}\n").as_bytes()))
                .is_ok();
        if !appended {
            self.invalidate();
        }
    }

    /// The stamp's count of invalidations when it explains the directory as it is now:
    /// every change since is by this store's writers, each finished and journalled.
    #[cfg_attr(not(feature = "fulltext"), allow(dead_code))]
    pub(crate) fn explained(&self) -> Option<u64> {
        let stamp = stamp::read(&self.lock_path(), &self.stamp_path());
        stamp
            .matches(DirStamp::of(&self.ledgers))
            .then_some(stamp.invalidations)
    }

    /// Records that ledger `issue` can need action, durably, before the ledger is written.
    pub(crate) fn mark(&self, issue: u64) -> Result<(), ClarifyError> {
        let path = self.marker(issue);
        if path.exists() {
            return Ok(());
        }
        self.ensure()?;
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(crate::atomic::NEW_FILE_MODE)
            .open(&path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(e) => return Err(io_error("create", &path, &e)),
        }
        // The marker must outlive a crash whenever the ledger write that follows does: a
        // process crash leaves it in the page cache, and a power cut is a new boot, whose
        // index is rebuilt (`stamp.rs`); only where the boot is unknown is it synced.
        if !stamp::must_sync() {
            return Ok(());
        }
        File::open(self.markers())
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error("sync", &self.markers(), &e))
    }

    /// Removes ledger `issue`'s marker (after a write that left it finished). Best effort: a
    /// marker too many costs one read.
    pub(crate) fn unmark(&self, issue: u64) {
        let _ = std::fs::remove_file(self.marker(issue));
    }

    /// Whether the index can be trusted: the stamp is valid and the directory is as it says,
    /// or a writer is at work.
    fn is_trusted(&self) -> bool {
        let stamp = stamp::read(&self.lock_path(), &self.stamp_path());
        stamp.valid && (stamp.matches(DirStamp::of(&self.ledgers)) || self.writers_busy())
    }

    /// The marked issues, ascending (a marker's name is its issue's canonical decimal: no
    /// two name one issue).
    fn marked_sorted(&self) -> Option<Vec<u64>> {
        let entries = std::fs::read_dir(self.markers()).ok()?;
        let mut issues: Vec<u64> = entries
            .flatten()
            .filter_map(|e| {
                agentx_clarify_core::verify::issue_of_file_name(e.file_name().to_str()?)
            })
            .collect();
        issues.sort_unstable();
        Some(issues)
    }

    /// Begins a rebuild, before the pass lists the directory: unless the stamp is valid and
    /// matches, it is invalidated first, so that no writer advances it over markers the
    /// rebuild has yet to add.
    pub(crate) fn begin_rebuild(&self) -> Option<Rebuild> {
        self.ensure().ok()?;
        let mut rebuild = None;
        stamp::update(&self.lock_path(), &self.stamp_path(), |s| {
            let dir = DirStamp::of(&self.ledgers);
            if s.matches(dir) {
                rebuild = Some(Rebuild {
                    invalidations: s.invalidations,
                    dir,
                });
                return None;
            }
            let invalid = Stamp {
                valid: false,
                dir: s.dir,
                invalidations: if s.valid {
                    s.invalidations + 1
                } else {
                    s.invalidations
                },
                boot: s.boot,
            };
            rebuild = Some(Rebuild {
                invalidations: invalid.invalidations,
                dir,
            });
            Some(invalid)
        })
        .ok()?;
        rebuild
    }

    /// Ends a rebuild with what the pass found: markers for every marked ledger, then the
    /// stamp as it was when the pass began (unless someone invalidated it meanwhile). Returns
    /// the issues whose markers the pass found superfluous, for [`Index::prune`].
    ///
    /// `found` is ascending by issue, one entry per issue, as a pass lists the directory: the
    /// markers are matched against it in one merge, not looked up one by one (a pass over
    /// 10,000 ledgers runs this on one thread after the parallel part).
    ///
    /// `keys` are the keys (`keys::paths_of`) of every ledger the pass read, by issue: the
    /// missing ones are added; those on disk that no ledger wants are returned, by issue, for
    /// pruning under each ledger's lock (a writer may have just added them).
    pub(crate) fn finish_rebuild(
        &self,
        rebuild: &Rebuild,
        found: &[(u64, Found)],
        keys: &BTreeMap<u64, Vec<PathBuf>>,
    ) -> (Vec<u64>, BTreeMap<u64, Vec<PathBuf>>) {
        let mut extra_keys = self.all_keys();
        let mut missing = Vec::new();
        for (issue, want) in keys {
            let have = extra_keys.remove(issue).unwrap_or_default();
            missing.extend(minus(want, &have));
            let extra = minus(&have, want);
            if !extra.is_empty() {
                extra_keys.insert(*issue, extra);
            }
        }
        // Best effort, before the stamp validates: a key that could not be made leaves the
        // stamp invalid, so the next follow-up reads everything again.
        let keys_made = self.put_keys(&missing).is_ok();
        let have = self.marked_sorted().unwrap_or_default();
        let mut added = false;
        let mut superfluous = Vec::new();
        let mut markers = have.iter().copied().peekable();
        for &(issue, what) in found {
            // Markers of issues the pass did not list (their ledger is gone).
            while let Some(gone) = markers.next_if(|m| *m < issue) {
                superfluous.push(gone);
            }
            let marked = markers.next_if_eq(&issue).is_some();
            match (what, marked) {
                (Found::Marked, false) => {
                    added |= matches!(
                        crate::inside::create_new(
                            &self.marker(issue),
                            crate::atomic::NEW_FILE_MODE
                        ),
                        Ok(Some(_))
                    );
                }
                (Found::Finished, true) => superfluous.push(issue),
                _ => {}
            }
        }
        superfluous.extend(markers);
        if added && stamp::must_sync() {
            let _ = File::open(self.markers()).and_then(|d| d.sync_all());
        }
        // A stamp still valid was valid all along (a pass that found the markers complete, or
        // writers advanced it since): it stays. An invalid one is validated only if nobody
        // invalidated it again while the pass was reading.
        let _ = stamp::update(&self.lock_path(), &self.stamp_path(), |s| {
            (keys_made
                && !s.valid
                && s.invalidations == rebuild.invalidations
                && rebuild.dir.is_some())
            .then_some(Stamp {
                valid: true,
                dir: rebuild.dir,
                invalidations: s.invalidations,
                boot: stamp::boot_id(),
            })
        });
        superfluous.sort_unstable();
        (superfluous, extra_keys)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if !self.clean {
            return;
        }
        let index = self.index;
        let _ = stamp::update(&index.lock_path(), &index.stamp_path(), |s| {
            s.valid.then(|| Stamp {
                valid: true,
                dir: DirStamp::of(&index.ledgers),
                invalidations: s.invalidations,
                boot: s.boot,
            })
        });
        // The shared lock on `writers` is released after the stamp moved (fields drop after
        // this body).
    }
}
