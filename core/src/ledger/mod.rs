//! The ledger: one JSON file per issue holding its clarification records (docs/protocol.md §3.1).
//!
//! A record's `thread` is an append-only event log. `status`, `round`, `retries`,
//! `resolvedAt`, `staleAfter` and `created` are a snapshot of its fold: decisions always use
//! the fold ([`Record::fold`]); the stored snapshot is kept as read so that `verify` can report
//! a mismatch, and is rewritten from the fold whenever the ledger is sealed for writing.

mod decision;
mod fold;
mod hash;
mod question;
mod reuse;
mod wire;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ClarifyError;
use crate::kinds::AnswerSpec;
use crate::names::ClarificationId;
use crate::signing::Signers;
use crate::time::Timestamp;

pub use decision::Decision;
pub use fold::Fold;
pub use hash::{canonical_json, entry_hash, ChainState};
pub use hash::{chain_state_of, value_hash};
pub use reuse::{Reuse, Reuses, MAX_REUSES_KEPT};
pub(crate) use wire::misfiled_message;

/// Status of a clarification record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Answered,
    Stale,
    Escalated,
    Resolved,
    Abandoned,
}

impl Status {
    pub const ALL: [Status; 6] = [
        Status::Pending,
        Status::Stale,
        Status::Answered,
        Status::Escalated,
        Status::Resolved,
        Status::Abandoned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Answered => "answered",
            Status::Stale => "stale",
            Status::Escalated => "escalated",
            Status::Resolved => "resolved",
            Status::Abandoned => "abandoned",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// pending, stale or answered.
    pub fn is_active(self) -> bool {
        matches!(self, Status::Pending | Status::Stale | Status::Answered)
    }

    /// active or escalated.
    pub fn is_open(self) -> bool {
        self.is_active() || self == Status::Escalated
    }

    /// resolved or abandoned: nothing may follow.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Resolved | Status::Abandoned)
    }
}

/// Layer 4's severity of a gap (docs/protocol.md §16): a `BLOCK` record holds its requester and closes
/// the gate; a `WARN` record does neither. It is the same fact as `blocking`, in Layer 4's
/// words: absent, it follows `blocking`; given, it sets `blocking`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Severity {
    #[serde(rename = "BLOCK")]
    Block,
    #[serde(rename = "WARN")]
    Warn,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Block => "BLOCK",
            Severity::Warn => "WARN",
        }
    }

    /// Parses `BLOCK` or `WARN` (exactly; the message names the value and what is allowed).
    pub fn parse(text: &str) -> Result<Severity, String> {
        match text {
            "BLOCK" => Ok(Severity::Block),
            "WARN" => Ok(Severity::Warn),
            other => Err(format!(
                "unknown severity '{}'; allowed: BLOCK, WARN",
                crate::error::shown(other)
            )),
        }
    }

    /// The severity a record has without one given: `BLOCK` for blocking, else `WARN`.
    pub fn of_blocking(blocking: bool) -> Severity {
        if blocking {
            Severity::Block
        } else {
            Severity::Warn
        }
    }

    pub fn is_blocking(self) -> bool {
        self == Severity::Block
    }
}

/// Type of a thread entry; each leads to one status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Question,
    Answer,
    Stale,
    Retry,
    Escalation,
    Resolution,
    Abandonment,
    /// A human sends an escalated question back to its target (`clarify reopen`): pending
    /// again, same round, the SLA clock restarts.
    Reopen,
    /// A person takes an escalated record (docs/protocol.md §37): still escalated, "alice is
    /// on it" until `until`.
    Claim,
    /// A person hands an escalated record to another (`to`), who then holds it.
    Handoff,
    /// The monitor ends a claim not acted on by its `until`: the record is assigned again.
    Lapse,
    /// A decider's decision on a record that needs several (`quorum`): still escalated
    /// until enough agree.
    Approval,
    /// A notification ladder's next step (`then`) assigns more people to an escalation
    /// nobody claimed: still escalated.
    Assign,
}

impl EntryKind {
    pub fn status_after(self) -> Status {
        match self {
            EntryKind::Question | EntryKind::Retry | EntryKind::Reopen => Status::Pending,
            EntryKind::Answer => Status::Answered,
            EntryKind::Stale => Status::Stale,
            EntryKind::Escalation
            | EntryKind::Claim
            | EntryKind::Handoff
            | EntryKind::Lapse
            | EntryKind::Approval
            | EntryKind::Assign => Status::Escalated,
            EntryKind::Resolution => Status::Resolved,
            EntryKind::Abandonment => Status::Abandoned,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Question => "question",
            EntryKind::Answer => "answer",
            EntryKind::Stale => "stale",
            EntryKind::Retry => "retry",
            EntryKind::Escalation => "escalation",
            EntryKind::Resolution => "resolution",
            EntryKind::Abandonment => "abandonment",
            EntryKind::Reopen => "reopen",
            EntryKind::Claim => "claim",
            EntryKind::Handoff => "handoff",
            EntryKind::Lapse => "lapse",
            EntryKind::Approval => "approval",
            EntryKind::Assign => "assign",
        }
    }
}

/// One entry of a record's thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub round: u32,
    pub from: String,
    pub kind: EntryKind,
    pub body: String,
    /// The typed value of an answer or resolution (docs/protocol.md §22: `true`/`false`, an option
    /// value, or an array of them); hashed like every field.
    pub value: Option<Value>,
    pub timestamp: Timestamp,
    pub hash: Option<String>,
    /// The agent whose key signed the entry (covered by the hash).
    pub signer: Option<String>,
    /// `ed25519:<base64>` over the raw bytes of `hash` (not covered by the hash).
    pub signature: Option<String>,
    /// Fields this version does not know, kept verbatim (and covered by the hash).
    pub extra: Map<String, Value>,
}

/// One clarification: a question, its answers and follow-ups, and what the monitor did.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub id: String,
    pub from: String,
    pub to: String,
    pub topic: String,
    pub blocking: bool,
    pub status: Status,
    pub round: u32,
    pub max_rounds: u32,
    pub sla_minutes: u32,
    pub created: Option<Timestamp>,
    pub stale_after: Option<Timestamp>,
    pub retries: u32,
    pub resolved_at: Option<Timestamp>,
    pub field: Option<String>,
    pub suggestions: Vec<String>,
    pub idempotency_key: Option<String>,
    /// Layer 4 (docs/protocol.md §16): as given; [`Record::severity`] is the one that counts.
    pub severity: Option<Severity>,
    pub context: Option<String>,
    /// Operations this record blocks while open; empty blocks every operation.
    pub blocked_operations: Vec<String>,
    pub session_id: Option<String>,
    pub gap_id: Option<String>,
    /// The answer kind asked for (docs/protocol.md §22); a text question stores nothing.
    pub answer: AnswerSpec,
    /// The question's fingerprint (docs/protocol.md §22), set on records this version creates.
    pub fingerprint: Option<String>,
    /// Re-asks answered from this record instead of a new one (docs/protocol.md §22, docs/decisions.md).
    pub reuses: Reuses,
    pub thread: Vec<Entry>,
    pub extra: Map<String, Value>,
}

/// The ledger of one issue.
#[derive(Clone, Debug, PartialEq)]
pub struct Ledger {
    pub issue_number: u32,
    pub workflow: Option<String>,
    pub clarifications: Vec<Record>,
    pub extra: Map<String, Value>,
}

// Serialised by hand (field order as docs/protocol.md §3.1, unknown fields last): no `flatten`.
impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("round", &self.round)?;
        m.serialize_entry("from", &self.from)?;
        m.serialize_entry("type", &self.kind)?;
        m.serialize_entry("body", &self.body)?;
        if let Some(v) = &self.value {
            m.serialize_entry("value", v)?;
        }
        m.serialize_entry("timestamp", &self.timestamp)?;
        if let Some(s) = &self.signer {
            m.serialize_entry("signer", s)?;
        }
        if let Some(h) = &self.hash {
            m.serialize_entry("hash", h)?;
        }
        if let Some(s) = &self.signature {
            m.serialize_entry("signature", s)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// What an entry about to be appended says ([`Record::append_entry`] dates, chains and signs it).
pub struct NewEntry<'a> {
    pub kind: EntryKind,
    pub from: &'a str,
    pub body: &'a str,
    /// The entry's typed value (docs/protocol.md §22).
    pub value: Option<Value>,
    /// More fields (`by`, `via` of a person, docs/protocol.md §23), hashed like every field.
    pub extra: Map<String, Value>,
}
impl Record {
    /// Writes the record's fields; `fold` replaces the stored snapshot (outputs), `None`
    /// writes it as stored (files, where `seal` made it the fold already).
    fn serialize_fields<M: SerializeMap>(
        &self,
        m: &mut M,
        fold: Option<&Fold>,
    ) -> Result<(), M::Error> {
        let (status, round, retries) = match fold {
            Some(f) => (f.status, f.round, f.retries),
            None => (self.status, self.round, self.retries),
        };
        let (created, stale_after, resolved_at) = match fold {
            Some(f) => (&f.created, &f.stale_after, &f.resolved_at),
            None => (&self.created, &self.stale_after, &self.resolved_at),
        };
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("from", &self.from)?;
        m.serialize_entry("to", &self.to)?;
        m.serialize_entry("topic", &self.topic)?;
        m.serialize_entry("blocking", &self.blocking)?;
        m.serialize_entry("status", &status)?;
        m.serialize_entry("round", &round)?;
        m.serialize_entry("maxRounds", &self.max_rounds)?;
        m.serialize_entry("slaMinutes", &self.sla_minutes)?;
        if let Some(t) = created {
            m.serialize_entry("created", t)?;
        }
        if let Some(t) = stale_after {
            m.serialize_entry("staleAfter", t)?;
        }
        m.serialize_entry("retries", &retries)?;
        m.serialize_entry("resolvedAt", resolved_at)?;
        if let Some(f) = &self.field {
            m.serialize_entry("field", f)?;
        }
        if !self.suggestions.is_empty() {
            m.serialize_entry("suggestions", &self.suggestions)?;
        }
        if let Some(k) = &self.idempotency_key {
            m.serialize_entry("idempotencyKey", k)?;
        }
        if let Some(s) = &self.severity {
            m.serialize_entry("severity", s)?;
        }
        if let Some(c) = &self.context {
            m.serialize_entry("context", c)?;
        }
        if !self.blocked_operations.is_empty() {
            m.serialize_entry("blockedOperations", &self.blocked_operations)?;
        }
        if let Some(s) = &self.session_id {
            m.serialize_entry("sessionId", s)?;
        }
        if let Some(g) = &self.gap_id {
            m.serialize_entry("gapId", g)?;
        }
        crate::kinds::serialize_spec(&self.answer, m)?;
        if let Some(f) = &self.fingerprint {
            m.serialize_entry("fingerprint", f)?;
        }
        self.reuses.serialize_fields(m)?;
        m.serialize_entry("thread", &self.thread)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        Ok(())
    }

    /// The snapshot the outputs show: the fold, with the status every decision uses (a
    /// legacy record stored as `stale` whose `stale` entry is missing shows `stale`).
    pub fn output_fold(&self) -> Fold {
        let mut fold = self.fold();
        fold.status = self.current_status();
        fold
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.serialize_fields(&mut m, None)?;
        m.end()
    }
}

/// A record as outputs show it: `issueNumber` first, the snapshot fields from the fold
/// (docs/protocol.md §20: never a disagreeing stored snapshot). See [`Record::output`].
pub struct RecordOutput<'a>(u32, &'a Record);

impl Serialize for RecordOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.0)?;
        self.1
            .serialize_fields(&mut m, Some(&self.1.output_fold()))?;
        people_fields(self.1, &mut m)?;
        m.end()
    }
}

/// A ledger as outputs show it (`show --issue`): every record's snapshot from its fold.
pub struct LedgerOutput<'a>(&'a Ledger);

/// The records of a [`LedgerOutput`], each with its fold.
struct RecordsOutput<'a>(&'a [Record]);

impl Serialize for RecordsOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(FoldedRecord))
    }
}

struct FoldedRecord<'a>(&'a Record);

impl Serialize for FoldedRecord<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.0
            .serialize_fields(&mut m, Some(&self.0.output_fold()))?;
        people_fields(self.0, &mut m)?;
        m.end()
    }
}

/// What outputs add to an escalated record assigned to people (docs/protocol.md §37): whom
/// it is `assigned` to now and who holds it (`claimedBy`: `person`, `since`, `until`), so
/// every surface shows "alice is on it" without reading the thread. Never written to files.
fn people_fields<M: SerializeMap>(r: &Record, m: &mut M) -> Result<(), M::Error> {
    if r.current_status() != Status::Escalated {
        return Ok(());
    }
    if let Some(names) = crate::people::assigned(r) {
        m.serialize_entry("assigned", &names)?;
    }
    if let Some(h) = crate::people::holder(r) {
        let mut held = Map::new();
        held.insert("person".into(), h.person.into());
        held.insert("since".into(), crate::time::format_ms(h.since).into());
        if let Some(t) = h.until {
            held.insert("until".into(), crate::time::format_ms(t).into());
        }
        m.serialize_entry("claimedBy", &held)?;
    }
    if let Some(q) = crate::people::quorum_of(r) {
        let proposals: Vec<Value> = crate::people::proposals(r)
            .into_iter()
            .map(|p| {
                let mut o = Map::new();
                if let Some(v) = p.value {
                    o.insert("value".into(), v);
                }
                o.insert("text".into(), p.text.into());
                o.insert("by".into(), p.by.into());
                Value::Object(o)
            })
            .collect();
        let mut approvals = Map::new();
        approvals.insert("needed".into(), q.into());
        approvals.insert("proposals".into(), proposals.into());
        if let Some(s) = crate::people::summary(r) {
            approvals.insert("summary".into(), s.into());
        }
        m.serialize_entry("approvals", &approvals)?;
    }
    Ok(())
}

impl Serialize for LedgerOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_with(s, &RecordsOutput(&self.0.clarifications))
    }
}

impl Serialize for Ledger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize_with(s, &self.clarifications)
    }
}

impl Ledger {
    fn serialize_with<S: Serializer, R: Serialize + ?Sized>(
        &self,
        s: S,
        records: &R,
    ) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.issue_number)?;
        if let Some(w) = &self.workflow {
            m.serialize_entry("workflow", w)?;
        }
        m.serialize_entry("clarifications", records)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Ledger {
    pub fn new(issue_number: u32) -> Self {
        Ledger {
            issue_number,
            workflow: None,
            clarifications: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Parses ledger bytes. `file` names the source in errors; `issue` (from the file name)
    /// fills a missing `issueNumber` and must equal a present one (a misfiled ledger is
    /// `LEDGER_CORRUPT`, docs/protocol.md §20). A UTF-8 BOM is skipped (never written). Ledgers of the
    /// reference implementation and of AgentX are normalised here.
    pub fn parse(file: &str, bytes: &[u8], issue: Option<u32>) -> Result<Ledger, ClarifyError> {
        // One UTF-8 check of the whole file, then a `&str` parse that need not re-check every
        // string: most of a workspace pass is spent here.
        let text = std::str::from_utf8(crate::encoding::strip_bom(bytes))
            .map_err(|e| ClarifyError::corrupt(file, format!("not UTF-8: {e}")))?;
        let raw: wire::RawLedger =
            serde_json::from_str(text).map_err(|e| ClarifyError::corrupt(file, e.to_string()))?;
        raw.normalise(file, issue)
    }

    /// Converts a JSON value (API input) into a ledger. It goes through the same text parser
    /// as files: one deserializer for both paths (and one copy of it in the wasm build).
    pub fn from_value(
        file: &str,
        value: &Value,
        issue: Option<u32>,
    ) -> Result<Ledger, ClarifyError> {
        let text =
            serde_json::to_vec(value).map_err(|e| ClarifyError::corrupt(file, e.to_string()))?;
        Ledger::parse(file, &text, issue)
    }

    /// Pretty-printed JSON with a trailing newline: the exact bytes of a ledger file.
    pub fn to_pretty_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).unwrap_or_default();
        out.push('\n');
        out
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The ledger as outputs show it: each record's snapshot from its fold (docs/protocol.md §20).
    pub fn output(&self) -> LedgerOutput<'_> {
        LedgerOutput(self)
    }

    /// [`Ledger::output`] as a JSON value.
    pub fn to_output_value(&self) -> Value {
        serde_json::to_value(LedgerOutput(self)).unwrap_or(Value::Null)
    }

    pub fn find(&self, id: &str) -> Option<&Record> {
        self.clarifications.iter().find(|r| r.id == id)
    }

    pub fn position(&self, id: &str) -> Option<usize> {
        self.clarifications.iter().position(|r| r.id == id)
    }

    /// The next id: max(existing sequence) + 1 over this issue's valid ids (never count + 1).
    pub fn next_id(&self) -> ClarificationId {
        let ids = self.clarifications.iter().map(|r| r.id.as_str());
        let seq = crate::names::next_seq(ids, "CLR", self.issue_number);
        ClarificationId::new(self.issue_number, seq)
    }

    /// Prepares the ledger for writing: every snapshot becomes its fold, timestamps take their
    /// canonical spelling and unhashed entries after the last hashed one (all of a legacy
    /// thread) are hashed in order. Idempotent.
    pub fn seal(&mut self) {
        for record in &mut self.clarifications {
            record.seal();
        }
    }
}

impl Record {
    /// The record's sequence number, when its id is valid.
    pub fn seq(&self) -> Option<u64> {
        ClarificationId::parse(&self.id).ok().map(|id| id.seq)
    }

    /// Sort key that orders records by sequence number, invalid ids last (by text).
    pub fn order_key(&self) -> (u64, &str) {
        (self.seq().unwrap_or(u64::MAX), &self.id)
    }

    /// A reference-implementation record with no thread (round 0): only escalate, abandon
    /// and the monitor touch it.
    pub fn is_legacy_empty(&self) -> bool {
        self.thread.is_empty()
    }

    /// The status every decision uses: the fold of the thread, except that a legacy record
    /// stored as `stale` whose fold is `pending` counts as stale (its `stale` entry is missing).
    pub fn current_status(&self) -> Status {
        if self.has_missing_stale_entry() {
            Status::Stale
        } else {
            self.folded_status()
        }
    }

    /// Layer 4's severity: the one given, else `BLOCK` for a blocking record, `WARN` otherwise.
    pub fn severity(&self) -> Severity {
        self.severity
            .unwrap_or_else(|| Severity::of_blocking(self.blocking))
    }

    /// Whether this record, while open, blocks `operation` (None: any operation). A record
    /// without `blockedOperations` blocks every operation.
    pub fn blocks(&self, operation: Option<&str>) -> bool {
        match operation {
            Some(op) if !self.blocked_operations.is_empty() => {
                self.blocked_operations.iter().any(|b| b == op)
            }
            _ => true,
        }
    }

    /// A wait-for edge: a blocking record whose requester still waits (pending or stale).
    pub fn waits(&self) -> bool {
        self.blocking && matches!(self.current_status(), Status::Pending | Status::Stale)
    }

    /// The fold's status without the whole fold: every entry sets the status, so it is the
    /// last entry's (the stored one for a legacy record without a thread).
    pub fn folded_status(&self) -> Status {
        self.thread
            .last()
            .map_or(self.status, |e| e.kind.status_after())
    }

    /// The fold's round: the number of questions (stored round for a legacy empty thread).
    pub fn folded_round(&self) -> u32 {
        self.count_or(EntryKind::Question, self.round)
    }

    /// The fold's retries: the number of retry entries.
    pub fn folded_retries(&self) -> u32 {
        self.count_or(EntryKind::Retry, self.retries)
    }

    /// How many entries of `kind` the thread holds; `stored` for a legacy empty thread.
    fn count_or(&self, kind: EntryKind, stored: u32) -> u32 {
        if self.thread.is_empty() {
            return stored;
        }
        let n = self.thread.iter().filter(|e| e.kind == kind).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The fold's `staleAfter` in epoch ms: the latest question or retry plus the SLA.
    pub fn stale_after_ms(&self) -> Option<i64> {
        self.sla_deadline_ms()
            .or_else(|| self.stale_after.as_ref().map(Timestamp::ms))
    }

    /// The latest question, retry or reopen plus the SLA; `None` for a thread with none (a
    /// legacy record then keeps its stored `staleAfter`).
    pub(crate) fn sla_deadline_ms(&self) -> Option<i64> {
        self.last_question_or_retry_ms()
            .map(|t| t.saturating_add(i64::from(self.sla_minutes) * 60_000))
    }

    fn last_question_or_retry_ms(&self) -> Option<i64> {
        self.thread
            .iter()
            .rev()
            .find(|e| {
                matches!(
                    e.kind,
                    EntryKind::Question | EntryKind::Retry | EntryKind::Reopen
                )
            })
            .map(|e| e.timestamp.ms())
    }

    /// When the requester last asked: the latest question or retry, else (a legacy record
    /// without a question) `created`. The monitor abandons a record only for a status change
    /// after this (docs/protocol.md §20).
    pub fn last_ask_ms(&self) -> Option<i64> {
        self.last_question_or_retry_ms()
            .or_else(|| self.created.as_ref().map(Timestamp::ms))
    }

    /// True when the thread says `pending` but the stored status says `stale` (legacy).
    pub fn has_missing_stale_entry(&self) -> bool {
        // An empty thread folds to the stored status, which cannot be both.
        self.status == Status::Stale && self.folded_status() == Status::Pending
    }

    pub fn last_timestamp_ms(&self) -> Option<i64> {
        self.thread.last().map(|e| e.timestamp.ms())
    }

    /// The timestamp of a new entry: `now`, or the last entry's time when `now` is earlier
    /// (clock skew between machines must not reorder history).
    pub fn clamp_now(&self, now: i64) -> i64 {
        match self.last_timestamp_ms() {
            Some(last) if last > now => last,
            _ => now,
        }
    }

    /// Appends an unsigned entry: [`Record::append_signed`] with no keys.
    pub fn append(&mut self, kind: EntryKind, from: &str, body: &str, at_ms: i64) -> i64 {
        self.append_signed(kind, from, body, at_ms, &Signers::default())
    }

    /// Appends an entry, chaining its hash, and refreshes the snapshot. The entry is dated
    /// `at_ms` clamped by [`Record::clamp_now`], so no caller can write history out of order.
    /// When `signers` holds the key that may sign for `from` ([`Signers::for_author`]), the
    /// entry names its signer (hashed) and carries the signature of its hash.
    /// Returns the entry's timestamp (epoch ms).
    pub fn append_signed(
        &mut self,
        kind: EntryKind,
        from: &str,
        body: &str,
        at_ms: i64,
        signers: &Signers,
    ) -> i64 {
        let entry = NewEntry {
            kind,
            from,
            body,
            value: None,
            extra: Map::new(),
        };
        self.append_entry(entry, at_ms, signers)
    }

    /// The one way an entry is appended: its typed `value` (docs/protocol.md §22) and any more fields
    /// (`by`, `via`, docs/protocol.md §23) hashed with it.
    pub fn append_entry(&mut self, new: NewEntry<'_>, at_ms: i64, signers: &Signers) -> i64 {
        let NewEntry {
            kind,
            from,
            body,
            value,
            extra,
        } = new;
        let at_ms = self.clamp_now(at_ms);
        let round = match kind {
            EntryKind::Question => self.folded_round().saturating_add(1),
            _ => self.folded_round(),
        };
        let mut entry = Entry {
            round,
            from: from.to_owned(),
            kind,
            body: body.to_owned(),
            value,
            timestamp: Timestamp::from_ms(at_ms),
            hash: None,
            signer: None,
            signature: None,
            extra,
        };
        let key = signers.for_author(from);
        entry.signer = key.map(|(name, _)| name.to_owned());
        // Legacy entries, and entries another tool appended without a hash, join the chain
        // first: the new entry's hash then covers all of the history before it.
        hash::hash_tail(&self.id, &mut self.thread);
        let prev = self
            .thread
            .last()
            .and_then(|e| e.hash.as_deref())
            .unwrap_or("");
        let hash = entry_hash(&self.id, prev, &entry);
        entry.signature = key.and_then(|(_, secret)| crate::signing::sign_hash(secret, &hash));
        entry.hash = Some(hash);
        let at = entry.timestamp.ms();
        self.thread.push(entry);
        // A new entry is a new fact: the snapshot follows the fold, legacy marker or not.
        self.refresh(false);
        at
    }

    /// Prepares the record for writing: timestamps in canonical form, snapshot := fold, and
    /// unhashed entries after the last hashed one (all of a legacy thread) hashed. A legacy
    /// record stored as `stale` whose thread lacks the `stale` entry keeps that status until
    /// the monitor writes the entry.
    pub fn seal(&mut self) {
        let keep = self.has_missing_stale_entry();
        self.canonicalise_timestamps();
        self.refresh(keep);
    }

    /// Every timestamp in its canonical spelling. Hashes cover instants, not spellings, so
    /// this breaks no chain; it heals what a foreign writer re-spelled (`.94Z`).
    pub(crate) fn canonicalise_timestamps(&mut self) {
        for t in [
            &mut self.created,
            &mut self.stale_after,
            &mut self.resolved_at,
        ]
        .into_iter()
        .flatten()
        {
            if !t.is_canonical() {
                *t = t.canonicalised();
            }
        }
        for entry in &mut self.thread {
            if !entry.timestamp.is_canonical() {
                entry.timestamp = entry.timestamp.canonicalised();
            }
        }
    }

    fn refresh(&mut self, keep_stale_marker: bool) {
        if self.thread.is_empty() {
            return;
        }
        let f = self.fold();
        self.status = if keep_stale_marker {
            Status::Stale
        } else {
            f.status
        };
        self.round = f.round;
        self.retries = f.retries;
        self.resolved_at = f.resolved_at;
        self.stale_after = f.stale_after;
        if f.created.is_some() {
            self.created = f.created;
        }
        hash::hash_tail(&self.id, &mut self.thread);
    }

    /// The record as the outputs show it, ready to serialise without an intermediate value.
    pub fn output(&self, issue: u32) -> RecordOutput<'_> {
        RecordOutput(issue, self)
    }

    /// The record as the outputs show it: with `issueNumber` (first).
    pub fn to_output(&self, issue: u32) -> Value {
        serde_json::to_value(RecordOutput(issue, self)).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests;
