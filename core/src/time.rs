//! Timestamps: RFC 3339 UTC strings in ledgers, epoch milliseconds everywhere else.
//!
//! A stored timestamp keeps its original text so that re-serialising a ledger never changes
//! bytes that the hash chain covers; the parsed milliseconds are kept beside it for arithmetic.

use std::fmt;

use chrono::{DateTime, SecondsFormat};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Largest `now` accepted: 9999-12-31T23:59:59.999Z.
pub const MAX_EPOCH_MS: i64 = 253_402_300_799_999;

/// A point in time as stored in a ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timestamp {
    ms: i64,
    text: String,
}

impl Timestamp {
    /// The canonical form (`2026-11-22T10:00:00.000Z`) of an epoch-millisecond time.
    /// Out-of-range values are clamped into `0..=MAX_EPOCH_MS`; callers validate `now` first.
    pub fn from_ms(ms: i64) -> Self {
        let ms = ms.clamp(0, MAX_EPOCH_MS);
        Timestamp {
            ms,
            text: format_ms(ms),
        }
    }

    /// Parses any RFC 3339 time (legacy ledgers may lack milliseconds or use offsets).
    pub fn parse(text: &str) -> Option<Self> {
        let parsed = DateTime::parse_from_rfc3339(text).ok()?;
        Some(Timestamp {
            ms: parsed.timestamp_millis(),
            text: text.to_owned(),
        })
    }

    pub fn ms(&self) -> i64 {
        self.ms
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Formats epoch milliseconds as RFC 3339 UTC with milliseconds and `Z`.
pub fn format_ms(ms: i64) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => String::from("1970-01-01T00:00:00.000Z"),
    }
}

/// Parses RFC 3339 text to epoch milliseconds.
pub fn parse_ms(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `HH:MM` in UTC, for the terminal and chat renderers.
pub fn hh_mm(ms: i64) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => t.format("%H:%M").to_string(),
        None => String::from("--:--"),
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v)
                    .ok_or_else(|| E::custom(format!("invalid timestamp '{v}': expected RFC 3339")))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_millis_and_z() {
        assert_eq!(format_ms(1_795_341_600_000), "2026-11-22T10:00:00.000Z");
        assert_eq!(format_ms(1_795_341_600_123), "2026-11-22T10:00:00.123Z");
    }

    #[test]
    fn parses_offsets_and_keeps_text() {
        let t = Timestamp::parse("2026-11-22T11:00:00+01:00").unwrap();
        assert_eq!(t.ms(), 1_795_341_600_000);
        assert_eq!(t.as_str(), "2026-11-22T11:00:00+01:00");
        assert!(Timestamp::parse("yesterday").is_none());
    }

    #[test]
    fn hh_mm_is_utc() {
        assert_eq!(hh_mm(1_795_341_600_000 + 4 * 60_000), "10:04");
    }
}
