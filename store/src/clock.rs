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
