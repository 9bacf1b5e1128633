//! Pauses the server's own tests ask for through the environment, so a test can hold a race
//! open (a late feed baseline, a view that lags the feed, a duty's lease held longer). They
//! exist only in a build with the `test-hooks` feature, which `agentx-cli`'s tests turn on
//! (its dev-dependency); a released `agentx` never reads these variables.

use std::time::Duration;

/// `AGENTX_TEST_FEED_BASELINE_DELAY_MS` takes the feed's baseline that much later, so a test
/// can show that no worker reads the store before it (`cli/tests/github.rs`), or take the
/// database away before the feed's first look (`cli/tests/pg_chaos.rs`).
pub(crate) const FEED_BASELINE: (&str, u64) = ("AGENTX_TEST_FEED_BASELINE_DELAY_MS", 5_000);

/// `AGENTX_TEST_OPEN_VIEW_DELAY_MS` holds each change back before the open-records view applies
/// it, so a test can show a page never answers from a view behind the feed
/// (`cli/tests/serve.rs`) and take the store away while a change waits (`cli/tests/pg_chaos.rs`).
pub(crate) const OPEN_VIEW: (&str, u64) = ("AGENTX_TEST_OPEN_VIEW_DELAY_MS", 10_000);

/// `AGENTX_TEST_OPEN_VIEW_MARK` names a file the view creates as it starts holding a change
/// back, so a test takes the store away while the change waits, not by guessing when the
/// feed has read it (a loaded CI machine read it seconds late).
pub(crate) const OPEN_VIEW_MARK: &str = "AGENTX_TEST_OPEN_VIEW_MARK";

/// `AGENTX_TEST_DUTY_HOLD_MS` holds a duty's lease that much longer before its pass, so a
/// second server on a loaded machine reliably tries while the first holds it, and a test can
/// stop the holder mid-hold (`cli/tests/duties.rs`).
pub(crate) const DUTY_HOLD: (&str, u64) = ("AGENTX_TEST_DUTY_HOLD_MS", 10_000);

/// The pause `hook` asks for, at most its cap (`None`: unset, unreadable, or a build without
/// the hooks).
#[cfg(feature = "test-hooks")]
pub(crate) fn pause((name, cap_ms): (&str, u64)) -> Option<Duration> {
    let ms: u64 = std::env::var(name).ok()?.parse().ok()?;
    Some(Duration::from_millis(ms.min(cap_ms)))
}

#[cfg(not(feature = "test-hooks"))]
pub(crate) fn pause(_: (&str, u64)) -> Option<Duration> {
    None
}

/// Creates the file the variable `name` names, if it is set (a build with the hooks only).
#[cfg(feature = "test-hooks")]
pub(crate) fn mark(name: &str) {
    if let Some(path) = std::env::var_os(name) {
        // A test waits for this file; failing to write it shows there as a timeout.
        let _ = std::fs::write(path, b"");
    }
}

#[cfg(not(feature = "test-hooks"))]
pub(crate) fn mark(_: &str) {}
