//! The stamp: what the clarifications directory looked like when the markers were last known
//! to name every ledger that can need action. A directory's modification time changes
//! whenever an entry in it is created, removed or renamed — a new ledger, a ledger replaced by
//! rename (`git checkout`, editors that save by rename, every atomic writer), and the lock file
//! every AgentX tool creates and removes around a write — so one `stat` tells whether anyone
//! touched the directory since. Our own writers touch it too; they say so by advancing the
//! stamp after their work (`Session`), and while one of them is at work a changed directory
//! is theirs to explain (`writers_busy`).

use std::fs::{File, OpenOptions};
use std::path::Path;

use serde_json::{json, Value};

/// Bumped when the meaning of the index files changes: an index of another format is rebuilt.
const FORMAT: u64 = 1;

/// The directory's identity and modification time, to the nanosecond the filesystem keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DirStamp {
    dev: u64,
    ino: u64,
    sec: i64,
    nsec: i64,
}

impl DirStamp {
    /// The stamp of `dir` now; `None` when it does not exist or cannot be read.
    pub(crate) fn of(dir: &Path) -> Option<DirStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(dir).ok()?;
        meta.is_dir().then(|| DirStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            sec: meta.mtime(),
            nsec: meta.mtime_nsec(),
        })
    }
}

/// The stamp file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// `false` while the markers are known to be incomplete: only a rebuild sets it again.
    pub valid: bool,
    pub dir: Option<DirStamp>,
    /// How many times the stamp was invalidated: a rebuild validates only if nobody
    /// invalidated it while the rebuild was reading.
    pub invalidations: u64,
}

impl Stamp {
    pub(crate) fn invalid() -> Stamp {
        Stamp {
            valid: false,
            dir: None,
            invalidations: 0,
        }
    }

    /// Whether the markers can be trusted for a directory that now looks like `now`.
    pub(crate) fn matches(&self, now: Option<DirStamp>) -> bool {
        self.valid && self.dir.is_some() && self.dir == now
    }

    fn to_json(self) -> String {
        let dir = self
            .dir
            .map(|d| json!([d.dev, d.ino, d.sec, d.nsec]))
            .unwrap_or(Value::Null);
        json!({"format": FORMAT, "valid": self.valid, "dir": dir, "invalidations": self.invalidations})
            .to_string()
    }

    fn parse(bytes: &[u8]) -> Option<Stamp> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        if v.get("format")?.as_u64()? != FORMAT {
            return None;
        }
        let dir = match v.get("dir")? {
            Value::Null => None,
            Value::Array(a) => match a.as_slice() {
                [dev, ino, sec, nsec] => Some(DirStamp {
                    dev: dev.as_u64()?,
                    ino: ino.as_u64()?,
                    sec: sec.as_i64()?,
                    nsec: nsec.as_i64()?,
                }),
                _ => return None,
            },
            _ => return None,
        };
        Some(Stamp {
            valid: v.get("valid")?.as_bool()?,
            dir,
            invalidations: v.get("invalidations")?.as_u64()?,
        })
    }
}

/// Reads the stamp; a missing, unreadable or foreign one reads as invalid.
pub(crate) fn read(path: &Path) -> Stamp {
    std::fs::read(path)
        .ok()
        .and_then(|b| Stamp::parse(&b))
        .unwrap_or_else(Stamp::invalid)
}

/// Replaces the stamp (temp file and rename, no fsync: after a crash a lost or older stamp
/// no longer matches the directory, and the index is rebuilt — it is a cache).
pub(crate) fn write(path: &Path, stamp: Stamp) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(crate::atomic::TEMP_PREFIX)
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, stamp.to_json().as_bytes())?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

/// Runs `f` on the stamp under an exclusive kernel lock (`flock`, released by the kernel if
/// this process dies, so it is never stale), writing back what `f` returns, if anything.
pub(crate) fn update(
    lock: &Path,
    path: &Path,
    f: impl FnOnce(Stamp) -> Option<Stamp>,
) -> std::io::Result<()> {
    let guard = open_rw(lock)?;
    guard.lock()?;
    let current = read(path);
    if let Some(next) = f(current) {
        if next != current {
            write(path, next)?;
        }
    }
    Ok(())
}

/// Opens (creating) a file used only for its kernel locks.
pub(crate) fn open_rw(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_and_foreign_ones_read_as_invalid() {
        let s = Stamp {
            valid: true,
            dir: Some(DirStamp {
                dev: 1,
                ino: 2,
                sec: 3,
                nsec: 4,
            }),
            invalidations: 5,
        };
        assert_eq!(Stamp::parse(s.to_json().as_bytes()), Some(s));
        assert_eq!(Stamp::parse(b"{\"format\":2}"), None);
        assert_eq!(Stamp::parse(b"not json"), None);
        let dir = tempfile::tempdir().unwrap();
        assert!(!read(&dir.path().join("missing")).valid);
    }

    #[test]
    fn a_directory_stamp_changes_when_an_entry_does() {
        let dir = tempfile::tempdir().unwrap();
        let before = DirStamp::of(dir.path()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.path().join("issue-1.json"), "{}").unwrap();
        let after = DirStamp::of(dir.path()).unwrap();
        assert_ne!(before, after);
        // An in-place rewrite leaves the directory as it was: only a full scan sees it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.path().join("issue-1.json"), "{\"x\":1}").unwrap();
        assert_eq!(DirStamp::of(dir.path()).unwrap(), after);
    }
}
