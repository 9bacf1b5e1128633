//! The index's keys (docs/protocol.md §29): what the monitor that follows a command reads, so that its
//! cost grows neither with finished nor with open work. The core decides each ledger's
//! [`FollowKeys`]; here they are kept as empty files whose *names* are the data (no content to
//! tear, no file rewritten in place), each under the directory a follow-up lists:
//!
//! - `due/<bucket>/<issue>.<due>`: the ledger falls due at `<due>` (epoch ms; `i64::MIN` for
//!   at once: a stale record, a ledger that could not be read). `<bucket>` is `<due>` divided
//!   by [`BUCKET_MS`] (about 70 minutes), so a follow-up lists the bucket directories and then
//!   only the buckets that began by `now` — what is due, and at most one bucket's worth of
//!   what is not yet;
//! - `cycle/<issue>`: its wait-for edges hold a cycle (normally none: the follow-up of the
//!   write that closed it breaks it);
//! - `asker/<agent>/<issue>.<asked>`: `<agent>` requested an active record there whose latest
//!   question or retry is at `<asked>` (the earliest such): a follow-up lists the directories
//!   of the agents whose status may abandon their records, and reads only the ledgers asked
//!   before that status changed.
//!
//! A writer adds a ledger's new keys (durably) before writing it and removes its old ones
//! after, under the ledger's lock, as it does its marker: a crash in between leaves a key too
//! many (one more ledger read by the next follow-ups, until a pass prunes it), never one too
//! few. A full pass rebuilds the keys with the markers.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use agentx_clarify_core::monitor::follow::{AbandonCandidate, FollowKeys};
use agentx_clarify_core::ClarifyError;

use super::Index;
use crate::io_error;

/// The width of a due bucket: 2^22 ms, about 70 minutes.
const BUCKET_MS: i64 = 1 << 22;

const DUE: &str = "due";
const CYCLE: &str = "cycle";
const ASKER: &str = "asker";

/// What a follow-up selected: the issues, and the keys that named each (so that a key found
/// superfluous on reading its ledger can be pruned).
#[derive(Debug, Default)]
pub(crate) struct Selected {
    pub issues: BTreeSet<u64>,
    pub seen: BTreeMap<u64, Vec<PathBuf>>,
}

/// The key files of ledger `issue` with `keys`, relative to the index directory.
pub(crate) fn paths_of(issue: u64, keys: Option<&FollowKeys>) -> Vec<PathBuf> {
    let Some(keys) = keys else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(due) = keys.due {
        out.push(
            Path::new(DUE)
                .join(due.div_euclid(BUCKET_MS).to_string())
                .join(format!("{issue}.{due}")),
        );
    }
    if keys.cyclic {
        out.push(Path::new(CYCLE).join(issue.to_string()));
    }
    for (agent, asked) in &keys.askers {
        out.push(
            Path::new(ASKER)
                .join(agent_dir(agent))
                .join(format!("{issue}.{asked}")),
        );
    }
    out
}

/// An agent's directory name: the name itself when it is a valid agent name (lowercase
/// letters, digits, '-'), else `~` and its bytes in hex (a ledger another tool wrote).
fn agent_dir(agent: &str) -> String {
    if agentx_clarify_core::names::check_agent(agent).is_ok() {
        return agent.to_owned();
    }
    let hex: String = agent.bytes().map(|b| format!("{b:02x}")).collect();
    format!("~{hex}")
}

/// `<issue>.<number>` → both (the issue in canonical decimal: no two names for one key).
fn parse_entry(name: &str) -> Option<(u64, i64)> {
    let (issue_text, n) = name.split_once('.')?;
    let issue: u64 = issue_text.parse().ok()?;
    (issue.to_string() == issue_text).then_some((issue, n.parse().ok()?))
}

/// The names in `dir` (none when it does not exist).
fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

impl Index {
    /// Adds `keys` (relative paths) so that they outlive a crash whenever the ledger write that
    /// follows does: a process crash leaves them in the page cache; against a power cut, the
    /// stamp's boot (`stamp.rs`), or, where the boot is unknown, each created file's directory
    /// is synced, and each created directory's parent.
    pub(crate) fn put_keys(&self, keys: &[PathBuf]) -> Result<(), ClarifyError> {
        let mut sync: BTreeSet<PathBuf> = BTreeSet::new();
        for key in keys {
            let path = self.dir.join(key);
            let Some(parent) = path.parent() else {
                continue;
            };
            // Twice: a follow-up may remove an empty bucket between our mkdir and create.
            let mut created = false;
            for _ in 0..2 {
                if !parent.is_dir() {
                    let mut missing = parent;
                    while let Some(up) = missing.parent() {
                        if up.is_dir() {
                            sync.insert(up.to_path_buf());
                            break;
                        }
                        missing = up;
                    }
                    // 0755 before the umask, never 0777 (issue 48).
                    let mut builder = std::fs::DirBuilder::new();
                    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
                    builder
                        .recursive(true)
                        .create(parent)
                        .map_err(|e| io_error("create the index in", parent, &e))?;
                }
                match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(crate::atomic::NEW_FILE_MODE)
                    .open(&path)
                {
                    Ok(_) => {
                        created = true;
                        break;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => break,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_error("create", &path, &e)),
                }
            }
            if created {
                sync.insert(parent.to_path_buf());
            }
        }
        // Synced only where the boot is unknown (`stamp.rs`: a power cut is a new boot, and
        // a stamp of another boot has its index rebuilt).
        if !super::stamp::must_sync() {
            return Ok(());
        }
        for dir in sync {
            File::open(&dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io_error("sync", &dir, &e))?;
        }
        Ok(())
    }

    /// Removes `keys` (best effort: a key too many costs one read).
    pub(crate) fn drop_keys(&self, keys: &[PathBuf]) {
        for key in keys {
            let _ = std::fs::remove_file(self.dir.join(key));
        }
    }

    /// What the monitor after a command reads, when the index can be trusted: the ledgers due
    /// at `now`, those on a cycle, and those where a `candidates` agent asked before its
    /// status changed.
    pub(crate) fn follow(&self, now: i64, candidates: &[AbandonCandidate]) -> Option<Selected> {
        if !self.is_trusted() {
            return None;
        }
        let mut selected = Selected::default();
        let mut add = |issue: u64, key: PathBuf| {
            selected.issues.insert(issue);
            selected.seen.entry(issue).or_default().push(key);
        };
        let due_dir = self.dir.join(DUE);
        for bucket in names(&due_dir) {
            let Ok(b) = bucket.parse::<i64>() else {
                continue;
            };
            if b.saturating_mul(BUCKET_MS) > now {
                continue;
            }
            let dir = due_dir.join(&bucket);
            let entries = names(&dir);
            if entries.is_empty() && b.saturating_add(1).saturating_mul(BUCKET_MS) <= now {
                // A bucket wholly past and empty: a writer that meets it gone makes it again.
                let _ = std::fs::remove_dir(&dir);
            }
            for name in entries {
                if let Some((issue, due)) = parse_entry(&name) {
                    if due <= now {
                        add(issue, Path::new(DUE).join(&bucket).join(&name));
                    }
                }
            }
        }
        for name in names(&self.dir.join(CYCLE)) {
            if let Ok(issue) = name.parse::<u64>() {
                add(issue, Path::new(CYCLE).join(&name));
            }
        }
        for c in candidates {
            let dir = Path::new(ASKER).join(agent_dir(&c.agent));
            for name in names(&self.dir.join(&dir)) {
                if let Some((issue, asked)) = parse_entry(&name) {
                    if c.may_abandon(issue, asked) {
                        add(issue, dir.join(&name));
                    }
                }
            }
        }
        Some(selected)
    }

    /// What the due keys say of when the indexed ledgers fall due, when the index can be
    /// trusted: the earliest due time other than "at once", and the issues keyed due at once
    /// (a stale record, a ledger that could not be read), ascending. Lists the bucket
    /// directories, then the buckets in ascending order only until one holds a later key:
    /// never a ledger, and at most one bucket's worth of keys past the at-once ones.
    pub(crate) fn due_times(&self) -> Option<(Option<i64>, Vec<u64>)> {
        if !self.is_trusted() {
            return None;
        }
        let due_dir = self.dir.join(DUE);
        let mut buckets: Vec<(i64, String)> = names(&due_dir)
            .into_iter()
            .filter_map(|b| Some((b.parse().ok()?, b)))
            .collect();
        buckets.sort_unstable();
        let mut at_once = Vec::new();
        let mut earliest: Option<i64> = None;
        for (_, bucket) in buckets {
            for name in names(&due_dir.join(&bucket)) {
                match parse_entry(&name) {
                    Some((issue, i64::MIN)) => at_once.push(issue),
                    Some((_, due)) => earliest = Some(earliest.map_or(due, |e| e.min(due))),
                    None => {}
                }
            }
            if earliest.is_some() {
                break;
            }
        }
        at_once.sort_unstable();
        at_once.dedup();
        Some((earliest, at_once))
    }

    /// Every key on disk, by issue (for a rebuild).
    pub(crate) fn all_keys(&self) -> BTreeMap<u64, Vec<PathBuf>> {
        let mut out: BTreeMap<u64, Vec<PathBuf>> = BTreeMap::new();
        for bucket in names(&self.dir.join(DUE)) {
            for name in names(&self.dir.join(DUE).join(&bucket)) {
                if let Some((issue, _)) = parse_entry(&name) {
                    out.entry(issue)
                        .or_default()
                        .push(Path::new(DUE).join(&bucket).join(name));
                }
            }
        }
        for name in names(&self.dir.join(CYCLE)) {
            if let Ok(issue) = name.parse::<u64>() {
                out.entry(issue)
                    .or_default()
                    .push(Path::new(CYCLE).join(name));
            }
        }
        for agent in names(&self.dir.join(ASKER)) {
            for name in names(&self.dir.join(ASKER).join(&agent)) {
                if let Some((issue, _)) = parse_entry(&name) {
                    out.entry(issue)
                        .or_default()
                        .push(Path::new(ASKER).join(&agent).join(name));
                }
            }
        }
        out
    }
}

/// The keys in `a` that are not in `b`.
pub(crate) fn minus(a: &[PathBuf], b: &[PathBuf]) -> Vec<PathBuf> {
    a.iter().filter(|k| !b.contains(k)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_round_trip_and_foreign_names_are_ignored() {
        assert_eq!(parse_entry("12.-5"), Some((12, -5)));
        assert_eq!(parse_entry(&format!("7.{}", i64::MIN)), Some((7, i64::MIN)));
        assert_eq!(parse_entry("012.5"), None);
        assert_eq!(parse_entry("x.5"), None);
        assert_eq!(parse_entry("12"), None);
        assert_eq!(agent_dir("engineer"), "engineer");
        assert_eq!(agent_dir("Eng/x"), "~456e672f78");
    }

    #[test]
    fn due_times_come_from_the_first_bucket_with_a_later_key() {
        let dir = tempfile::tempdir().unwrap();
        let ledgers = dir.path().join("ledgers");
        std::fs::create_dir_all(&ledgers).unwrap();
        let index = Index::new(dir.path(), ledgers);
        // No stamp yet: the index cannot be trusted, the caller reads the ledgers.
        assert_eq!(index.due_times(), None);
        let rebuild = index.begin_rebuild().unwrap();
        let keys: BTreeMap<u64, Vec<PathBuf>> = [
            (3, paths_of(3, Some(&FollowKeys::unreadable()))),
            (
                5,
                paths_of(5, Some(&FollowKeys::due_at(Some(BUCKET_MS * 9 + 7)))),
            ),
            (
                6,
                paths_of(6, Some(&FollowKeys::due_at(Some(BUCKET_MS * 4 + 2)))),
            ),
            (
                8,
                paths_of(8, Some(&FollowKeys::due_at(Some(BUCKET_MS * 4 + 1)))),
            ),
        ]
        .into_iter()
        .collect();
        let _ = index.finish_rebuild(&rebuild, &[], &keys);
        assert_eq!(index.due_times(), Some((Some(BUCKET_MS * 4 + 1), vec![3])));
    }

    #[test]
    fn a_key_lives_in_the_bucket_of_its_due_time() {
        let keys = FollowKeys {
            due: Some(BUCKET_MS * 3 + 1),
            cyclic: true,
            askers: [("pm".to_owned(), 5)].into_iter().collect(),
        };
        let paths = paths_of(9, Some(&keys));
        assert_eq!(
            paths,
            [
                PathBuf::from(format!("due/3/9.{}", BUCKET_MS * 3 + 1)),
                PathBuf::from("cycle/9"),
                PathBuf::from("asker/pm/9.5"),
            ]
        );
        let unreadable = paths_of(4, Some(&FollowKeys::unreadable()));
        assert_eq!(
            unreadable,
            [PathBuf::from(format!(
                "due/{}/4.{}",
                i64::MIN.div_euclid(BUCKET_MS),
                i64::MIN
            ))]
        );
    }
}
