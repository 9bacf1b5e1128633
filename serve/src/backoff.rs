//! How a background task waits after a failure it will try again (the change feed while the
//! database is down): a wait that doubles with each failure in a row, from `first` up to
//! `max`, each one jittered (servers that lost one database do not all come back in step),
//! and whether the failure is new — a lasting outage is told once when it begins and once
//! when it ends, not on every try.

use std::time::{Duration, Instant};

/// Failures in a row and the wait they earn.
#[derive(Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    failures: u32,
    since: Option<Instant>,
}

impl Backoff {
    pub fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max,
            failures: 0,
            since: None,
        }
    }

    /// One more failure: how long to wait before the next try — between half and all of
    /// `first · 2^(failures − 1)`, never over `max` — and whether this failure began an
    /// outage (the first in a row: the one to tell).
    pub fn failed(&mut self) -> (Duration, bool) {
        let began = self.failures == 0;
        if began {
            self.since = Some(Instant::now());
        }
        self.failures = self.failures.saturating_add(1);
        let doubled = self
            .first
            .saturating_mul(1u32 << (self.failures - 1).min(16))
            .min(self.max);
        // "Equal jitter": half the wait is fixed, so the waits still grow.
        let half = doubled / 2;
        let spread = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
        let jitter = match getrandom::u64() {
            Ok(r) if spread > 0 => Duration::from_millis(r % (spread + 1)),
            _ => half,
        };
        (half + jitter, began)
    }

    /// A success: `Some(how long the outage lasted, failures)` when it ends one (the one to
    /// tell), `None` when nothing had failed.
    pub fn succeeded(&mut self) -> Option<(Duration, u32)> {
        let failures = std::mem::take(&mut self.failures);
        let since = self.since.take()?;
        (failures > 0).then(|| (since.elapsed(), failures))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_bound_and_an_outage_begins_and_ends_once() {
        let first = Duration::from_millis(100);
        let max = Duration::from_secs(5);
        let mut b = Backoff::new(first, max);
        assert_eq!(b.succeeded(), None);
        let mut began = Vec::new();
        let mut waits = Vec::new();
        for _ in 0..12 {
            let (wait, new) = b.failed();
            began.push(new);
            waits.push(wait);
        }
        assert_eq!(began.iter().filter(|b| **b).count(), 1);
        assert!(began[0]);
        for (n, wait) in waits.iter().enumerate() {
            let full = (first * (1u32 << n.min(16))).min(max);
            assert!(
                *wait >= full / 2 && *wait <= full,
                "{n}: {wait:?} of {full:?}"
            );
        }
        assert!(waits[11] >= max / 2);
        let (_, failures) = b.succeeded().unwrap();
        assert_eq!(failures, 12);
        assert_eq!(b.succeeded(), None);
        assert!(b.failed().1, "a new outage is told again");
    }
}
