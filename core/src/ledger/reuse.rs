//! The trace a suppressed re-ask leaves on the record it was answered from (docs/protocol.md §22,
//! docs/decisions.md): how many times, and who re-asked when (the latest few). It is not a
//! thread entry: a re-ask changes no status, and the thread's fold stays the state machine's.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// The latest re-asks kept by name; `reuseCount` counts them all.
pub const MAX_REUSES_KEPT: usize = 20;

/// One suppressed re-ask: who asked again, and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reuse {
    pub from: String,
    pub at: Timestamp,
}

/// Every suppressed re-ask of a record: the count and the latest [`MAX_REUSES_KEPT`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reuses {
    pub count: u32,
    pub latest: Vec<Reuse>,
}

impl Reuses {
    /// Notes a re-ask by `from` at `at_ms`.
    pub fn note(&mut self, from: &str, at_ms: i64) {
        self.count = self.count.saturating_add(1);
        self.latest.push(Reuse {
            from: from.to_owned(),
            at: Timestamp::from_ms(at_ms),
        });
        if self.latest.len() > MAX_REUSES_KEPT {
            let cut = self.latest.len() - MAX_REUSES_KEPT;
            self.latest.drain(..cut);
        }
    }

    /// `reuseCount` and `reuses`, only when the record was re-asked (old ledgers unchanged).
    pub(super) fn serialize_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        if self.count > 0 {
            m.serialize_entry("reuseCount", &self.count)?;
        }
        if !self.latest.is_empty() {
            m.serialize_entry("reuses", &self.latest)?;
        }
        Ok(())
    }
}
