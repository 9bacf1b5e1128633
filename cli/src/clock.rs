//! The one clock reading of the workspace, overridable with `--now` / `AGENTX_NOW`.

use std::time::{SystemTime, UNIX_EPOCH};

use agentx_clarify_core::time::MAX_EPOCH_MS;

/// Milliseconds since the Unix epoch, from the system clock.
pub fn system_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses `--now`: RFC 3339 (truncated to whole milliseconds) or epoch milliseconds.
pub fn parse_now(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let ms = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<i64>()
            .map_err(|_| format!("'{text}' is too large for epoch milliseconds"))?
    } else {
        chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|_| {
                format!(
                    "'{text}' is neither RFC 3339 (2026-11-22T10:00:00Z) nor epoch milliseconds"
                )
            })?
            .timestamp_millis()
    };
    if (0..=MAX_EPOCH_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!("'{text}' is outside 1970-01-01 … 9999-12-31"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_now() {
        assert_eq!(parse_now("1795341600000"), Ok(1_795_341_600_000));
        assert_eq!(parse_now("2026-11-22T10:00:00Z"), Ok(1_795_341_600_000));
        assert_eq!(
            parse_now("2026-11-22T10:00:00.1239Z"),
            Ok(1_795_341_600_123),
            "truncated to ms"
        );
        assert!(parse_now("tomorrow").is_err());
        assert!(parse_now("-5").is_err());
    }
}
