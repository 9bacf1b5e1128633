//! The file store's wake (docs/protocol.md §21): the kernel's file events on the state
//! directories (inotify on Linux, through the `notify` crate, feature `watch`) fire the
//! cursor's [`Wake`], so a reader looks at the stamps when a state file was created, replaced,
//! written or removed — not on a timer. The stamps stay the check: an event only says "look".
//!
//! Watching is unavailable — and the reader falls back to looking on its own timer, which is
//! said once in the log — when the build has no `watch` feature (the Node addon), when
//! `AGENTX_FEED_WATCH=off` turns it off (the tests of the fallback), on a network filesystem
//! (another machine's writes raise no local event), or when the kernel refuses a watch
//! (inotify's instance or watch limits).
//!
//! Watched, each non-recursively (a recursive watch would walk every ledger at start):
//! `.agentx/state/` (the statuses, and the ledger directories appearing) and the two ledger
//! directories; one that appears later is added at the next look ([`Watching::complete`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agentx_clarify_command::paths::{CLARIFICATIONS_DIR, DELEGATIONS_DIR, STATE_DIR};
use agentx_clarify_command::Wake;

/// How long a reader with a wake waits before it looks anyway: the net under a missed event
/// (an overflowed event queue is reported and fires the wake, so this is for what no one can
/// foresee). A look is three `stat`s. `AGENTX_FEED_TICK_MS` sets it (the tests set an hour, to
/// show that a wait is woken by the event, not by this).
pub const SAFETY_TICK: Duration = Duration::from_secs(5);

/// How often a reader without a wake looks (the file store where watching is unavailable).
pub const FALLBACK_TICK: Duration = Duration::from_millis(100);

/// [`SAFETY_TICK`], or what `AGENTX_FEED_TICK_MS` says.
pub fn safety_tick() -> Duration {
    std::env::var("AGENTX_FEED_TICK_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(SAFETY_TICK, Duration::from_millis)
}

/// The directories watched, relative to the root; the first must exist to watch at all.
#[cfg_attr(not(feature = "watch"), allow(dead_code))]
const WATCHED: [&str; 3] = [STATE_DIR, CLARIFICATIONS_DIR, DELEGATIONS_DIR];

/// Filesystems on which another machine's writes raise no local event.
const NETWORK_FS: [&str; 12] = [
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "ceph",
    "glusterfs",
    "afs",
    "fuse.sshfs",
    "lustre",
    "gpfs",
];

/// Says once per process that the change feed looks on a timer, and why.
pub(crate) fn say_once(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "agentx: the change feed does not watch the state files ({why}): it looks at their stamps every {} ms",
            FALLBACK_TICK.as_millis()
        );
    }
}

/// Why watching `dir` cannot work here, if it cannot.
pub(crate) fn unavailable(dir: &Path) -> Option<String> {
    if std::env::var("AGENTX_FEED_WATCH").is_ok_and(|v| v == "off" || v == "0") {
        return Some(String::from("AGENTX_FEED_WATCH=off"));
    }
    if !cfg!(feature = "watch") {
        return Some(String::from("this build has no file watcher"));
    }
    if !dir.is_dir() {
        return Some(format!("{} does not exist yet", dir.display()));
    }
    let fs = fs_type(dir)?;
    NETWORK_FS
        .iter()
        .any(|n| fs == *n)
        .then(|| format!("{} is on a network filesystem ({fs})", dir.display()))
}

/// The filesystem type of the mount holding `dir` (Linux's `/proc/self/mountinfo`: the
/// longest mount point that is a prefix of its canonical path); `None` elsewhere.
fn fs_type(dir: &Path) -> Option<String> {
    let path = std::fs::canonicalize(dir).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in info.lines() {
        // `id parent major:minor root mount-point options… - type source super-options`
        let mut fields = line.split(' ');
        let Some(mount) = fields.nth(4) else { continue };
        let Some((_, after)) = line.split_once(" - ") else {
            continue;
        };
        let Some(fs) = after.split(' ').next() else {
            continue;
        };
        let mount = PathBuf::from(mount.replace("\\040", " "));
        let len = mount.as_os_str().len();
        if path.starts_with(&mount) && best.as_ref().is_none_or(|(l, _)| len > *l) {
            best = Some((len, fs.to_owned()));
        }
    }
    best.map(|(_, fs)| fs)
}

/// Whether an event on `path` can be a change of state the feed reports: a ledger of either
/// kind, the statuses, or a ledger directory (lock files, temp files and run logs are not).
#[cfg_attr(not(feature = "watch"), allow(dead_code))]
fn is_state_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name == agentx_clarify_command::paths::STATUS_FILE
        || name == "clarifications"
        || name == "delegations"
        || agentx_clarify_core::verify::issue_of_file_name(name).is_some()
}

/// A cursor's watch: the wake it fires, and the watcher (dropped with the cursor).
pub(crate) struct Watching {
    pub(crate) wake: Wake,
    #[cfg(feature = "watch")]
    watcher: notify::RecommendedWatcher,
    /// Which of [`WATCHED`] are watched.
    watched: [bool; 3],
    #[cfg_attr(not(feature = "watch"), allow(dead_code))]
    root: PathBuf,
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching")
            .field("wake", &self.wake)
            .field("watched", &self.watched)
            .finish_non_exhaustive()
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.wake.close();
    }
}

impl Watching {
    /// Starts watching the state directories of `root`; why not, when it cannot.
    #[cfg(feature = "watch")]
    pub(crate) fn start(root: &Path) -> Result<Watching, String> {
        use notify::EventKind;
        let state = root.join(STATE_DIR);
        if let Some(why) = unavailable(&state) {
            return Err(why);
        }
        let wake = Wake::default();
        let fire = wake.clone();
        let handler = move |event: notify::Result<notify::Event>| {
            let look = match event {
                Ok(e) => {
                    e.need_rescan()
                        || (!matches!(e.kind, EventKind::Access(_))
                            && e.paths.iter().any(|p| is_state_name(p)))
                }
                // The watcher lost track (an overflowed queue, a removed directory): look.
                Err(_) => true,
            };
            if look {
                fire.fire();
            }
        };
        let watcher = notify::recommended_watcher(handler)
            .map_err(|e| format!("the kernel refused a file watcher: {e}"))?;
        let mut watching = Watching {
            wake,
            watcher,
            watched: [false; 3],
            root: root.to_path_buf(),
        };
        watching.complete()?;
        Ok(watching)
    }

    #[cfg(not(feature = "watch"))]
    pub(crate) fn start(root: &Path) -> Result<Watching, String> {
        Err(unavailable(&root.join(STATE_DIR))
            .unwrap_or_else(|| String::from("this build has no file watcher")))
    }

    /// Watches each of [`WATCHED`] that exists and is not watched yet; `true` when one was
    /// added (a directory that appeared: its files may be new to the reader).
    #[cfg(feature = "watch")]
    pub(crate) fn complete(&mut self) -> Result<bool, String> {
        use notify::{RecursiveMode, Watcher};
        let mut added = false;
        for (i, dir) in WATCHED.iter().enumerate() {
            if self.watched[i] {
                continue;
            }
            let path = self.root.join(dir);
            if !path.is_dir() {
                continue;
            }
            self.watcher
                .watch(&path, RecursiveMode::NonRecursive)
                .map_err(|e| format!("the kernel refused to watch {}: {e}", path.display()))?;
            self.watched[i] = true;
            added = true;
        }
        Ok(added)
    }

    #[cfg(not(feature = "watch"))]
    pub(crate) fn complete(&mut self) -> Result<bool, String> {
        Ok(false)
    }
}

/// A long-lived process's watch on the settings (`config.toml`, `people.toml`, the workflow
/// and manifest directories): any event there marks them dirty, so the handle compares their
/// stamps only after something moved — not at every request (22 `lstat`s each, issue 42's
/// per-request cost). Starts dirty: whatever was saved before the watch began is looked at
/// once. `None` (look every time, as before) where watching is unavailable, for the reasons
/// the change feed gives.
pub struct SettingsWatch {
    dirty: std::sync::Arc<AtomicBool>,
    /// A directory the kernel would not watch: every take looks, as without a watch.
    broken: AtomicBool,
    #[cfg(feature = "watch")]
    watcher: std::sync::Mutex<notify::RecommendedWatcher>,
    #[cfg(feature = "watch")]
    watched: std::sync::Mutex<Vec<PathBuf>>,
    #[cfg_attr(not(feature = "watch"), allow(dead_code))]
    root: PathBuf,
}

impl std::fmt::Debug for SettingsWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsWatch")
            .field("dirty", &self.dirty)
            .finish_non_exhaustive()
    }
}

impl SettingsWatch {
    /// Watches the settings of the workspace at `root`, if it can.
    #[cfg(feature = "watch")]
    pub fn start(root: &Path) -> Option<SettingsWatch> {
        let agentx = root.join(agentx_clarify_command::paths::AGENTX_DIR);
        if unavailable(&agentx).is_some() {
            return None;
        }
        let dirty = std::sync::Arc::new(AtomicBool::new(true));
        let mark = std::sync::Arc::clone(&dirty);
        let handler = move |event: notify::Result<notify::Event>| {
            let moved = event.map_or(true, |e| {
                e.need_rescan() || !matches!(e.kind, notify::EventKind::Access(_))
            });
            if moved {
                mark.store(true, Ordering::SeqCst);
            }
        };
        let watcher = notify::recommended_watcher(handler).ok()?;
        let watch = SettingsWatch {
            dirty,
            broken: AtomicBool::new(false),
            watcher: std::sync::Mutex::new(watcher),
            watched: std::sync::Mutex::new(Vec::new()),
            root: root.to_path_buf(),
        };
        watch.complete().then_some(watch)
    }

    #[cfg(not(feature = "watch"))]
    pub fn start(_root: &Path) -> Option<SettingsWatch> {
        None
    }

    /// Whether the settings may have moved since the last call (and, from now, not). Clears
    /// the mark before the caller looks, so an event during its look marks them again.
    pub fn take(&self) -> bool {
        self.dirty.swap(false, Ordering::SeqCst) || self.broken.load(Ordering::SeqCst)
    }

    /// Marks them dirty: the caller's look failed, or a watch could not be added.
    pub fn mark(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Watches each settings directory that exists and is not watched yet (a workflows
    /// directory made later is added at the look its creation caused); `false` when the
    /// kernel refused one (the handle then looks every time).
    #[cfg(feature = "watch")]
    pub fn complete(&self) -> bool {
        use agentx_clarify_command::paths::{AGENTS_DIR, AGENTX_DIR, WORKFLOWS_DIR};
        use notify::{RecursiveMode, Watcher};
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut watcher = self
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for dir in [AGENTX_DIR, WORKFLOWS_DIR, AGENTS_DIR] {
            let path = self.root.join(dir);
            if watched.contains(&path) || !path.is_dir() {
                continue;
            }
            if watcher.watch(&path, RecursiveMode::NonRecursive).is_err() {
                self.broken.store(true, Ordering::SeqCst);
                return false;
            }
            watched.push(path);
        }
        true
    }

    #[cfg(not(feature = "watch"))]
    pub fn complete(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_state_files_and_ledger_directories_are_news() {
        for news in [
            ".agentx/state/clarifications/issue-7.json",
            ".agentx/state/agent-status.json",
            ".agentx/state/delegations",
        ] {
            assert!(is_state_name(Path::new(news)), "{news}");
        }
        for noise in [
            ".agentx/state/clarifications/issue-7.json.lock",
            ".agentx/state/clarifications/.agentx-tmp-abc",
            ".agentx/state/runs/CLR-7-001.r1.1.json",
            ".agentx/state/outbox.json",
        ] {
            assert!(!is_state_name(Path::new(noise)), "{noise}");
        }
    }

    #[test]
    fn the_mount_of_a_local_directory_is_found_and_is_not_a_network_one() {
        let dir = tempfile::tempdir().unwrap();
        let fs = fs_type(dir.path()).unwrap();
        assert!(!NETWORK_FS.contains(&fs.as_str()), "{fs}");
    }
}
