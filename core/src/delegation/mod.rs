//! Delegation between agents (seed 003 §4–§8, §12; docs/protocol.md §18).
//!
//! One ledger per issue (`.agentx/state/delegations/issue-<n>.json`) holds envelopes
//! `DLG-<issue>-<seq>` (seed 003 §6.2: `from`, `to`, `capability`, `objective`,
//! `contextSlice`, `outputContract`, `timeoutMinutes`), each with an append-only thread whose
//! entries are hash-chained exactly like a clarification thread (`ledger::value_hash`). The
//! `requested` entry repeats the envelope, so the chain covers it too. `status`, `createdAt`,
//! `acceptedAt`, `deadline`, `finishedAt` and `response` are a snapshot of the thread's fold,
//! rewritten on every write. Completion reports that close no delegation are kept in
//! `reports`. Unknown fields are kept everywhere.
//!
//! ```text
//!             accept             complete
//!  REQUESTED ─────────▶ ACCEPTED ─────────▶ COMPLETED
//!      │  complete / reject / fail   │ reject (capability|context), fail, timeout (monitor)
//!      ▼                             ▼
//!  COMPLETED | REJECTED_CAPABILITY | REJECTED_CONTEXT | FAILED_EXECUTION | TIMEOUT  (terminal)
//! ```
//! A request whose target's manifest lacks or excludes the capability is written directly
//! as `REJECTED_CAPABILITY` (a fact for the gap score, not an error).
//!
//! The public API (all pure; `now` is epoch milliseconds):
//! - [`Manifest::parse`], [`Manifests`] — capability manifests;
//! - [`DelegationLedger::parse`] / [`DelegationLedger::to_pretty_json`] — the file;
//! - [`request`], [`act`] with [`Action`] — the transitions, returning [`Applied`];
//! - [`timeouts`], [`next_wakeup`] — the monitor's phase;
//! - [`metrics`] — seed 003 §12's metrics and §8's gap scores and suggestions.

mod capability;
mod defaults;
mod id;
mod manifest;
mod metrics;
mod monitor;
mod ops;
mod transition;
mod wire;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ClarifyError;
use crate::ledger::{chain_state_of, value_hash, ChainState};
use crate::time::Timestamp;

pub use capability::{check_capability, covers, MAX_CAPABILITY_LEN};
pub use defaults::DEFAULT_MANIFESTS;
pub use id::DelegationId;
pub use manifest::{Capability, Depth, Manifest, Manifests, Offer};
pub use metrics::{
    metrics, CapabilityGap, DelegationMetrics, Justification, Suggestion, GAP_THRESHOLD,
};
pub use monitor::{next_wakeup, timeouts, TimedOut};
pub use ops::{
    act, request, Action, Applied, Event, EventType, NewDelegation, DEFAULT_TIMEOUT_MINUTES,
    TIMEOUT_RANGE,
};
pub(crate) use ops::{apply_act, decide_act, decide_request, open_delegation};
pub use transition::{allowed_ops, who_may, Op};

/// Status of a delegation (seed 003 §6.5, plus `REQUESTED` before the specialist answers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Requested,
    Accepted,
    Completed,
    RejectedCapability,
    RejectedContext,
    Timeout,
    FailedExecution,
}

impl Status {
    pub const ALL: [Status; 7] = [
        Status::Requested,
        Status::Accepted,
        Status::Completed,
        Status::RejectedCapability,
        Status::RejectedContext,
        Status::Timeout,
        Status::FailedExecution,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Requested => "REQUESTED",
            Status::Accepted => "ACCEPTED",
            Status::Completed => "COMPLETED",
            Status::RejectedCapability => "REJECTED_CAPABILITY",
            Status::RejectedContext => "REJECTED_CONTEXT",
            Status::Timeout => "TIMEOUT",
            Status::FailedExecution => "FAILED_EXECUTION",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Requested or accepted: the work may still happen.
    pub fn is_open(self) -> bool {
        matches!(self, Status::Requested | Status::Accepted)
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The specialist's answer (seed 003 §6.4), kept on the `COMPLETED` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    pub artifact_path: Option<String>,
    pub summary: String,
    pub metrics: Map<String, Value>,
    pub follow_up_recommended: Vec<String>,
    pub unresolved: Vec<String>,
    pub extra: Map<String, Value>,
}

/// One entry of a delegation's thread: each sets the status.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub status: Status,
    pub from: String,
    pub body: String,
    pub timestamp: Timestamp,
    /// On the `COMPLETED` entry.
    pub response: Option<Response>,
    pub hash: Option<String>,
    /// The `REQUESTED` entry's copy of the envelope; `signalKey` of an ingested block; fields
    /// this version does not know. Covered by the hash.
    pub extra: Map<String, Value>,
}

/// One delegation envelope and its thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Delegation {
    pub id: String,
    pub from: String,
    pub to: String,
    pub capability: Option<String>,
    pub objective: String,
    pub context_slice: Map<String, Value>,
    pub output_contract: Map<String, Value>,
    pub timeout_minutes: u32,
    pub status: Status,
    pub created_at: Option<Timestamp>,
    pub accepted_at: Option<Timestamp>,
    pub deadline: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub response: Option<Response>,
    /// The idempotency key of the `[DELEGATE_WORK]` block it came from.
    pub signal_key: Option<String>,
    pub thread: Vec<Entry>,
    pub extra: Map<String, Value>,
}

/// A `[COMPLETION_REPORT]` that closed no delegation, kept as it was reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub agent: String,
    pub status: String,
    pub deliverables: Vec<String>,
    pub metrics_achieved: Option<String>,
    pub recommendations: Vec<String>,
    pub timestamp: Timestamp,
    pub signal_key: Option<String>,
    pub extra: Map<String, Value>,
}

/// The delegation ledger of one issue.
#[derive(Clone, Debug, PartialEq)]
pub struct DelegationLedger {
    pub issue_number: u32,
    pub delegations: Vec<Delegation>,
    pub reports: Vec<Report>,
    pub extra: Map<String, Value>,
}

/// What a thread folds to.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    pub status: Status,
    pub created_at: Option<Timestamp>,
    pub accepted_at: Option<Timestamp>,
    pub deadline: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub response: Option<Response>,
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("artifactPath", &self.artifact_path)?;
        m.serialize_entry("summary", &self.summary)?;
        m.serialize_entry("metrics", &self.metrics)?;
        m.serialize_entry("followUpRecommended", &self.follow_up_recommended)?;
        m.serialize_entry("unresolved", &self.unresolved)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("status", &self.status)?;
        m.serialize_entry("from", &self.from)?;
        m.serialize_entry("body", &self.body)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        if let Some(r) = &self.response {
            m.serialize_entry("response", r)?;
        }
        if let Some(h) = &self.hash {
            m.serialize_entry("hash", h)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Delegation {
    fn serialize_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("from", &self.from)?;
        m.serialize_entry("to", &self.to)?;
        m.serialize_entry("capability", &self.capability)?;
        m.serialize_entry("objective", &self.objective)?;
        m.serialize_entry("contextSlice", &self.context_slice)?;
        m.serialize_entry("outputContract", &self.output_contract)?;
        m.serialize_entry("timeoutMinutes", &self.timeout_minutes)?;
        m.serialize_entry("status", &self.status)?;
        m.serialize_entry("createdAt", &self.created_at)?;
        m.serialize_entry("acceptedAt", &self.accepted_at)?;
        m.serialize_entry("deadline", &self.deadline)?;
        m.serialize_entry("finishedAt", &self.finished_at)?;
        m.serialize_entry("response", &self.response)?;
        if let Some(k) = &self.signal_key {
            m.serialize_entry("signalKey", k)?;
        }
        m.serialize_entry("thread", &self.thread)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        Ok(())
    }

    /// The delegation as outputs show it: with `issueNumber` first.
    pub fn to_output(&self, issue: u32) -> Value {
        serde_json::to_value(DelegationOutput(issue, self)).unwrap_or(Value::Null)
    }
}

impl Serialize for Delegation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.serialize_fields(&mut m)?;
        m.end()
    }
}

struct DelegationOutput<'a>(u32, &'a Delegation);

impl Serialize for DelegationOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.0)?;
        self.1.serialize_fields(&mut m)?;
        m.end()
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("agent", &self.agent)?;
        m.serialize_entry("status", &self.status)?;
        m.serialize_entry("deliverables", &self.deliverables)?;
        m.serialize_entry("metricsAchieved", &self.metrics_achieved)?;
        m.serialize_entry("recommendations", &self.recommendations)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        if let Some(k) = &self.signal_key {
            m.serialize_entry("signalKey", k)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for DelegationLedger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.issue_number)?;
        m.serialize_entry("delegations", &self.delegations)?;
        m.serialize_entry("reports", &self.reports)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl DelegationLedger {
    pub fn new(issue_number: u32) -> Self {
        DelegationLedger {
            issue_number,
            delegations: Vec::new(),
            reports: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Parses ledger bytes; `file` names it in errors, `issue` (from the file name) must
    /// match `issueNumber` when both are known. Anything malformed is `LEDGER_CORRUPT`.
    pub fn parse(
        file: &str,
        bytes: &[u8],
        issue: Option<u32>,
    ) -> Result<DelegationLedger, ClarifyError> {
        wire::parse(file, bytes, issue)
    }

    /// Pretty-printed JSON with a trailing newline: the exact bytes of the file.
    pub fn to_pretty_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).unwrap_or_default();
        out.push('\n');
        out
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn find(&self, id: &str) -> Option<&Delegation> {
        self.delegations.iter().find(|d| d.id == id)
    }

    /// max(existing sequence) + 1 over this issue's valid ids.
    pub fn next_id(&self) -> DelegationId {
        let ids = self.delegations.iter().map(|d| d.id.as_str());
        let seq = crate::names::next_seq(ids, "DLG", self.issue_number);
        DelegationId::new(self.issue_number, seq)
    }

    /// Every snapshot := its fold.
    pub fn seal(&mut self) {
        for d in &mut self.delegations {
            d.refresh();
        }
    }
}

impl Delegation {
    /// The fold of the thread (the stored snapshot for an empty thread).
    pub fn fold(&self) -> Fold {
        let mut f = Fold {
            status: self.status,
            created_at: self.created_at.clone(),
            accepted_at: self.accepted_at.clone(),
            deadline: self.deadline.clone(),
            finished_at: self.finished_at.clone(),
            response: self.response.clone(),
        };
        if self.thread.is_empty() {
            return f;
        }
        f = Fold {
            status: Status::Requested,
            created_at: None,
            accepted_at: None,
            deadline: None,
            finished_at: None,
            response: None,
        };
        for e in &self.thread {
            f.status = e.status;
            match e.status {
                Status::Requested => {
                    if f.created_at.is_none() {
                        f.created_at = Some(e.timestamp.clone());
                    }
                }
                Status::Accepted => {
                    f.accepted_at = Some(e.timestamp.clone());
                    let ms = e
                        .timestamp
                        .ms()
                        .saturating_add(i64::from(self.timeout_minutes) * 60_000);
                    f.deadline = Some(Timestamp::from_ms(ms));
                }
                _ => {
                    f.finished_at = Some(e.timestamp.clone());
                    if e.status == Status::Completed {
                        f.response = e.response.clone();
                    }
                }
            }
        }
        f
    }

    /// The status every decision uses: the last entry's (the stored one without a thread).
    pub fn current_status(&self) -> Status {
        self.thread.last().map_or(self.status, |e| e.status)
    }

    /// When the monitor times this delegation out (epoch ms): its deadline while it is
    /// accepted, else never. The one rule the timeout phase, its next wake-up and the stores'
    /// indexes share.
    pub fn times_out_at(&self) -> Option<i64> {
        (self.current_status() == Status::Accepted)
            .then(|| self.fold().deadline.map(|t| t.ms()))
            .flatten()
    }

    fn refresh(&mut self) {
        let f = self.fold();
        self.status = f.status;
        self.created_at = f.created_at;
        self.accepted_at = f.accepted_at;
        self.deadline = f.deadline;
        self.finished_at = f.finished_at;
        self.response = f.response;
    }

    /// Appends an entry dated `at_ms` (never before the last entry: clock skew must not
    /// reorder history), chaining its hash, and refreshes the snapshot. Returns its time.
    pub(crate) fn append(&mut self, mut entry: Entry, at_ms: i64) -> i64 {
        let at_ms = match self.thread.last() {
            Some(last) if last.timestamp.ms() > at_ms => last.timestamp.ms(),
            _ => at_ms,
        };
        entry.timestamp = Timestamp::from_ms(at_ms);
        entry.hash = None;
        let prev = self
            .thread
            .last()
            .and_then(|e| e.hash.as_deref())
            .unwrap_or("");
        let value = serde_json::to_value(&entry).unwrap_or(Value::Null);
        entry.hash = Some(value_hash(&self.id, prev, &value));
        let at = entry.timestamp.ms();
        self.thread.push(entry);
        self.refresh();
        at
    }

    /// What `verify` finds in the thread's hash chain.
    pub fn chain_state(&self) -> ChainState {
        chain_state_of(
            &self.thread,
            |e| e.hash.as_deref(),
            |prev, e| {
                let value = serde_json::to_value(e).unwrap_or(Value::Null);
                value_hash(&self.id, prev, &value)
            },
        )
    }

    /// What `verify` reports about this delegation: a broken or partial hash chain, an
    /// envelope that no longer matches the `REQUESTED` entry the chain covers, a stored
    /// status that is not the fold's.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.chain_state() {
            ChainState::Intact => {}
            ChainState::Unhashed => out.push(format!("{}: no entry is hashed", self.id)),
            // Only AgentX Clarify writes delegation ledgers: any missing hash is a problem.
            ChainState::Mixed | ChainState::UnhashedTail(_) => {
                out.push(format!("{}: some entries lack a hash", self.id))
            }
            ChainState::BrokenAt(i) => out.push(format!(
                "{}: the hash chain breaks at entry {} (0-based)",
                self.id, i
            )),
        }
        if let Some(first) = self.thread.first() {
            let copy = |key: &str| first.extra.get(key).cloned().unwrap_or(Value::Null);
            let same = first.status == Status::Requested
                && first.from == self.from
                && first.body == self.objective
                && copy("to") == self.to.as_str()
                && copy("capability") == self.capability.clone().map_or(Value::Null, Value::from)
                && copy("contextSlice") == Value::Object(self.context_slice.clone())
                && copy("outputContract") == Value::Object(self.output_contract.clone())
                && copy("timeoutMinutes") == self.timeout_minutes;
            if !same {
                out.push(format!(
                    "{}: the envelope differs from its REQUESTED entry",
                    self.id
                ));
            }
        }
        let f = self.fold();
        if self.status != f.status {
            out.push(format!(
                "{}: stored status {} but the thread says {}",
                self.id,
                self.status.as_str(),
                f.status.as_str()
            ));
        }
        out
    }

    /// Round trip in seconds: from the request to the completion (or the timeout).
    pub fn round_trip_sec(&self) -> Option<f64> {
        let f = self.fold();
        if !matches!(f.status, Status::Completed | Status::Timeout) {
            return None;
        }
        let (start, end) = (f.created_at?, f.finished_at?);
        #[allow(clippy::cast_precision_loss)] // differences of epoch ms, far below 2^52
        Some((end.ms() - start.ms()) as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests;
