//! Delegation ids `DLG-<issue>-<seq>`, spelled like clarification ids.

use std::fmt;

use crate::error::ClarifyError;
use crate::names::parse_seq_id;

/// A parsed delegation id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DelegationId {
    pub issue: u32,
    pub seq: u64,
}

impl DelegationId {
    pub fn new(issue: u32, seq: u64) -> Self {
        DelegationId { issue, seq }
    }

    /// Parses `^DLG-(0|[1-9][0-9]*)-[0-9]{3,}$` with the issue part at most 2^31 − 1.
    pub fn parse(text: &str) -> Result<Self, ClarifyError> {
        let (issue, seq) = parse_seq_id(text, "DLG")?;
        Ok(DelegationId { issue, seq })
    }
}

impl fmt::Display for DelegationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DLG-{}-{:03}", self.issue, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(
            DelegationId::parse("DLG-42-001").unwrap(),
            DelegationId::new(42, 1)
        );
        assert_eq!(DelegationId::new(7, 1234).to_string(), "DLG-7-1234");
        for bad in [
            "DLG-42-01",
            "CLR-42-001",
            "DLG42-001",
            "DLG-042-001",
            "dlg-1-001",
        ] {
            let e = DelegationId::parse(bad).unwrap_err();
            assert_eq!(e.code(), "INVALID_ID", "{bad}");
            assert!(
                e.to_string().contains("expected DLG-<issue>-<seq>") || bad == "DLG-042-001",
                "{e}"
            );
        }
    }
}
