//! The monitor report, in the JSON shape of docs/protocol.md §7.

use serde::{Deserialize, Serialize};

use crate::names::ClarificationId;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EscalatedReport {
    pub id: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlockReport {
    /// Ids of every record inside the cycle's component, ascending by sequence.
    pub cycle: Vec<String>,
    /// Its agents in priority order.
    pub agents: Vec<String>,
    /// The record escalated to break it.
    pub escalated: String,
}

/// A ledger the monitor could not read (reported and skipped).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportError {
    pub file: String,
    pub code: String,
    pub message: String,
}

impl ReportError {
    /// `file` could not be used because of `error`.
    pub fn new(file: impl Into<String>, error: &crate::error::ClarifyError) -> Self {
        ReportError {
            file: file.into(),
            code: error.code().to_owned(),
            message: error.to_string(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub stale: Vec<String>,
    pub retried: Vec<String>,
    pub escalated: Vec<EscalatedReport>,
    pub stuck: Vec<String>,
    pub deadlocks: Vec<DeadlockReport>,
    pub abandoned: Vec<String>,
    /// Delegations (`DLG-…`) past their deadline, now `TIMEOUT` (docs/protocol.md §18); absent from the
    /// JSON when none, so a workspace without delegations reports exactly as before.
    #[serde(default, rename = "timedOut", skip_serializing_if = "Vec::is_empty")]
    pub timed_out: Vec<String>,
    /// Claims the monitor ended (docs/protocol.md §37); absent when none, so a workspace
    /// without people reports exactly as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lapsed: Vec<String>,
    pub errors: Vec<ReportError>,
}

impl Report {
    /// Reads a report given as JSON (render input) by hand: a few lines instead of a second
    /// copy of the deserializer for every nested type.
    pub fn from_json(v: &serde_json::Value) -> Option<Report> {
        use serde_json::Value;
        let strings = |key: &str| -> Option<Vec<String>> {
            v.get(key)?
                .as_array()?
                .iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect()
        };
        let text = |o: &Value, key: &str| o.get(key).and_then(Value::as_str).map(str::to_owned);
        let objects = |key: &str| -> Option<&Vec<Value>> { v.get(key)?.as_array() };
        Some(Report {
            stale: strings("stale")?,
            retried: strings("retried")?,
            escalated: objects("escalated")?
                .iter()
                .map(|o| {
                    Some(EscalatedReport {
                        id: text(o, "id")?,
                        reason: text(o, "reason")?,
                    })
                })
                .collect::<Option<_>>()?,
            stuck: strings("stuck")?,
            deadlocks: objects("deadlocks")?
                .iter()
                .map(|o| {
                    let list = |key: &str| -> Option<Vec<String>> {
                        o.get(key)?
                            .as_array()?
                            .iter()
                            .map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    };
                    Some(DeadlockReport {
                        cycle: list("cycle")?,
                        agents: list("agents")?,
                        escalated: text(o, "escalated")?,
                    })
                })
                .collect::<Option<_>>()?,
            abandoned: strings("abandoned")?,
            timed_out: if v.get("timedOut").is_some() {
                strings("timedOut")?
            } else {
                Vec::new()
            },
            lapsed: if v.get("lapsed").is_some() {
                strings("lapsed")?
            } else {
                Vec::new()
            },
            errors: objects("errors")?
                .iter()
                .map(|o| {
                    Some(ReportError {
                        file: text(o, "file")?,
                        code: text(o, "code")?,
                        message: text(o, "message")?,
                    })
                })
                .collect::<Option<_>>()?,
        })
    }

    /// True when the pass found nothing (errors aside).
    pub fn is_quiet(&self) -> bool {
        self.stale.is_empty()
            && self.retried.is_empty()
            && self.escalated.is_empty()
            && self.stuck.is_empty()
            && self.deadlocks.is_empty()
            && self.abandoned.is_empty()
            && self.timed_out.is_empty()
            && self.lapsed.is_empty()
    }

    /// Orders one ledger's lists by sequence number.
    pub(crate) fn sort(&mut self) {
        let seq = |id: &str| ClarificationId::parse(id).map_or(u64::MAX, |c| c.seq);
        for list in [
            &mut self.stale,
            &mut self.retried,
            &mut self.stuck,
            &mut self.abandoned,
            &mut self.lapsed,
        ] {
            crate::stable_sort::sort_by_key(list, |id| seq(id));
            list.dedup();
        }
        crate::stable_sort::sort_by_key(&mut self.escalated, |e| seq(&e.id));
        crate::stable_sort::sort_by_key(&mut self.deadlocks, |d| seq(&d.escalated));
    }

    /// Appends a later ledger's report (ledgers are merged in ascending issue order).
    pub fn merge(&mut self, other: Report) {
        self.stale.extend(other.stale);
        self.retried.extend(other.retried);
        self.escalated.extend(other.escalated);
        self.stuck.extend(other.stuck);
        self.deadlocks.extend(other.deadlocks);
        self.abandoned.extend(other.abandoned);
        self.timed_out.extend(other.timed_out);
        self.lapsed.extend(other.lapsed);
        self.errors.extend(other.errors);
    }
}
