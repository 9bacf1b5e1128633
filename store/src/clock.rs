//! The one clock reading of the workspace, overridable with `--now` / `AGENTX_NOW`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, from the system clock.
pub fn system_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses `--now`: RFC 3339 (truncated to whole milliseconds) or epoch milliseconds.
pub use agentx_clarify_core::time::parse_instant as parse_now;

/// For `scripts/bench-wake` only: when `AGENTX_BENCH_COMMIT_LOG` names a file or a pipe, each
/// ledger commit (the file store's rename, PostgreSQL's `COMMIT`) appends the time of the
/// machine's monotonic clock there (nanoseconds, one line; the clock every process of the
/// machine shares), so answer → wake is timed from the commit itself, by the answering
/// process's own clock. Unset (always, outside the bench): one look at the environment per
/// process.
pub fn bench_commit() {
    static LOG: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
    let Some(path) = LOG.get_or_init(|| std::env::var_os("AGENTX_BENCH_COMMIT_LOG")) else {
        return;
    };
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = std::io::Write::write_all(&mut f, format!("{ns}\n").as_bytes());
    }
}
