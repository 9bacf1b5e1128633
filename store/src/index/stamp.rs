//! The stamp: what the clarifications directory looked like when the markers were last known
//! to name every ledger that can need action. A directory's modification time changes
//! whenever an entry in it is created, removed or renamed — a new ledger, a ledger replaced by
//! rename (`git checkout`, editors that save by rename, every atomic writer), and the lock file
//! every AgentX tool creates and removes around a write — so one `stat` tells whether anyone
//! touched the directory since. Our own writers touch it too; they say so by advancing the
//! stamp after their work (`Session`), and while one of them is at work a changed directory
//! is theirs to explain (`writers_busy`).
//!
//! The stamp also names the boot it was written in (Linux's `boot_id`): the markers and keys
//! are created without syncing their directories — a process that dies leaves its page cache
//! to the kernel, so they are there for the next command — and only a power cut or a kernel
//! crash can lose one while the ledger it stands for survives. That is a reboot, so a stamp
//! of another boot matches nothing and the index is rebuilt (one full pass). Where the boot
//! cannot be known, every marker and key is synced before its ledger is written, as before.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Bumped when the meaning of the index files changes: an index of another format is rebuilt.
/// 2: written in place, padded to [`SIZE`], with a `check`. 3: the index has the follow-up's
/// keys (`due/`, `cycle/`, `asker/`): an index without them is rebuilt. 4: the stamp names its
/// boot (markers and keys are no longer synced where the boot is known).
const FORMAT: u64 = 4;

/// The stamp file's fixed length: every write covers the whole file, so none leaves a tail of
/// an older one. The longest stamp (every number at its widest) is about 190 bytes.
const SIZE: usize = 256;

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

/// This boot's id (Linux's `/proc/sys/kernel/random/boot_id`, as a number); 0 where it
/// cannot be read (then the index syncs what it creates).
pub(crate) fn boot_id() -> u128 {
    static BOOT: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .and_then(|t| u128::from_str_radix(&t.trim().replace('-', ""), 16).ok())
            .unwrap_or(0)
    })
}

/// Whether what the index creates must be synced before its ledger is written: only where
/// the boot is unknown (see the module's doc).
pub(crate) fn must_sync() -> bool {
    boot_id() == 0
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
    /// The boot it was written in ([`boot_id`]).
    pub boot: u128,
}

impl Stamp {
    pub(crate) fn invalid() -> Stamp {
        Stamp {
            valid: false,
            dir: None,
            invalidations: 0,
            boot: 0,
        }
    }

    /// Whether the markers can be trusted for a directory that now looks like `now`.
    pub(crate) fn matches(&self, now: Option<DirStamp>) -> bool {
        self.valid && self.dir.is_some() && self.dir == now && self.boot == boot_id()
    }

    fn to_json(self) -> String {
        let dir = self
            .dir
            .map(|d| json!([d.dev, d.ino, d.sec, d.nsec]))
            .unwrap_or(Value::Null);
        json!({
            "format": FORMAT,
            "valid": self.valid,
            "dir": dir,
            "invalidations": self.invalidations,
            "boot": format!("{:032x}", self.boot),
            "check": self.check(),
        })
        .to_string()
    }

    /// A digest of the fields: the file is rewritten in place, so a read that meets a write
    /// halfway, or a write a crash cut short, mixes two stamps — and fails this check.
    fn check(self) -> String {
        let d = self.dir.map_or([0; 4], |d| {
            [
                d.dev,
                d.ino,
                u64::from_ne_bytes(d.sec.to_ne_bytes()),
                u64::from_ne_bytes(d.nsec.to_ne_bytes()),
            ]
        });
        let text = format!(
            "{FORMAT} {} {} {} {} {} {} {} {:032x}",
            self.valid,
            self.dir.is_some(),
            d[0],
            d[1],
            d[2],
            d[3],
            self.invalidations,
            self.boot
        );
        let digest = Sha256::digest(text.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
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
        let stamp = Stamp {
            valid: v.get("valid")?.as_bool()?,
            dir,
            invalidations: v.get("invalidations")?.as_u64()?,
            boot: u128::from_str_radix(v.get("boot")?.as_str()?, 16).ok()?,
        };
        (v.get("check")?.as_str()? == stamp.check()).then_some(stamp)
    }
}

/// Reads the stamp under a shared lock on `lock` (so never halfway through a write); a
/// missing, unreadable, torn or foreign one reads as invalid.
pub(crate) fn read(lock: &Path, path: &Path) -> Stamp {
    // Without the lock file (no index yet) there is no writer to meet either.
    let guard = open_rw(lock).ok().filter(|f| f.lock_shared().is_ok());
    let stamp = read_unlocked(path);
    drop(guard);
    stamp
}

/// Through the one reader (docs/protocol.md §31): a link, a FIFO or a device where the stamp belongs
/// reads as invalid at once (the command's layout check names it), never a hang or a flood.
fn read_unlocked(path: &Path) -> Stamp {
    crate::read::read_capped(path, crate::read::MAX_TINY_FILE_BYTES, |b| {
        Ok(Stamp::parse(b))
    })
    .ok()
    .flatten()
    .flatten()
    .unwrap_or_else(Stamp::invalid)
}

/// Rewrites the stamp in place, padded to [`SIZE`], without fsync: after a crash a lost,
/// older or torn stamp no longer matches the directory (or fails its check), and the index is
/// rebuilt — it is a cache. In place, not by temp file and rename: replacing a file by rename
/// makes ext4 (`auto_da_alloc`) start writing its data at once, a journal round per stamp and
/// up to milliseconds per command on a busy disk; an overwrite within the file's block is a
/// page-cache copy.
pub(crate) fn write(path: &Path, stamp: Stamp) -> std::io::Result<()> {
    let mut bytes = stamp.to_json().into_bytes();
    if bytes.len() < SIZE {
        bytes.resize(SIZE - 1, b' ');
        bytes.push(b'\n');
    }
    let file = open_rw(path)?;
    file.write_all_at(&bytes, 0)?;
    // A file written otherwise (an older format, a hand) keeps no tail past the stamp.
    if file.metadata()?.len() != bytes.len() as u64 {
        file.set_len(bytes.len() as u64)?;
    }
    Ok(())
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
    let current = read_unlocked(path);
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
        .mode(crate::atomic::NEW_FILE_MODE)
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
            boot: boot_id(),
        };
        assert_eq!(Stamp::parse(s.to_json().as_bytes()), Some(s));
        assert_eq!(Stamp::parse(b"{\"format\":3}"), None);
        // A stamp of another boot is read but matches no directory: the index is rebuilt.
        let other_boot = Stamp {
            boot: boot_id().wrapping_add(1),
            ..s
        };
        assert_eq!(
            Stamp::parse(other_boot.to_json().as_bytes()),
            Some(other_boot)
        );
        assert!(!other_boot.matches(s.dir));
        assert!(s.matches(s.dir) || boot_id() == 0);
        assert_eq!(Stamp::parse(b"not json"), None);
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("lock");
        assert!(!read(&lock, &dir.path().join("missing")).valid);
    }

    #[test]
    fn a_stamp_mixed_from_two_writes_fails_its_check() {
        let old = Stamp {
            valid: true,
            dir: Some(DirStamp {
                dev: 2049,
                ino: 1_234_567,
                sec: 1_700_000_000,
                nsec: 111_111_111,
            }),
            invalidations: 3,
            boot: 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef,
        };
        let new = Stamp {
            dir: Some(DirStamp {
                nsec: 999_999_999,
                ..old.dir.unwrap()
            }),
            ..old
        };
        let (a, b) = (old.to_json(), new.to_json());
        assert_eq!(a.len(), b.len());
        // Every cut of a read that met the write halfway: new bytes up to it, old ones after.
        let torn: Vec<usize> = (1..a.len())
            .filter(|&cut| {
                let mixed = format!("{}{}", &b[..cut], &a[cut..]);
                mixed != a && mixed != b && Stamp::parse(mixed.as_bytes()).is_some()
            })
            .collect();
        assert_eq!(torn, Vec::<usize>::new(), "{a}\n{b}");
    }

    #[test]
    fn a_stamp_is_rewritten_in_place_at_its_fixed_size() {
        let dir = tempfile::tempdir().unwrap();
        let (lock, path) = (dir.path().join("lock"), dir.path().join("stamp"));
        // A longer file of an older format leaves no tail behind.
        std::fs::write(&path, "x".repeat(1000)).unwrap();
        let mut s = Stamp {
            valid: true,
            dir: None,
            invalidations: u64::MAX,
            boot: u128::MAX,
        };
        write(&path, s).unwrap();
        assert_eq!(read(&lock, &path), s);
        s.invalidations = 0;
        update(&lock, &path, |_| Some(s)).unwrap();
        assert_eq!(read(&lock, &path), s);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE as u64);
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(&path).unwrap().ino();
        s.valid = false;
        update(&lock, &path, |_| Some(s)).unwrap();
        assert_eq!(read(&lock, &path), s);
        assert_eq!(
            std::fs::metadata(&path).unwrap().ino(),
            ino,
            "the same file"
        );
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
