//! Cross-process locks: `<file>.lock`, holding `{"pid", "hostname", "timestamp", "agent"}`,
//! created with its content in one atomic step (docs/protocol.md §20): the content is written to a temp
//! file, which is then `link`ed to the lock's name (`EEXIST`: someone holds it), so a writer
//! killed at any instant leaves no lock or a complete one — never an empty one that nobody
//! can judge but by its age.
//!
//! A lock is stale when its file is older than `stale_lock_ms` by its mtime (whatever time it
//! claims: a future-dated lock ages like any other), when the time it claims is that old, or
//! when its pid is dead on this host; a stale lock is broken and acquisition retried. The
//! reference PowerShell CLI's locks (`{"agent", "created"}`) are understood; an unreadable lock
//! is judged by its mtime alone (and is stale when it predates this host's boot: power lost
//! before its content reached the disk). A stale lock that cannot be removed (a read-only
//! filesystem) fails at once with `IO_ERROR`. Waiting backs off exponentially with jitter from
//! about 1 ms to a 50 ms cap, up to `lock_timeout_ms`; `LOCK_TIMEOUT` names the lock file, its
//! holder and its age. Locks live in real time: the system clock, never `--now`.
//!
//! Inside one process (the Node binding serves many callers), operations on the same file are
//! first serialised on an in-process mutex, so threads queue instead of spinning on the file.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::{Duration, SystemTime};

use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::atomic::{refuse_symlink, TEMP_PREFIX};
use crate::io_error;
use crate::read::read_with_metadata;

/// Timing of lock acquisition.
#[derive(Clone, Copy, Debug)]
pub struct LockPolicy {
    pub timeout_ms: u64,
    pub stale_ms: u64,
}

/// A held lock; released (the lock file removed) when dropped, also on error paths.
pub struct FileLock {
    path: PathBuf,
    content: Vec<u8>,
    _local: MutexGuard<'static, ()>,
}

use crate::clock::system_now_ms as wall_ms;

/// This machine's name, asked once: every poll of a held lock compares against it.
pub fn this_host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

/// When this host booted (Linux `/proc/stat`), asked once.
fn boot_time() -> Option<SystemTime> {
    static BOOT: OnceLock<Option<SystemTime>> = OnceLock::new();
    *BOOT.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let secs: u64 = stat
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
    })
}

/// The in-process mutex for a path (created on first use, kept for the process's life).
fn local_mutex(path: &Path) -> &'static Mutex<()> {
    static MAP: OnceLock<Mutex<HashMap<PathBuf, &'static Mutex<()>>>> = OnceLock::new();
    let map = MAP.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    map.entry(path.to_path_buf())
        .or_insert_with(|| Box::leak(Box::new(Mutex::new(()))))
}

/// Whether a process with this pid exists on this host (Linux `/proc`; a zombie is dead).
pub fn pid_alive(pid: u64) -> bool {
    let proc_dir = Path::new("/proc");
    if !proc_dir.exists() {
        return true; // cannot tell: only age decides
    }
    match std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")) {
        Err(_) => false,
        // "pid (comm) S ..." — the state follows the last ')'.
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Who holds a lock, as its file says, and how old the file is.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    who: String,
    age_ms: u64,
}

/// What a lock file was found to be.
enum Seen {
    /// Released meanwhile.
    Gone,
    Held(Holder),
    /// Stale: these bytes (and only a lock still holding exactly them) may be broken.
    Stale(Vec<u8>, Holder),
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Reads and judges the lock. Stale: older than `stale_ms` by its mtime or by the time it
/// claims, or held by a process that is gone from this host. The bytes are what was judged:
/// a released lock's pid is dead too, and by then someone else may hold a fresh one.
fn judge(lock: &Path, policy: LockPolicy) -> Result<Seen, ClarifyError> {
    let Some((bytes, meta)) = read_with_metadata(lock)? else {
        return Ok(Seen::Gone);
    };
    let mtime = meta.modified().unwrap_or_else(|_| SystemTime::now());
    let age_ms = age_ms(&meta);
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let claimed = parsed.as_ref().and_then(|v| {
        v.get("timestamp").and_then(Value::as_i64).or_else(|| {
            // PowerShell locks: {"agent", "created": "<ISO time>"}.
            v.get("created")
                .and_then(Value::as_str)
                .and_then(agentx_clarify_core::time::parse_ms)
        })
    });
    let claimed_age = claimed.map_or(0, |t| {
        u64::try_from(wall_ms().saturating_sub(t)).unwrap_or(0)
    });
    let holder = Holder {
        who: describe(parsed.as_ref(), bytes.is_empty()),
        age_ms,
    };
    let too_old = age_ms > policy.stale_ms || claimed_age > policy.stale_ms;
    // Unreadable and older than this boot: power was lost before its content reached disk.
    let before_boot = parsed.is_none() && boot_time().is_some_and(|boot| mtime < boot);
    let dead = parsed.as_ref().is_some_and(|v| {
        let pid = v.get("pid").and_then(Value::as_u64);
        let host = v.get("hostname").and_then(Value::as_str);
        matches!((pid, host), (Some(pid), Some(host)) if host == this_host() && !pid_alive(pid))
    });
    Ok(if too_old || before_boot || dead {
        Seen::Stale(bytes, holder)
    } else {
        Seen::Held(holder)
    })
}

/// `agent 'engineer' (pid 4242 on host box)`, as much as the lock file tells.
fn describe(parsed: Option<&Value>, empty: bool) -> String {
    let Some(v) = parsed else {
        return String::from(if empty {
            "an empty lock file (no holder recorded)"
        } else {
            "an unreadable lock file (no holder recorded)"
        });
    };
    // Whatever a lock file says goes into a one-line message: escaped, and cut.
    let shown = |s: &str| {
        s.chars()
            .take(80)
            .collect::<String>()
            .escape_debug()
            .to_string()
    };
    let text = |key: &str| match v.get(key) {
        Some(Value::String(s)) => Some(format!("'{}'", shown(s))),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let place = match (text("pid"), v.get("hostname").and_then(Value::as_str)) {
        (Some(pid), Some(host)) => format!(" (pid {pid} on host {})", shown(host)),
        (Some(pid), None) => format!(" (pid {pid})"),
        (None, Some(host)) => format!(" (on host {})", shown(host)),
        (None, None) => String::new(),
    };
    match text("agent") {
        Some(agent) => format!("agent {agent}{place}"),
        None if place.is_empty() => String::from("a lock file that names no holder"),
        None => format!("a process{place}"),
    }
}

/// Errors that polling cannot cure: the lock can never be created or broken here.
fn hopeless(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EROFS | libc::EACCES | libc::EPERM | libc::ENXIO)
    )
}

/// Removes the lock only if it still holds exactly `judged`. Breakers take turns under a
/// kernel lock (`flock`) on `<lock>.break`, so no breaker can remove a lock another one just
/// let someone create: with breakers serialised, a file still holding the judged bytes can
/// only be that stale lock (its owner is gone and cannot release or rewrite it; a lock stale
/// by age alone has a limit, docs/decisions.md "Locks"). The kernel
/// ends a dead breaker's turn and a slow one keeps it, so no timeout guesses at either. The
/// turn file is removed by the breaker holding it; a breaker that locked a file already
/// removed (it opened it just before) sees a different inode at the path and tries again.
/// A lock that cannot be broken here (read-only filesystem, no permission) is an error.
pub(crate) fn break_stale(lock: &Path, judged: &[u8]) -> Result<(), ClarifyError> {
    let mut name = lock.file_name().unwrap_or_default().to_os_string();
    name.push(".break");
    let path = lock.with_file_name(name);
    let turn = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(crate::atomic::NEW_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path);
    let turn = match turn {
        Ok(turn) => turn,
        Err(e) if hopeless(&e) => {
            return Err(io_error("break the stale lock with", &path, &e));
        }
        // Otherwise unusable for now: the caller polls again.
        Err(_) => return Ok(()),
    };
    // Busy: another breaker is at work.
    if turn.try_lock().is_err() || !same_file(&turn, &path) {
        return Ok(());
    }
    let still = read_with_metadata(lock).ok().flatten();
    let result = match still {
        Some((now, _)) if now == judged => match std::fs::remove_file(lock) {
            Err(e) if hopeless(&e) => Err(io_error("remove the stale lock", lock, &e)),
            _ => Ok(()),
        },
        _ => Ok(()),
    };
    // Removed while still locked; the turn ends when `turn` is dropped.
    let _ = std::fs::remove_file(&path);
    result
}

/// Whether `path` still names the file `open` refers to.
fn same_file(open: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (open.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The outcome of one attempt.
enum Attempt {
    Acquired(Vec<u8>),
    Held(Holder),
}

impl FileLock {
    /// Locks `target` (`<target>.lock`) for `agent`.
    pub fn acquire(
        target: &Path,
        agent: &str,
        policy: LockPolicy,
    ) -> Result<FileLock, ClarifyError> {
        let lock = lock_path(target);
        refuse_symlink(target)?;
        refuse_symlink(&lock)?;
        let local_mutex = local_mutex(&lock);
        let mut local: Option<MutexGuard<'static, ()>> = None;
        let start = std::time::Instant::now();
        let mut delay_us: u64 = 1000;
        let mut last_seen = None;
        loop {
            if local.is_none() {
                local = match local_mutex.try_lock() {
                    Ok(guard) => Some(guard),
                    Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
                    Err(TryLockError::WouldBlock) => None,
                };
            }
            if let Some(guard) = local.take() {
                match try_create(&lock, agent, policy)? {
                    Attempt::Acquired(content) => {
                        return Ok(FileLock {
                            path: lock,
                            content,
                            _local: guard,
                        })
                    }
                    Attempt::Held(holder) => {
                        last_seen = Some(holder);
                        local = Some(guard);
                    }
                }
            }
            let waited = ms(start.elapsed());
            if waited >= policy.timeout_ms {
                return Err(timeout(&lock, policy, last_seen));
            }
            // Exponential backoff with jitter: ~1 ms doubling to a 50 ms cap.
            let jittered = delay_us / 2 + fastrand::u64(0..=delay_us);
            let left_us = policy
                .timeout_ms
                .saturating_sub(waited)
                .saturating_mul(1000)
                .max(100);
            std::thread::sleep(Duration::from_micros(jittered.min(left_us)));
            delay_us = (delay_us * 2).min(50_000);
        }
    }
}

/// `LOCK_TIMEOUT`, naming the lock, its holder and its age as they are now (else as last
/// seen; a holder inside this process was never seen through the file).
fn timeout(lock: &Path, policy: LockPolicy, last_seen: Option<Holder>) -> ClarifyError {
    let holder = match judge(lock, policy) {
        Ok(Seen::Held(h) | Seen::Stale(_, h)) => Some(h),
        _ => last_seen,
    }
    .unwrap_or_else(|| Holder {
        who: format!(
            "another operation of this process (pid {})",
            std::process::id()
        ),
        age_ms: 0,
    });
    ClarifyError::LockTimeout {
        lock: lock.display().to_string(),
        ms: policy.timeout_ms,
        holder: holder.who,
        age_ms: holder.age_ms,
    }
}

/// One attempt: the lock is ours, or someone else holds it. A stale lock is broken and the
/// link retried at once (a dead writer costs no backoff), as is a lock released meanwhile.
fn try_create(lock: &Path, agent: &str, policy: LockPolicy) -> Result<Attempt, ClarifyError> {
    let (temp, content) = lock_temp(lock, agent)?;
    let mut seen = None;
    for _ in 0..3 {
        if link(temp.path(), lock, &content)? {
            return Ok(Attempt::Acquired(content));
        }
        match judge(lock, policy)? {
            Seen::Gone => {}
            Seen::Held(holder) => return Ok(Attempt::Held(holder)),
            Seen::Stale(judged, holder) => {
                break_stale(lock, &judged)?;
                seen = Some(holder);
            }
        }
    }
    // Taken again each time it was freed: someone else holds it now.
    Ok(Attempt::Held(seen.unwrap_or_else(|| Holder {
        who: String::from("another process"),
        age_ms: 0,
    })))
}

/// A temp file (beside the lock, so it can be linked; a crashed writer's is swept with the
/// others) holding our identity. It is unlinked when dropped; the lock keeps the inode.
fn lock_temp(lock: &Path, agent: &str) -> Result<(tempfile::NamedTempFile, Vec<u8>), ClarifyError> {
    let content = serde_json::to_vec(&json!({
        "pid": std::process::id(),
        "hostname": this_host(),
        "timestamp": wall_ms(),
        "agent": agent,
    }))
    .unwrap_or_default();
    let dir = lock.parent().unwrap_or_else(|| Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // Readable by every user who may judge it, writable by none of them (0644 less the umask).
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(
        crate::atomic::NEW_FILE_MODE,
    ));
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(|e| io_error("create a lock in", dir, &e))?;
    temp.write_all(&content)
        .map_err(|e| io_error("write a lock in", dir, &e))?;
    Ok((temp, content))
}

/// Links the temp file to the lock name: `false` if the lock exists. On a filesystem without
/// hard links the lock is created in place instead (create-new, then write: a crash there can
/// leave an empty lock, judged by its age).
fn link(temp: &Path, lock: &Path, content: &[u8]) -> Result<bool, ClarifyError> {
    match std::fs::hard_link(temp, lock) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS)
            ) =>
        {
            create_in_place(lock, content)
        }
        Err(e) => Err(io_error("create", lock, &e)),
    }
}

/// Creates `lock` holding `content` (create-new, never through a link); `false` if something is
/// there already. Locks and routing leases (`lease.rs`) are both taken this way.
pub(crate) fn create_in_place(lock: &Path, content: &[u8]) -> Result<bool, ClarifyError> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(crate::atomic::NEW_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(lock)
    {
        Ok(mut file) => {
            if let Err(e) = file.write_all(content) {
                let _ = std::fs::remove_file(lock);
                return Err(io_error("write", lock, &e));
            }
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error("create", lock, &e)),
    }
}

/// Removes `path` only if it still holds `content`: a lock (or lease) broken as stale and
/// taken by another process is theirs now. Best effort.
pub(crate) fn remove_if_ours(path: &Path, content: &[u8]) {
    if read_with_metadata(path)
        .ok()
        .flatten()
        .is_some_and(|(bytes, _)| bytes == content)
    {
        let _ = std::fs::remove_file(path);
    }
}

/// The age of a file by its mtime (a file dated in the future is as old as a new one).
pub(crate) fn age_ms(meta: &std::fs::Metadata) -> u64 {
    let mtime = meta.modified().unwrap_or_else(|_| SystemTime::now());
    ms(SystemTime::now().duration_since(mtime).unwrap_or_default())
}

impl Drop for FileLock {
    fn drop(&mut self) {
        remove_if_ours(&self.path, &self.content);
    }
}

pub fn lock_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    target.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> LockPolicy {
        LockPolicy {
            timeout_ms: 300,
            stale_ms: 30_000,
        }
    }

    /// Sets a file's mtime `ago` in the past (`touch -d @secs`).
    fn age(path: &Path, ago: Duration) {
        let when = SystemTime::now() - ago;
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(when).unwrap();
    }

    #[test]
    fn lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-1.json");
        let held = FileLock::acquire(&target, "a", policy()).unwrap();
        let lock = lock_path(&target);
        let content: Value = serde_json::from_slice(&std::fs::read(&lock).unwrap()).unwrap();
        assert_eq!(content["agent"], "a");
        assert_eq!(content["pid"], std::process::id());
        // The temp file it was linked from is gone: the lock is the only name left.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![lock.file_name().unwrap().to_owned()]);
        let other =
            std::thread::spawn(move || FileLock::acquire(&target, "b", policy()).map(|_| ()));
        let err = other.join().unwrap().unwrap_err();
        assert_eq!(err.code(), "LOCK_TIMEOUT");
        drop(held);
        assert!(!lock.exists());
    }

    #[test]
    fn timeouts_name_the_lock_its_holder_and_its_age() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-9.json");
        let lock = lock_path(&target);
        // Held by a live process (this one) on another host's name: never judged dead.
        std::fs::write(&lock, json!({"pid": 77, "hostname": "elsewhere", "timestamp": wall_ms(), "agent": "engineer"}).to_string()).unwrap();
        age(&lock, Duration::from_secs(3));
        let err = FileLock::acquire(&target, "a", policy()).err().unwrap();
        let ClarifyError::LockTimeout {
            lock: named,
            ms,
            holder,
            age_ms,
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(named, &lock.display().to_string());
        assert_eq!(*ms, 300);
        assert_eq!(holder, "agent 'engineer' (pid 77 on host elsewhere)");
        assert!((3000..10_000).contains(age_ms), "{age_ms}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("could not lock {} within 300 ms: it is held by agent 'engineer' (pid 77 on host elsewhere), for ", lock.display())), "{text}");
    }

    #[test]
    fn dead_pid_and_old_locks_are_broken_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-2.json");
        let lock = lock_path(&target);
        // A pid far above pid_max cannot exist.
        std::fs::write(&lock, json!({"pid": 999_999_999u64, "hostname": this_host(), "timestamp": wall_ms(), "agent": "x"}).to_string()).unwrap();
        let t = std::time::Instant::now();
        drop(FileLock::acquire(&target, "a", policy()).unwrap());
        assert!(t.elapsed() < Duration::from_millis(200));
        // A PowerShell lock from an hour ago.
        std::fs::write(
            &lock,
            r#"{"agent":"engineer","created":"2000-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        drop(FileLock::acquire(&target, "a", policy()).unwrap());
        // A fresh PowerShell lock is respected.
        let fresh = chrono::DateTime::from_timestamp_millis(wall_ms())
            .unwrap()
            .to_rfc3339();
        std::fs::write(
            &lock,
            json!({"agent": "engineer", "created": fresh}).to_string(),
        )
        .unwrap();
        assert_eq!(
            FileLock::acquire(&target, "a", policy())
                .err()
                .map(|e| e.code()),
            Some("LOCK_TIMEOUT")
        );
    }

    #[test]
    fn future_dated_locks_age_by_their_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-5.json");
        let lock = lock_path(&target);
        for content in [
            r#"{"agent":"x","created":"2999-01-01T00:00:00Z"}"#.to_owned(),
            json!({"pid": 1, "hostname": "elsewhere", "timestamp": i64::MAX, "agent": "x"})
                .to_string(),
        ] {
            std::fs::write(&lock, &content).unwrap();
            // Fresh by its mtime: held.
            assert_eq!(
                FileLock::acquire(&target, "a", policy())
                    .err()
                    .map(|e| e.code()),
                Some("LOCK_TIMEOUT"),
                "{content}"
            );
            // An hour old by its mtime: stale, whatever it claims.
            age(&lock, Duration::from_secs(3600));
            let t = std::time::Instant::now();
            drop(FileLock::acquire(&target, "a", policy()).unwrap());
            assert!(t.elapsed() < Duration::from_millis(200), "{content}");
        }
    }

    #[test]
    fn empty_locks_from_before_this_boot_are_stale() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-6.json");
        let lock = lock_path(&target);
        std::fs::write(&lock, "").unwrap();
        assert_eq!(
            FileLock::acquire(&target, "a", policy())
                .err()
                .map(|e| e.to_string().contains("an empty lock file")),
            Some(true)
        );
        let boot = boot_time().expect("/proc/stat has btime");
        let file = std::fs::File::options().write(true).open(&lock).unwrap();
        file.set_modified(boot - Duration::from_secs(1)).unwrap();
        // Not old by stale_ms (it could be: pretend stale_ms is longer than the uptime).
        let long = LockPolicy {
            timeout_ms: 300,
            stale_ms: u64::MAX,
        };
        drop(FileLock::acquire(&target, "a", long).unwrap());
    }

    #[test]
    fn breaking_removes_only_the_lock_that_was_judged() {
        // The race this guards against: B reads A's lock, A releases it and exits, B finds A's
        // pid gone and judges those bytes stale, C meanwhile holds a fresh lock. B must not
        // remove C's lock.
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_path(&dir.path().join("issue-4.json"));
        let judged = json!({"pid": 999_999_999u64, "hostname": this_host(), "timestamp": wall_ms(), "agent": "a"}).to_string();
        let fresh = json!({"pid": std::process::id(), "hostname": this_host(), "timestamp": wall_ms(), "agent": "c"}).to_string();
        std::fs::write(&lock, &fresh).unwrap();
        break_stale(&lock, judged.as_bytes()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            fresh,
            "a fresh lock survives"
        );
        std::fs::write(&lock, &judged).unwrap();
        assert!(
            matches!(judge(&lock, policy()).unwrap(), Seen::Stale(b, _) if b == judged.as_bytes())
        );
        break_stale(&lock, judged.as_bytes()).unwrap();
        assert!(!lock.exists(), "the stale lock itself is removed");
        // While another breaker holds its turn, nothing is removed.
        std::fs::write(&lock, &judged).unwrap();
        let turn = std::fs::File::create(lock.with_file_name("issue-4.json.lock.break")).unwrap();
        turn.lock().unwrap();
        break_stale(&lock, judged.as_bytes()).unwrap();
        assert!(lock.exists());
        drop(turn);
    }

    #[test]
    fn symlinked_and_fifo_locks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-3.json");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), lock_path(&target)).unwrap();
        assert_eq!(
            FileLock::acquire(&target, "a", policy())
                .err()
                .map(|e| e.code()),
            Some("IO_ERROR")
        );
        let target = dir.path().join("issue-7.json");
        let status = std::process::Command::new("mkfifo")
            .arg(lock_path(&target))
            .status()
            .unwrap();
        assert!(status.success());
        let err = FileLock::acquire(&target, "a", policy()).err().unwrap();
        assert_eq!(err.code(), "IO_ERROR");
        assert!(err.to_string().contains("FIFO"), "{err}");
    }
}
