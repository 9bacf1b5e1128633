//! A record's first question and its fingerprint (docs/protocol.md §22). Here, not in `kinds`,
//! so that `kinds` (which the ledger's records hold) never imports the ledger.

use super::{EntryKind, Record};
use crate::kinds::fingerprint;

impl Record {
    /// The text of the record's first question (what its fingerprint is of).
    pub fn first_question(&self) -> Option<&str> {
        self.thread
            .iter()
            .find(|e| e.kind == EntryKind::Question)
            .map(|e| e.body.as_str())
    }

    /// The record's fingerprint: the stored one, else computed from its first question
    /// (records written before fingerprints were stored).
    pub fn fingerprint_or_computed(&self, issue: u32) -> Option<String> {
        self.fingerprint.clone().or_else(|| {
            self.first_question()
                .map(|q| fingerprint(issue, &self.to, self.field.as_deref(), q))
        })
    }
}
