//! Which records a search looks at: the filters of `clarify search` and the limit.

use crate::ledger::{Record, Status};

/// Hits a search returns without a `limit`.
pub const DEFAULT_LIMIT: usize = 10;
/// The most hits a search returns.
pub const MAX_LIMIT: usize = 100;

/// The filters of a search; every one given must hold. No statuses: every status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub issue: Option<u32>,
    pub statuses: Vec<Status>,
    pub field: Option<String>,
    /// The requester.
    pub from: Option<String>,
    /// The agent asked.
    pub to: Option<String>,
    /// Issues left out (`related` looks only at other issues than the asker's).
    pub not_issue: Option<u32>,
    /// 1–[`MAX_LIMIT`]; `None` is [`DEFAULT_LIMIT`].
    pub limit: Option<usize>,
}

impl Filter {
    /// Whether record `r` of `issue` passes every filter.
    pub fn admits(&self, issue: u32, r: &Record) -> bool {
        self.issue.is_none_or(|n| n == issue)
            && self.not_issue != Some(issue)
            && (self.statuses.is_empty() || self.statuses.contains(&r.current_status()))
            && self
                .field
                .as_deref()
                .is_none_or(|f| r.field.as_deref() == Some(f))
            && self.from.as_deref().is_none_or(|a| r.from == a)
            && self.to.as_deref().is_none_or(|a| r.to == a)
    }

    /// The limit in force, clamped to 1–[`MAX_LIMIT`].
    pub fn limit(&self) -> usize {
        self.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
    }
}

/// Checks a given limit: 1 to [`MAX_LIMIT`].
pub fn check_limit(limit: i64) -> Result<usize, crate::ClarifyError> {
    match usize::try_from(limit) {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(crate::ClarifyError::input(format!(
            "`limit` {limit} is out of range: expected 1 to {MAX_LIMIT}"
        ))),
    }
}
