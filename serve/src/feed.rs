//! The smallest honest change feed the live pages and the worker need, until the store seam
//! (docs/protocol.md §21) gives every store one: a monotone revision and the issues that changed.
//!
//! Files: every write replaces a file by rename, which changes its directory's mtime; the feed
//! looks at the three state directories' stamps (three `stat`s) every [`EVERY`], and only when
//! one moved does it list the ledgers' stamps to name the issues. Any process's write shows:
//! the CLI, an MCP server, another `agentx serve`.
//!
//! PostgreSQL: every document write takes a revision from one sequence; the feed asks for the
//! documents written lately every [`PG_EVERY`] (one indexed query), so a change made on
//! another machine shows too. `LISTEN/NOTIFY` would cut the wait; it is not built yet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agentx_clarify_command::paths::{CLARIFICATIONS_DIR, DELEGATIONS_DIR, STATE_DIR, STATUS};
use agentx_clarify_workspace::Location;
use serde::Serialize;

use crate::app::App;

/// How often the file feed looks: bounds the live-update latency (docs/protocol.md §23: within 1 s).
pub const EVERY: Duration = Duration::from_millis(150);

/// What changed: a new revision and the issues whose ledgers (of either kind) changed. The
/// statuses file has no issue; a change to it alone names none.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Change {
    pub revision: u64,
    pub issues: Vec<u32>,
}

/// A store's change feed: [`ChangeFeed::poll`] says what changed since the last poll.
pub trait ChangeFeed: Send + 'static {
    fn poll(&mut self) -> Option<Vec<u32>>;
}

type Stamp = (SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.modified().ok()?, m.len(), m.ino()))
}

/// The feed of the file store.
pub struct FileFeed {
    dirs: Vec<PathBuf>,
    dir_stamps: Vec<Option<Stamp>>,
    files: BTreeMap<PathBuf, Stamp>,
    status: PathBuf,
    /// The last poll saw a change: look at the files once more even if the directories look
    /// the same (a second write in the same clock tick leaves a directory's mtime as it was).
    settling: bool,
}

impl FileFeed {
    pub fn new(root: &Path) -> Self {
        let dirs: Vec<PathBuf> = [STATE_DIR, CLARIFICATIONS_DIR, DELEGATIONS_DIR]
            .iter()
            .map(|d| root.join(d))
            .collect();
        let mut feed = FileFeed {
            dir_stamps: dirs.iter().map(|d| stamp(d)).collect(),
            dirs,
            files: BTreeMap::new(),
            status: root.join(STATUS),
            settling: false,
        };
        feed.files = feed.scan();
        feed
    }

    fn scan(&self) -> BTreeMap<PathBuf, Stamp> {
        let mut out = BTreeMap::new();
        if let Some(s) = stamp(&self.status) {
            out.insert(self.status.clone(), s);
        }
        for dir in self.dirs.iter().skip(1) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if issue_of(&path).is_some() {
                    if let Some(s) = stamp(&path) {
                        out.insert(path, s);
                    }
                }
            }
        }
        out
    }
}

/// The issue a ledger file names (`issue-<n>.json`).
fn issue_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("issue-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

impl ChangeFeed for FileFeed {
    fn poll(&mut self) -> Option<Vec<u32>> {
        let now: Vec<Option<Stamp>> = self.dirs.iter().map(|d| stamp(d)).collect();
        let moved = now != self.dir_stamps;
        if !moved && !self.settling {
            return None;
        }
        self.dir_stamps = now;
        let files = self.scan();
        let changed: Vec<&PathBuf> = files
            .iter()
            .filter(|(p, s)| self.files.get(*p) != Some(s))
            .map(|(p, _)| p)
            .chain(self.files.keys().filter(|p| !files.contains_key(*p)))
            .collect();
        let mut issues: Vec<u32> = changed.iter().filter_map(|p| issue_of(p)).collect();
        let any = !changed.is_empty();
        issues.sort_unstable();
        issues.dedup();
        self.files = files;
        self.settling = moved || any;
        any.then_some(issues)
    }
}

/// The feed of a PostgreSQL store: the documents written lately, by revision (see
/// `PgStore::written_since`), looked at every [`PG_EVERY`].
pub struct PgFeed {
    store: agentx_clarify_workspace::PgStore,
    seen: std::collections::HashMap<(String, String), i64>,
    top: i64,
    started: bool,
}

/// How far back in revisions each look goes: a transaction that drew its revision earlier but
/// committed later is still seen.
const WINDOW: i64 = 4096;
pub const PG_EVERY: Duration = Duration::from_millis(250);

impl PgFeed {
    pub fn new(store: agentx_clarify_workspace::PgStore) -> Self {
        PgFeed {
            store,
            seen: std::collections::HashMap::new(),
            top: 0,
            started: false,
        }
    }
}

impl ChangeFeed for PgFeed {
    fn poll(&mut self) -> Option<Vec<u32>> {
        let rows = self
            .store
            .written_since(self.top.saturating_sub(WINDOW), WINDOW)
            .ok()?;
        let mut any = false;
        let mut issues = Vec::new();
        for (kind, name, rev) in rows {
            self.top = self.top.max(rev);
            let key = (kind, name);
            if self.seen.get(&key) == Some(&rev) {
                continue;
            }
            if let Some(n) = issue_of(Path::new(&key.1)) {
                issues.push(n);
            }
            self.seen.insert(key, rev);
            any = true;
        }
        let floor = self.top.saturating_sub(WINDOW);
        self.seen.retain(|_, rev| *rev > floor);
        // The first look only learns where things stand.
        let first = !self.started;
        self.started = true;
        issues.sort_unstable();
        issues.dedup();
        (any && !first).then_some(issues)
    }
}

/// Starts the feed of the workspace's store on the blocking pool; it stops on shutdown.
pub fn start(app: Arc<App>) {
    let mut shutdown = app.shutdown.subscribe();
    tokio::spawn(async move {
        let root = app.root.clone();
        let location = app.location.clone();
        let every = match location {
            Location::Files => EVERY,
            Location::Postgres(_) => PG_EVERY,
        };
        let made = tokio::task::spawn_blocking(move || -> Option<Box<dyn ChangeFeed>> {
            Some(match location {
                Location::Files => Box::new(FileFeed::new(&root)),
                Location::Postgres(url) => Box::new(PgFeed::new(
                    agentx_clarify_workspace::PgStore::open(&root, &url).ok()?,
                )),
            })
        })
        .await;
        let Ok(Some(mut feed)) = made else {
            crate::log("live updates are off: the store's change feed could not start");
            return;
        };
        // The baseline is taken: every write from now on is reported (the inbox's view of the
        // open records starts reading after this).
        let _ = app.feed_ready.send(true);
        let mut revision = 0u64;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.changed() => return,
            }
            let polled = tokio::task::spawn_blocking(move || {
                let changed = feed.poll();
                (feed, changed)
            })
            .await;
            let Ok((back, changed)) = polled else { return };
            feed = back;
            if let Some(issues) = changed {
                revision += 1;
                let _ = app.changes.send(Change { revision, issues });
            }
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_ledger_names_its_issue() {
        let dir = tempfile::tempdir().unwrap();
        let ledgers = dir.path().join(CLARIFICATIONS_DIR);
        std::fs::create_dir_all(&ledgers).unwrap();
        let mut feed = FileFeed::new(dir.path());
        assert_eq!(feed.poll(), None);
        std::fs::write(ledgers.join(".tmp"), "{}").unwrap();
        std::fs::rename(ledgers.join(".tmp"), ledgers.join("issue-7.json")).unwrap();
        assert_eq!(feed.poll(), Some(vec![7]));
        assert_eq!(feed.poll(), None);
    }
}
