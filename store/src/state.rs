//! The state side of the workspace directory (docs/protocol.md §21): ledgers of both kinds
//! under `.agentx/state/`, each changed under its lock file and replaced by an atomic rename,
//! the agent statuses, routing leases beside the ledgers, and the change feed from file
//! stamps. Every read goes through the one reader (`read.rs`) that refuses FIFOs, devices and
//! links.

use std::sync::PoisonError;

use agentx_clarify_command::store::docs::{checked_doc, doc_path};
use agentx_clarify_command::store::ledgers::{DueTimes, Ledgers, Read};
use agentx_clarify_command::{paths, Changed, LeaseTake, RawLedger, Scope, State, Wake};
use agentx_clarify_core::agents::{parse_statuses, statuses_to_json, Statuses};
use agentx_clarify_core::{ClarifyError, Config};

use crate::atomic::refuse_symlink;
use crate::kinds::DiskKind;
use crate::lock::{break_stale, remove_if_ours};
use crate::{
    file_name, inside, parallel_map, read, read_into, sweep, write_atomic, write_private,
    DiskCursor, DiskLease, DiskStore, FileLock,
};

/// Both kinds of ledger, written once: each changed under its file's lock, replaced by an
/// atomic rename, and its index markers and keys moved in the same step (`kinds.rs` names
/// what differs between the kinds).
impl<K: DiskKind> Ledgers<K> for DiskStore {
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError> {
        read::read_existing(&self.path(&K::path(issue)), |bytes| {
            K::parse_issue(issue, bytes)
        })
    }

    fn has(&self, issue: u32) -> Result<bool, ClarifyError> {
        read::is_regular(&self.path(&K::path(issue)))
    }

    fn update<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let path = self.ledger_dir_made::<K>(issue)?;
        let index = K::index(self);
        // Dropped last: the session accounts for the lock file's coming and going too.
        let _session = index.begin();
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let current = Ledgers::<K>::read(self, issue)?;
        let n = u64::from(issue);
        let old = current
            .as_ref()
            .map_or_else(Vec::new, |l| K::keys::<()>(n, Ok(l)));
        let (write, result) = decide(current)?;
        if let Some(ledger) = write {
            if K::STATUSES {
                self.mark_pending(issue)?;
            }
            let new = K::keys::<()>(n, Ok(&ledger));
            let bytes = K::print(&ledger);
            let marked = K::marked(&ledger);
            Self::write_indexed(index, issue, &path, bytes.as_bytes(), marked, (&old, &new))?;
        }
        Ok(result)
    }

    fn update_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        mut decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let path = self.ledger_dir_made::<K>(issue)?;
        let index = K::index(self);
        let _session = index.begin();
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        // Copied out of the thread's read buffer: `decide` may read the store too.
        let current = read::read_existing(&path, |bytes| Ok(bytes.to_vec()))?;
        let (write, result) = decide(current.as_deref())?;
        if let Some(bytes) = write {
            if K::STATUSES {
                self.mark_pending(issue)?;
            }
            // Bytes that do not parse keep their marker, as a pass that cannot read them would.
            let parse = |bytes: &[u8]| K::parse_issue(issue, bytes);
            let new = parse(&bytes);
            let marked = new.as_ref().map_or(true, K::marked);
            let n = u64::from(issue);
            let old = current.map_or_else(Vec::new, |b| K::keys(n, parse(&b).as_ref()));
            let new = K::keys(n, new.as_ref());
            Self::write_indexed(index, issue, &path, &bytes, marked, (&old, &new))?;
        }
        Ok(result)
    }

    fn scan_ledgers<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        K::scan(self, scope, visit)
    }

    fn due_times(&self) -> Result<DueTimes, ClarifyError> {
        Ok(match K::index(self).due_times() {
            None => DueTimes::Unknown,
            Some((earliest, at_once)) => DueTimes::Indexed {
                earliest,
                // An issue past u32 names a file no pass reads as a ledger.
                at_once: at_once
                    .into_iter()
                    .filter_map(|n| u32::try_from(n).ok())
                    .collect(),
            },
        })
    }
}

impl DiskStore {
    /// The status file as it is (empty when there is none yet).
    fn read_status_file(&self) -> Result<Statuses, ClarifyError> {
        let statuses = read::read_existing(&self.path(paths::STATUS), |b| {
            parse_statuses(paths::STATUS_FILE, b)
        })?;
        Ok(statuses.unwrap_or_default())
    }
}

impl State for DiskStore {
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        let files = self.list_clarifications()?.ledgers;
        Ok(parallel_map(&files, |(_, path)| {
            let mut bytes = Vec::new();
            (file_name(path), read_into(path, &mut bytes).map(|()| bytes))
        }))
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        let mut statuses = self.read_status_file()?;
        // A ledger written ahead of a status update that never came (pending.rs).
        self.repair_statuses(&mut statuses);
        Ok(statuses)
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        mut change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        inside::make_dir(&self.path(paths::STATE_DIR))?;
        let path = self.path(paths::STATUS);
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let mut statuses = self.read_status_file()?;
        let before = statuses.clone();
        let result = change(&mut statuses)?;
        // After the change: a repair sets only agents whose last activity is older.
        let repaired = self.repair_statuses(&mut statuses);
        if statuses != before {
            write_atomic(&path, statuses_to_json(&statuses).as_bytes())?;
        }
        for mark in repaired {
            let _ = std::fs::remove_file(mark);
        }
        Ok(result)
    }

    type Lease = DiskLease;

    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<DiskLease>, ClarifyError> {
        let path = self.lease_path(id)?;
        crate::inside::make_dir(&self.clarifications_dir())?;
        refuse_symlink(&path)?;
        // Lease files come and go in the clarifications directory: as the index's own
        // writer, so the index is not taken to be outdated by them.
        let _session = self.index.begin();
        // A dead lease is broken and the take tried again; twice is enough unless another
        // router takes it in between, and then it is theirs.
        for _ in 0..3 {
            if let Some(content) = crate::lease::create(&path, id, ttl_ms)? {
                return Ok(LeaseTake::Taken(DiskLease { path, content }));
            }
            match crate::lease::judge(&path)? {
                crate::lease::Judged::Live { holder } => return Ok(LeaseTake::Held { holder }),
                crate::lease::Judged::Dead(bytes) => break_stale(&path, &bytes)?,
                crate::lease::Judged::Absent => {}
            }
        }
        Ok(LeaseTake::Held {
            holder: String::from("another router (the lease changed hands while taking it)"),
        })
    }

    fn release_lease(&self, lease: DiskLease) {
        // Only our own: an expired lease may have been broken and taken by another router.
        let _session = self.index.begin();
        remove_if_ours(&lease.path, &lease.content);
    }

    fn lease_held(&self, id: &str) -> bool {
        self.lease_path(id).is_ok_and(|p| {
            matches!(
                crate::lease::judge(&p),
                Ok(crate::lease::Judged::Live { .. })
            )
        })
    }

    type Cursor = DiskCursor;

    fn feed(&self) -> Result<DiskCursor, ClarifyError> {
        Ok(self.cursor())
    }

    fn revision(&self, cursor: &DiskCursor) -> u64 {
        cursor.revision
    }

    fn wake(&self, cursor: &mut DiskCursor) -> Option<Wake> {
        let watching = cursor
            .watching
            .get_or_insert_with(|| crate::watch::Watching::start(self.root()));
        match watching {
            Ok(w) => Some(w.wake.clone()),
            Err(why) => {
                crate::watch::say_once(why);
                None
            }
        }
    }

    fn changes(&self, cursor: &mut DiskCursor) -> Result<Option<Changed>, ClarifyError> {
        // A ledger directory made since the watch began is watched from now on, and its files
        // are compared below (they may have come with it).
        if let Some(Ok(w)) = &mut cursor.watching {
            match w.complete() {
                Ok(added) => cursor.settling |= added,
                Err(why) => {
                    crate::watch::say_once(&why);
                    // Closed: its reader looks on its own timer from now on.
                    cursor.watching = Some(Err(why));
                }
            }
        }
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

    #[cfg(feature = "fulltext")]
    fn search_index(
        &self,
        probe: &agentx_clarify_core::search::probe::Probe,
    ) -> Option<agentx_clarify_core::search::probe::Candidates> {
        crate::fulltext::search(self, probe)
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
        self.sweep_delegation_temps(config);
    }

    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        self.check_layout()?;
        let path = self.path(&doc_path(checked_doc(name)?));
        read::read_existing(&path, |bytes| {
            String::from_utf8(bytes.to_vec()).map_err(|_| ClarifyError::LedgerCorrupt {
                file: format!("{name}.json"),
                message: String::from("not UTF-8 text"),
            })
        })
    }

    fn update_doc<T>(
        &self,
        name: &str,
        config: &Config,
        agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let path = self.path(&doc_path(checked_doc(name)?));
        inside::make_dir(&self.path(paths::STATE_DIR))?;
        // A state document is never committed by accident (docs/security-serve.md).
        crate::runs::state_gitignore(&self.path(paths::STATE_GITIGNORE))?;
        let _lock = FileLock::acquire(&path, agent, Self::policy(config))?;
        let (next, result) = change(self.read_doc(name)?)?;
        if let Some(text) = next {
            // Owner-only, every one (docs/security.md): the tokens' hashes, the outbox's
            // notification payloads.
            write_private(&path, text.as_bytes())?;
        }
        Ok(result)
    }
}
