//! Cross-process locks: `<file>.lock`, created atomically (create-new), holding
//! `{"pid", "hostname", "timestamp", "agent"}`. A lock is stale when older than `stale_lock_ms`
//! or when its pid is dead on this host; a stale lock is broken and acquisition retried.
//! The reference PowerShell CLI's locks (`{"agent", "created"}`) are understood; an unreadable
//! lock is judged by its mtime alone. Waiting backs off exponentially with jitter from about
//! 1 ms to a 50 ms cap, up to `lock_timeout_ms`. Locks live in real time: the system clock,
//! never `--now`.
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

use crate::atomic::refuse_symlink;
use crate::io_error;

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
pub(crate) fn this_host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default()
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
pub(crate) fn pid_alive(pid: u64) -> bool {
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

/// The lock's bytes, if they show a stale lock: older than `stale_ms`, or held by a process
/// that is gone from this host. The bytes are what was judged: only a lock still holding
/// exactly them may be broken (a released lock's pid is dead too, and by then someone else
/// may hold a fresh one).
fn stale_bytes(lock: &Path, policy: LockPolicy) -> Option<Vec<u8>> {
    let bytes = std::fs::read(lock).ok()?;
    let now = wall_ms();
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let stamp = parsed.as_ref().and_then(|v| {
        v.get("timestamp").and_then(Value::as_i64).or_else(|| {
            // PowerShell locks: {"agent", "created": "<ISO time>"}.
            v.get("created")
                .and_then(Value::as_str)
                .and_then(agentx_clarify_core::time::parse_ms)
        })
    });
    let age = match stamp {
        Some(t) => now.saturating_sub(t),
        None => {
            // Unreadable (possibly half-written): judged by mtime only.
            let mtime = std::fs::metadata(lock).and_then(|m| m.modified()).ok()?;
            i64::try_from(
                SystemTime::now()
                    .duration_since(mtime)
                    .unwrap_or_default()
                    .as_millis(),
            )
            .unwrap_or(i64::MAX)
        }
    };
    if age > i64::try_from(policy.stale_ms).unwrap_or(i64::MAX) {
        return Some(bytes);
    }
    let v = parsed?;
    let pid = v.get("pid").and_then(Value::as_u64)?;
    let host = v.get("hostname").and_then(Value::as_str)?;
    (host == this_host() && !pid_alive(pid)).then_some(bytes)
}

/// Removes the lock only if it still holds exactly `judged`. Breakers take turns under a
/// kernel lock (`flock`) on `<lock>.break`, so no breaker can remove a lock another one just
/// let someone create: with breakers serialised, a file still holding the judged bytes can
/// only be that stale lock (its owner is gone and cannot release or rewrite it; a lock stale
/// by age alone has a limit, docs/decisions.md "Locks"). The kernel
/// ends a dead breaker's turn and a slow one keeps it, so no timeout guesses at either. The
/// turn file is removed by the breaker holding it; a breaker that locked a file already
/// removed (it opened it just before) sees a different inode at the path and tries again.
pub(crate) fn break_stale(lock: &Path, judged: &[u8]) {
    let mut name = lock.file_name().unwrap_or_default().to_os_string();
    name.push(".break");
    let path = lock.with_file_name(name);
    let turn = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path);
    // Busy (another breaker is at work) or unusable: the caller polls again.
    let Ok(turn) = turn else { return };
    if turn.try_lock().is_err() || !same_file(&turn, &path) {
        return;
    }
    if std::fs::read(lock).is_ok_and(|now| now == judged) {
        let _ = std::fs::remove_file(lock);
    }
    // Removed while still locked; the turn ends when `turn` is dropped.
    let _ = std::fs::remove_file(&path);
}

/// Whether `path` still names the file `open` refers to.
fn same_file(open: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (open.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
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
                    Some(content) => {
                        return Ok(FileLock {
                            path: lock,
                            content,
                            _local: guard,
                        })
                    }
                    None => local = Some(guard),
                }
            }
            let waited = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
            if waited >= policy.timeout_ms {
                return Err(ClarifyError::LockTimeout {
                    path: target.display().to_string(),
                    ms: policy.timeout_ms,
                });
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

/// One attempt: `Some(content)` when the lock is ours, `None` when someone else holds it.
/// A stale lock is broken and the creation retried at once: a dead writer costs no backoff.
fn try_create(
    lock: &Path,
    agent: &str,
    policy: LockPolicy,
) -> Result<Option<Vec<u8>>, ClarifyError> {
    if let Some(content) = create_lock_file(lock, agent)? {
        return Ok(Some(content));
    }
    refuse_symlink(lock)?;
    let Some(judged) = stale_bytes(lock, policy) else {
        return Ok(None);
    };
    break_stale(lock, &judged);
    create_lock_file(lock, agent)
}

/// Creates the lock file (create-new) with our identity; `None` if it already exists.
fn create_lock_file(lock: &Path, agent: &str) -> Result<Option<Vec<u8>>, ClarifyError> {
    let content = serde_json::to_vec(&json!({
        "pid": std::process::id(),
        "hostname": this_host(),
        "timestamp": wall_ms(),
        "agent": agent,
    }))
    .unwrap_or_default();
    match OpenOptions::new().write(true).create_new(true).open(lock) {
        Ok(mut file) => {
            if let Err(e) = file.write_all(&content) {
                let _ = std::fs::remove_file(lock);
                return Err(io_error("write", lock, &e));
            }
            Ok(Some(content))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(io_error("create", lock, &e)),
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Remove only our own lock: if it was broken as stale and retaken, it is not ours.
        if std::fs::read(&self.path).is_ok_and(|bytes| bytes == self.content) {
            let _ = std::fs::remove_file(&self.path);
        }
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

    #[test]
    fn lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-1.json");
        let held = FileLock::acquire(&target, "a", policy()).unwrap();
        let lock = lock_path(&target);
        let content: Value = serde_json::from_slice(&std::fs::read(&lock).unwrap()).unwrap();
        assert_eq!(content["agent"], "a");
        assert_eq!(content["pid"], std::process::id());
        let other =
            std::thread::spawn(move || FileLock::acquire(&target, "b", policy()).map(|_| ()));
        let err = other.join().unwrap().unwrap_err();
        assert_eq!(err.code(), "LOCK_TIMEOUT");
        drop(held);
        assert!(!lock.exists());
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
    fn breaking_removes_only_the_lock_that_was_judged() {
        // The race this guards against: B reads A's lock, A releases it and exits, B finds A's
        // pid gone and judges those bytes stale, C meanwhile holds a fresh lock. B must not
        // remove C's lock.
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_path(&dir.path().join("issue-4.json"));
        let judged = json!({"pid": 999_999_999u64, "hostname": this_host(), "timestamp": wall_ms(), "agent": "a"}).to_string();
        let fresh = json!({"pid": std::process::id(), "hostname": this_host(), "timestamp": wall_ms(), "agent": "c"}).to_string();
        std::fs::write(&lock, &fresh).unwrap();
        break_stale(&lock, judged.as_bytes());
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            fresh,
            "a fresh lock survives"
        );
        std::fs::write(&lock, &judged).unwrap();
        assert_eq!(
            stale_bytes(&lock, policy()).as_deref(),
            Some(judged.as_bytes())
        );
        break_stale(&lock, judged.as_bytes());
        assert!(!lock.exists(), "the stale lock itself is removed");
        // While another breaker holds its turn, nothing is removed.
        std::fs::write(&lock, &judged).unwrap();
        let turn = std::fs::File::create(lock.with_file_name("issue-4.json.lock.break")).unwrap();
        turn.lock().unwrap();
        break_stale(&lock, judged.as_bytes());
        assert!(lock.exists());
        drop(turn);
    }

    #[test]
    fn symlinked_locks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("issue-3.json");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), lock_path(&target)).unwrap();
        assert_eq!(
            FileLock::acquire(&target, "a", policy())
                .err()
                .map(|e| e.code()),
            Some("IO_ERROR")
        );
    }
}
