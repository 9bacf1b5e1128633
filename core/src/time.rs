//! Timestamps: RFC 3339 UTC strings in ledgers, epoch milliseconds everywhere else.
//!
//! A stored timestamp keeps its original text so that re-serialising a ledger never changes
//! bytes that the hash chain covers; the parsed milliseconds are kept beside it for arithmetic.

use std::borrow::Cow;
use std::fmt;

use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Largest `now` accepted: 9999-12-31T23:59:59.999Z.
pub const MAX_EPOCH_MS: i64 = 253_402_300_799_999;

/// A point in time as stored in a ledger.
///
/// The canonical text (what this crate writes) is 24 bytes and lives inline; only other
/// spellings from legacy or hand-written ledgers take a heap allocation. Ledgers hold many
/// timestamps and the monitor folds threads often: no allocation per copy keeps both cheap.
#[derive(Clone, Debug)]
pub struct Timestamp {
    ms: i64,
    text: Text,
}

#[derive(Clone, Debug)]
enum Text {
    /// `format_ms(ms)`, as ASCII.
    Canonical([u8; CANONICAL_LEN]),
    /// Any other RFC 3339 spelling, verbatim.
    Verbatim(Box<str>),
}

const CANONICAL_LEN: usize = 24;

impl Timestamp {
    /// The canonical form (`2026-11-22T10:00:00.000Z`) of an epoch-millisecond time.
    /// Out-of-range values are clamped into `0..=MAX_EPOCH_MS`; callers validate `now` first.
    pub fn from_ms(ms: i64) -> Self {
        let ms = ms.clamp(0, MAX_EPOCH_MS);
        Timestamp {
            ms,
            text: Text::Canonical(canonical(ms)),
        }
    }

    /// Parses any RFC 3339 time (legacy ledgers may lack milliseconds or use offsets).
    pub fn parse(text: &str) -> Option<Self> {
        let ms = parse_ms(text)?;
        let text = match canonical_bytes(text, ms) {
            Some(c) => Text::Canonical(c),
            None => Text::Verbatim(text.into()),
        };
        Some(Timestamp { ms, text })
    }

    pub fn ms(&self) -> i64 {
        self.ms
    }

    /// True when the text is the canonical spelling of its instant.
    pub fn is_canonical(&self) -> bool {
        matches!(self.text, Text::Canonical(_))
    }

    /// The canonical spelling of this instant (docs/protocol.md §3.1), when it has one: the same time
    /// written `…T10:00:00.940Z`. A time outside `0..=MAX_EPOCH_MS` keeps its text.
    pub fn canonicalised(&self) -> Timestamp {
        if self.is_canonical() || !(0..=MAX_EPOCH_MS).contains(&self.ms) {
            self.clone()
        } else {
            Timestamp::from_ms(self.ms)
        }
    }

    /// The text the hash chain covers: the instant in canonical form, not the stored spelling
    /// (docs/protocol.md §16: a writer that re-spells `.940Z` as `.94Z` breaks no chain). Borrowed for a
    /// canonical text, which is what this crate writes: no work on the common path.
    pub fn instant_text(&self) -> Cow<'_, str> {
        match &self.text {
            Text::Verbatim(text) if (0..=MAX_EPOCH_MS).contains(&self.ms) => {
                let c = canonical(self.ms);
                Cow::Owned(std::str::from_utf8(&c).unwrap_or(text).to_owned())
            }
            _ => Cow::Borrowed(self.as_str()),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.text {
            // Always ASCII digits and separators (see `canonical`).
            Text::Canonical(bytes) => std::str::from_utf8(bytes).unwrap_or_default(),
            Text::Verbatim(text) => text,
        }
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.ms == other.ms && self.as_str() == other.as_str()
    }
}

impl Eq for Timestamp {}

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const UNIX_EPOCH_DAYS_CE: i64 = 719_163;
const MS_PER_DAY: i64 = 86_400_000;

/// Formats epoch milliseconds as RFC 3339 UTC with milliseconds and `Z`.
pub fn format_ms(ms: i64) -> String {
    Timestamp::from_ms(ms).as_str().to_owned()
}

/// The canonical text of a time in `0..=MAX_EPOCH_MS`, written digit by digit.
///
/// chrono does the calendar; the text is written here, which keeps chrono's general
/// formatting engine out of the wasm build and `core::fmt` out of every append.
fn canonical(ms: i64) -> [u8; CANONICAL_LEN] {
    let days = ms.div_euclid(MS_PER_DAY);
    let in_day = ms.rem_euclid(MS_PER_DAY);
    let date = i32::try_from(days + UNIX_EPOCH_DAYS_CE)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt);
    let Some(d) = date else {
        return *b"1970-01-01T00:00:00.000Z";
    };
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, value: i64| {
        let mut v = value;
        for i in (at..at + width).rev() {
            if let Some(slot) = out.get_mut(i) {
                // `v % 10` is a digit: the cast cannot truncate.
                *slot = b'0' + u8::try_from(v % 10).unwrap_or(0);
            }
            v /= 10;
        }
    };
    put(0, 4, i64::from(d.year()));
    put(5, 2, i64::from(d.month()));
    put(8, 2, i64::from(d.day()));
    put(11, 2, in_day / 3_600_000);
    put(14, 2, in_day / 60_000 % 60);
    put(17, 2, in_day / 1000 % 60);
    put(20, 3, in_day % 1000);
    out
}

/// `text` as canonical bytes when it is the canonical spelling of `ms`, which `parse_ms` has
/// just read from it. Decided by shape, without writing `ms` out again (a workspace pass reads
/// 15 timestamps per ledger, and the calendar work was most of their cost): `parse_ms` checked
/// every digit, range and date, so a 24-byte text with `T`, `.` and `Z` where `canonical` puts
/// them (three fraction digits, no offset) reads back as itself, for any `ms` that has a
/// canonical text (`0..=MAX_EPOCH_MS`). `canonical_shape_is_canonical_text` checks this.
fn canonical_bytes(text: &str, ms: i64) -> Option<[u8; CANONICAL_LEN]> {
    let bytes: [u8; CANONICAL_LEN] = text.as_bytes().try_into().ok()?;
    let shaped = matches!(
        (bytes.get(10), bytes.get(19), bytes.get(23)),
        (Some(b'T'), Some(b'.'), Some(b'Z'))
    );
    (shaped && (0..=MAX_EPOCH_MS).contains(&ms)).then_some(bytes)
}

/// Parses RFC 3339 text (`2026-11-22T10:00:00.123Z`, `…T11:00:00+01:00`, with `T`, `t` or a
/// space between date and time; fractions beyond milliseconds are truncated) to epoch ms.
pub fn parse_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    // Nearly every timestamp a pass reads is the canonical spelling this crate writes: read it
    // at fixed places with no calendar library (the monitor's pass spent 8 % of its
    // instructions on timestamps). Anything else takes the general path below.
    if let Ok(canonical) = <&[u8; CANONICAL_LEN]>::try_from(b) {
        if let Some(ms) = parse_canonical(canonical) {
            return Some(ms);
        }
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |acc, d| {
            d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
        })
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(at(4, b'-')
        && at(7, b'-')
        && matches!(b.get(10), Some(b'T' | b't' | b' '))
        && at(13, b':')
        && at(16, b':'))
    {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b.get(i).copied().unwrap_or(b'0') - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && at(i + 3, b':') => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let m = oh * 60 + om;
            if *sign == b'+' {
                m
            } else {
                -m
            }
        }
        _ => return None,
    };
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        u32::try_from(month).ok()?,
        u32::try_from(day).ok()?,
    )?;
    let days = i64::from(date.num_days_from_ce()) - UNIX_EPOCH_DAYS_CE;
    Some(days * MS_PER_DAY + ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000 + millis)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` to epoch ms (`None`: another shape, or not a valid instant).
fn parse_canonical(b: &[u8; CANONICAL_LEN]) -> Option<i64> {
    let [y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1, b':', s0, s1, b'.', f0, f1, f2, b'Z'] =
        *b
    else {
        return None;
    };
    let digits = |ds: &[u8]| -> Option<i64> {
        ds.iter().try_fold(0i64, |acc, &d| {
            let v = d.wrapping_sub(b'0');
            (v < 10).then(|| acc * 10 + i64::from(v))
        })
    };
    let (year, month, day) = (
        digits(&[y0, y1, y2, y3])?,
        digits(&[mo0, mo1])?,
        digits(&[d0, d1])?,
    );
    let (hour, minute, second) = (digits(&[h0, h1])?, digits(&[mi0, mi1])?, digits(&[s0, s1])?);
    let millis = digits(&[f0, f1, f2])?;
    if hour > 23 || minute > 59 || second > 59 || !(1..=12).contains(&month) {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if year == 0 || !(1..=month_days).contains(&day) {
        return None;
    }
    Some(
        days_from_civil(year, month, day) * MS_PER_DAY
            + ((hour * 60 + minute) * 60 + second) * 1000
            + millis,
    )
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a time given by a person or a script (`--now`, `--since`, a store call's `now`):
/// RFC 3339 (fractions beyond milliseconds truncated) or epoch milliseconds, within
/// 1970-01-01 … 9999-12-31. The error says what was expected.
pub fn parse_instant(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let ms = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<i64>()
            .map_err(|_| format!("'{text}' is too large for epoch milliseconds"))?
    } else {
        parse_ms(text).ok_or_else(|| {
            format!("'{text}' is neither RFC 3339 (2026-11-22T10:00:00Z) nor epoch milliseconds")
        })?
    };
    if (0..=MAX_EPOCH_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!("'{text}' is outside 1970-01-01 … 9999-12-31"))
    }
}

/// `HH:MM` in UTC, for the terminal and chat renderers.
pub fn hh_mm(ms: i64) -> String {
    let in_day = ms.rem_euclid(MS_PER_DAY);
    format!("{:02}:{:02}", in_day / 3_600_000, in_day / 60_000 % 60)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
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

    #[test]
    fn instants_given_by_people() {
        assert_eq!(parse_instant("1795341600000"), Ok(1_795_341_600_000));
        assert_eq!(parse_instant("2026-11-22T10:00:00Z"), Ok(1_795_341_600_000));
        assert_eq!(
            parse_instant(" 2026-11-22T10:00:00.1239Z "),
            Ok(1_795_341_600_123),
            "truncated to ms"
        );
        assert!(parse_instant("tomorrow").is_err());
        assert!(parse_instant("-5").is_err());
        assert!(parse_instant("99999999999999999999").is_err());
    }
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
    fn parsing_rules() {
        assert_eq!(parse_ms("2026-11-22T10:00:00Z"), Some(1_795_341_600_000));
        assert_eq!(
            parse_ms("2026-11-22t10:00:00.1239z"),
            Some(1_795_341_600_123)
        );
        assert_eq!(
            parse_ms("2026-11-22 09:30:00.5-00:30"),
            Some(1_795_341_600_500)
        );
        assert_eq!(parse_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_ms("1969-12-31T23:59:59.999Z"), Some(-1));
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T10:00:00",
            "2026-11-22T10:00:00.Z",
            "2026-11-22",
            "2026-11-22T10:00:00+0100",
            "x",
        ] {
            assert_eq!(parse_ms(bad), None, "{bad}");
        }
        for ms in [
            0,
            1,
            951_782_400_000,
            1_795_341_600_123,
            253_402_300_799_999,
        ] {
            assert_eq!(parse_ms(&format_ms(ms)), Some(ms));
        }
        assert_eq!(format_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_canonical_fast_path_reads_what_chrono_reads() {
        // Every day of years 1600..=2500 at a few times of day, each spelled canonically,
        // against chrono; and canonical-shaped texts that are not instants fall through to
        // the general path, which refuses them.
        let start = NaiveDate::from_ymd_opt(1600, 1, 1).unwrap();
        for n in 0..(900 * 366) {
            let Some(date) = start.checked_add_days(chrono::Days::new(n)) else {
                break;
            };
            if date.year() > 2500 {
                break;
            }
            for time in ["00:00:00.000", "23:59:59.999", "12:34:56.789"] {
                let text = format!("{}T{time}Z", date.format("%Y-%m-%d"));
                let bytes: &[u8; CANONICAL_LEN] = text.as_bytes().try_into().unwrap();
                let expected = chrono::DateTime::parse_from_rfc3339(&text)
                    .unwrap()
                    .timestamp_millis();
                assert_eq!(super::parse_canonical(bytes), Some(expected), "{text}");
            }
        }
        for bad in [
            "2026-02-29T00:00:00.000Z",
            "2100-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-00-01T00:00:00.000Z",
            "2026-04-31T00:00:00.000Z",
            "2026-01-01T24:00:00.000Z",
            "2026-01-01T00:60:00.000Z",
            "2026-01-01T00:00:60.000Z",
            "2026-01-01T00:00:00.00aZ",
            "2026-01-01T00:00:00.000+",
            "+026-01-01T00:00:00.000Z",
        ] {
            let bytes: &[u8; CANONICAL_LEN] = bad.as_bytes().try_into().unwrap();
            assert_eq!(super::parse_canonical(bytes), None, "{bad}");
            assert_eq!(parse_ms(bad), None, "{bad}");
        }
        assert_eq!(parse_ms("2000-02-29T00:00:00.000Z"), Some(951_782_400_000));
    }

    #[test]
    fn canonical_text_matches_chrono_over_the_calendar() {
        // Every day boundary of years 1970..=2100 plus the extremes, against chrono's own
        // formatting, and canonical texts parse back to the inline form.
        let mut days: Vec<i64> = (0..47_847).collect();
        days.extend([2_932_896]);
        for day in days {
            for offset in [0, 1, 59_999, 3_600_000, MS_PER_DAY - 1] {
                let ms = (day * MS_PER_DAY + offset).min(MAX_EPOCH_MS);
                let t = Timestamp::from_ms(ms);
                let expected = chrono::DateTime::from_timestamp_millis(ms)
                    .unwrap()
                    .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string();
                assert_eq!(t.as_str(), expected);
                assert!(matches!(
                    Timestamp::parse(&expected).unwrap().text,
                    Text::Canonical(_)
                ));
            }
        }
        assert_eq!(Timestamp::from_ms(-5).as_str(), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn other_spellings_are_kept_and_compare_by_text() {
        let verbatim = Timestamp::parse("2026-11-22T10:00:00Z").unwrap();
        let canonical = Timestamp::parse("2026-11-22T10:00:00.000Z").unwrap();
        assert!(matches!(verbatim.text, Text::Verbatim(_)));
        assert_eq!(verbatim.ms(), canonical.ms());
        assert_ne!(verbatim, canonical);
        assert_eq!(canonical, Timestamp::from_ms(canonical.ms()));
    }

    #[test]
    fn hh_mm_is_utc() {
        assert_eq!(hh_mm(1_795_341_600_000 + 4 * 60_000), "10:04");
    }

    #[test]
    fn instants_have_one_canonical_text() {
        for (spelling, canonical) in [
            ("2026-11-22T10:00:00.94Z", "2026-11-22T10:00:00.940Z"),
            ("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000Z"),
            ("2026-11-22T11:00:00.940+01:00", "2026-11-22T10:00:00.940Z"),
            ("2026-11-22t10:00:00.9401z", "2026-11-22T10:00:00.940Z"),
            ("2026-11-22T10:00:00.940Z", "2026-11-22T10:00:00.940Z"),
        ] {
            let t = Timestamp::parse(spelling).unwrap();
            assert_eq!(t.instant_text(), canonical, "{spelling}");
            assert_eq!(t.canonicalised().as_str(), canonical);
            assert!(t.canonicalised().is_canonical());
            assert_eq!(t.as_str(), spelling, "the stored text is kept");
        }
        // Before 1970 there is no canonical text: the spelling stands.
        let old = Timestamp::parse("1969-12-31T23:59:59.999Z").unwrap();
        assert_eq!(old.instant_text(), "1969-12-31T23:59:59.999Z");
        assert_eq!(old.canonicalised(), old);
    }

    /// The rule the shape check stands for: an instant with a canonical text, written out
    /// again, gives the same bytes.
    fn rewrites_as_itself(text: &str) -> bool {
        let ms = parse_ms(text).unwrap();
        (0..=MAX_EPOCH_MS).contains(&ms) && canonical(ms).as_slice() == text.as_bytes()
    }

    /// The shape check of `Timestamp::parse` agrees with writing the instant out again, over
    /// instants across the whole range and every other spelling of them.
    #[test]
    fn canonical_shape_is_canonical_text() {
        let mut ms = 0i64;
        let mut step = 1i64;
        let mut checked = 0;
        while ms <= MAX_EPOCH_MS {
            let text = String::from_utf8(canonical(ms).to_vec()).unwrap();
            let (date, time) = text.split_at(10);
            let hms = &time[1..9];
            let frac = &time[10..13];
            for spelling in [
                text.clone(),
                format!("{date}t{hms}.{frac}Z"),
                format!("{date} {hms}.{frac}Z"),
                format!("{date}T{hms}.{frac}z"),
                format!("{date}T{hms}.{}Z", &frac[..2]),
                format!("{date}T{hms}.{frac}0Z"),
                format!("{date}T{hms}Z"),
                format!("{date}T{hms}.{frac}+00:00"),
                format!("{date}T{hms}.{}+00:00", &frac[..1]),
            ] {
                let t = Timestamp::parse(&spelling).unwrap();
                assert_eq!(
                    t.is_canonical(),
                    rewrites_as_itself(&spelling),
                    "{spelling}"
                );
                assert_eq!(t.as_str(), spelling);
                checked += 1;
            }
            // Every millisecond of the first two seconds, then growing odd strides that land
            // on every field (and on leap days) across the range.
            step = if ms < 2_000 {
                1
            } else {
                step + step / 1_024 + 7_919
            };
            ms += step;
        }
        assert!(checked > 100_000, "{checked}");
        for text in [
            "1969-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00.000Z",
            "2024-02-29T12:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            let t = Timestamp::parse(text).unwrap();
            assert_eq!(t.is_canonical(), rewrites_as_itself(text), "{text}");
        }
    }
}
