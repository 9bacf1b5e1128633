//! The repair rule between a ledger and the status file (docs/protocol.md §8). A command
//! writes the ledger (the commit), then the statuses in their own update: a writer that dies
//! in between would leave the statuses behind the ledger for good. So each clarification
//! ledger write leaves a mark first — `.agentx/state/pending/issue-<n>`, holding the writer's
//! pid and host — and the next update of the statuses by any process folds in what every
//! marked ledger implies (`agentx_clarify_core::agents::repair_from_ledger`: only agents whose
//! last activity is older, so it never undoes a later write) and then removes the marks. A
//! reader of the statuses folds them in too, without writing. A mark of another process that
//! is still alive is left to it.
//!
//! The mark is not synced: a process that dies leaves its page cache to the kernel, so the mark
//! is there for the next command. A power cut between the ledger's and the statuses' durable
//! writes may still lose both the mark and the status update, as before (the ledger stands).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use agentx_clarify_core::agents::{repair_from_ledger, Statuses};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::{inside, io_error, DiskStore};

/// Where the marks live, relative to the root.
pub const PENDING_DIR: &str = ".agentx/state/pending/";

impl DiskStore {
    fn mark_path(&self, issue: u32) -> PathBuf {
        self.path(PENDING_DIR).join(format!("issue-{issue}"))
    }

    /// Marks ledger `issue` as written ahead of its status update: before the ledger write.
    pub(crate) fn mark_pending(&self, issue: u32) -> Result<(), ClarifyError> {
        let path = self.mark_path(issue);
        // The directory is made (and checked) only when it is missing: `check_layout`
        // refused a link there already.
        let open = |new: bool| {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .create_new(new)
                .truncate(!new)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(0o644)
                .open(&path)
        };
        let mut inherited = false;
        let file = match open(true) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                inside::make_dir(&self.path(PENDING_DIR))?;
                open(true)
            }
            // Another writer's mark (dead: we hold the ledger's lock) becomes ours, and says
            // so: its ledger is repaired from when our status update comes.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                inherited = true;
                open(false)
            }
            other => other,
        };
        let mut me = json!({"pid": std::process::id(), "hostname": crate::this_host()});
        if inherited {
            me["inherited"] = Value::Bool(true);
        }
        file.and_then(|mut f| f.write_all(me.to_string().as_bytes()))
            .map_err(|e| io_error("mark the status update of", &path, &e))
    }

    /// The marks whose writer is this process or gone: `(issue, path, whether the ledger
    /// must be read)` — not for a mark this process made fresh, whose status update is the
    /// one under way.
    fn marks_to_repair(&self) -> Vec<(u32, PathBuf, bool)> {
        let Ok(entries) = std::fs::read_dir(self.path(PENDING_DIR)) else {
            return Vec::new();
        };
        let mut out: Vec<(u32, PathBuf, bool)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let issue = name.to_str()?.strip_prefix("issue-")?.parse().ok()?;
                let path = e.path();
                let read = match judge(&path) {
                    Mark::OtherLive => return None,
                    Mark::OwnFresh => false,
                    Mark::Repair => true,
                };
                Some((issue, path, read))
            })
            .collect();
        out.sort();
        out
    }

    /// Folds into `statuses` what each mark's ledger implies; the marks folded in (to remove
    /// once the statuses are written). A ledger that cannot be read repairs nothing (its mark
    /// stays for a later command).
    pub(crate) fn repair_statuses(&self, statuses: &mut Statuses) -> Vec<PathBuf> {
        let mut taken = Vec::new();
        for (issue, path, read) in self.marks_to_repair() {
            if !read {
                taken.push(path);
                continue;
            }
            use agentx_clarify_command::store::ledgers::Clarifications;
            use agentx_clarify_command::store::ledgers::Ledgers;
            match Ledgers::<Clarifications>::read(self, issue) {
                Ok(Some(ledger)) => {
                    repair_from_ledger(statuses, &ledger);
                    taken.push(path);
                }
                Ok(None) => taken.push(path),
                Err(_) => {}
            }
        }
        taken
    }
}

/// What a mark asks of the next status update.
enum Mark {
    /// A live process on this host other than this one: its own update is under way.
    OtherLive,
    /// This process's, made fresh: the update under way is its own.
    OwnFresh,
    /// A dead writer's, another host's (its pid cannot be judged: repairing changes nothing
    /// once that writer's own update came), an inherited or unreadable one: repair.
    Repair,
}

fn judge(path: &std::path::Path) -> Mark {
    let read = crate::read::read_capped(path, crate::read::MAX_TINY_FILE_BYTES, |b| {
        Ok(serde_json::from_slice::<Value>(b).ok())
    });
    let Some(v) = read.ok().flatten().flatten() else {
        return Mark::Repair;
    };
    let pid = v.get("pid").and_then(Value::as_u64).unwrap_or(0);
    let host = v
        .get("hostname")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if host != crate::this_host() {
        return Mark::Repair;
    }
    if pid == u64::from(std::process::id()) {
        return if v.get("inherited").is_some() {
            Mark::Repair
        } else {
            Mark::OwnFresh
        };
    }
    if crate::pid_alive(pid) {
        Mark::OtherLive
    } else {
        Mark::Repair
    }
}
