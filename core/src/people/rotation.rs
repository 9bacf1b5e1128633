//! On-call rotations (docs/protocol.md §37): `[[rotations]]` hand a role from one person to
//! the next every `every`, counted from `start`; an override puts someone else on call for a
//! span. Who is on call is computed from the instant alone, so every surface and the monitor
//! agree without any state.

/// One span in which `person` is on call instead of the schedule: `from` ≤ now < `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub person: String,
    pub from_ms: i64,
    pub to_ms: i64,
}

/// One `[[rotations]]` table, checked: at least one person, `every` > 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rotation {
    pub role: String,
    pub people: Vec<String>,
    /// The length of one shift, in milliseconds.
    pub every_ms: i64,
    /// The instant the first person's first shift begins.
    pub start_ms: i64,
    /// In file order: the first that covers an instant wins.
    pub overrides: Vec<Override>,
}

/// Longest shift `every` may name: a year keeps every product far from overflow.
const MAX_EVERY_MS: i64 = 366 * DAY_MS;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

impl Rotation {
    /// Who is on call at `now_ms`: an override that covers it, else the person whose shift
    /// it is. `None` before `start` (the rotation has not begun; no override covers it).
    pub fn on_call(&self, now_ms: i64) -> Option<&str> {
        if let Some(o) = self
            .overrides
            .iter()
            .find(|o| o.from_ms <= now_ms && now_ms < o.to_ms)
        {
            return Some(&o.person);
        }
        self.scheduled(now_ms)
    }

    /// The schedule alone, overrides aside.
    pub fn scheduled(&self, now_ms: i64) -> Option<&str> {
        if now_ms < self.start_ms || self.every_ms <= 0 || self.people.is_empty() {
            return None;
        }
        let shifts = (now_ms - self.start_ms) / self.every_ms;
        let len = i64::try_from(self.people.len()).ok()?;
        let index = usize::try_from(shifts % len).ok()?;
        self.people.get(index).map(String::as_str)
    }

    /// When the shift that holds `now_ms` ends (the next handover), for listings: `None`
    /// before `start` or for an empty rotation.
    pub fn next_handover(&self, now_ms: i64) -> Option<i64> {
        if now_ms < self.start_ms || self.every_ms <= 0 || self.people.is_empty() {
            return None;
        }
        let shifts = (now_ms - self.start_ms) / self.every_ms;
        self.start_ms
            .checked_add(shifts.checked_add(1)?.checked_mul(self.every_ms)?)
    }
}

/// Parses a shift length: a positive whole number of days (`7d`) or hours (`12h`), at most
/// a year. The error says what is allowed.
pub fn parse_every(text: &str) -> Result<i64, String> {
    let refused = || {
        format!(
            "every '{}' must be a whole number of days or hours, e.g. \"7d\", \"1d\", \"12h\" (at most 366d)",
            crate::error::shown(text)
        )
    };
    let (digits, unit) = match text.strip_suffix('d') {
        Some(d) => (d, DAY_MS),
        None => (text.strip_suffix('h').ok_or_else(refused)?, HOUR_MS),
    };
    if !crate::names::is_canonical_decimal(digits) || digits.len() > 6 {
        return Err(refused());
    }
    let n: i64 = digits.parse().map_err(|_| refused())?;
    match n.checked_mul(unit) {
        Some(ms) if ms > 0 && ms <= MAX_EVERY_MS => Ok(ms),
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: i64 = 1_767_603_600_000; // 2026-01-05T09:00:00Z

    fn weekly() -> Rotation {
        Rotation {
            role: "lead".into(),
            people: vec!["alice".into(), "bob".into()],
            every_ms: 7 * DAY_MS,
            start_ms: START,
            overrides: Vec::new(),
        }
    }

    #[test]
    fn shifts_follow_each_other_from_start() {
        let r = weekly();
        assert_eq!(r.on_call(START - 1), None);
        assert_eq!(r.on_call(START), Some("alice"));
        assert_eq!(r.on_call(START + 7 * DAY_MS - 60_000), Some("alice"));
        assert_eq!(r.on_call(START + 7 * DAY_MS), Some("bob"));
        assert_eq!(r.on_call(START + 14 * DAY_MS), Some("alice"));
        assert_eq!(r.next_handover(START + DAY_MS), Some(START + 7 * DAY_MS));
        assert_eq!(r.next_handover(START - 1), None);
    }

    #[test]
    fn an_override_wins_for_its_span_only() {
        let mut r = weekly();
        r.overrides.push(Override {
            person: "carol".into(),
            from_ms: START + DAY_MS,
            to_ms: START + 2 * DAY_MS,
        });
        assert_eq!(r.on_call(START + DAY_MS - 1), Some("alice"));
        assert_eq!(r.on_call(START + DAY_MS), Some("carol"));
        assert_eq!(r.on_call(START + 2 * DAY_MS - 1), Some("carol"));
        assert_eq!(r.on_call(START + 2 * DAY_MS), Some("alice"));
        // Before the rotation starts, an override still puts someone on call.
        r.overrides.push(Override {
            person: "dave".into(),
            from_ms: 0,
            to_ms: START,
        });
        assert_eq!(r.on_call(START - 1), Some("dave"));
    }

    #[test]
    fn every_takes_days_or_hours() {
        assert_eq!(parse_every("7d"), Ok(7 * DAY_MS));
        assert_eq!(parse_every("1d"), Ok(DAY_MS));
        assert_eq!(parse_every("12h"), Ok(12 * HOUR_MS));
        assert_eq!(parse_every("366d"), Ok(MAX_EVERY_MS));
        for bad in [
            "", "d", "0d", "07d", "-1d", "1w", "1.5d", "367d", "9999999h", "12",
        ] {
            let e = parse_every(bad).unwrap_err();
            assert!(e.contains("whole number of days or hours"), "{bad}: {e}");
        }
    }
}
