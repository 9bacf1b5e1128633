//! `request`: a new clarification record (validation → idempotency → scope → write).

use serde_json::Map;

use super::{check_now, Applied};
use crate::config::{Config, MAX_SHORT_TEXT, MAX_SUGGESTIONS};
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::{EntryKind, Ledger, Record, Severity, Status};
use crate::names::{
    check_agent, check_issue, check_operation, check_text, check_uuid, check_workflow_name,
};
use crate::scope::{self, Ask};
use crate::signing::Signers;
use crate::time::Timestamp;
use crate::workflow::Workflows;

/// At most this many `blockedOperations` per record (SPEC §16).
pub const MAX_BLOCKED_OPERATIONS: usize = 20;
/// Longest `gapId` (SPEC §16).
pub const MAX_GAP_ID: usize = 64;

/// What an agent asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRequest {
    pub issue_number: u64,
    pub from: String,
    pub to: String,
    pub topic: String,
    pub question: String,
    pub blocking: bool,
    pub workflow: Option<String>,
    pub step: Option<String>,
    pub field: Option<String>,
    pub suggestions: Vec<String>,
    pub idempotency_key: Option<String>,
}

impl NewRequest {
    /// SPEC §6.4 step 1, in the documented order. Shells call it before reading the ledger so
    /// that input errors win over file errors; [`request`] runs it again (it is cheap).
    pub fn validate(&self, config: &Config) -> Result<u32, ClarifyError> {
        let issue = check_issue(self.issue_number)?;
        check_agent(&self.from)?;
        check_agent(&self.to)?;
        if let Some(w) = &self.workflow {
            check_workflow_name(w)?;
        }
        check_text("topic", &self.topic, config.max_topic_chars as usize)?;
        check_text("question", &self.question, config.max_body_chars as usize)?;
        if let Some(f) = &self.field {
            check_text("field", f, MAX_SHORT_TEXT)?;
        }
        if self.suggestions.len() > MAX_SUGGESTIONS {
            return Err(ClarifyError::TextTooLong {
                field: String::from("suggestions"),
                len: self.suggestions.len(),
                max: MAX_SUGGESTIONS,
                unit: "suggestions",
            });
        }
        for s in &self.suggestions {
            check_text("suggestion", s, MAX_SHORT_TEXT)?;
        }
        if let Some(k) = &self.idempotency_key {
            check_text("idempotency key", k, MAX_SHORT_TEXT)?;
        }
        Ok(issue)
    }
}

/// Layer 4's optional fields of a request (SPEC §16). Kept beside [`NewRequest`] rather than
/// in it, so that every existing constructor of a request keeps compiling; all empty (the
/// default) is a request as before Layer 4.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GapFields {
    /// Given, it sets `blocking` (`BLOCK` blocks).
    pub severity: Option<Severity>,
    pub context: Option<String>,
    pub blocked_operations: Vec<String>,
    pub session_id: Option<String>,
    pub gap_id: Option<String>,
}

impl GapFields {
    /// Validation of the Layer 4 fields, after [`NewRequest::validate`]: context,
    /// blocked operations (count, then each name, then duplicates), session id, gap id.
    pub fn validate(&self, config: &Config) -> Result<(), ClarifyError> {
        if let Some(c) = &self.context {
            check_text("context", c, config.max_body_chars as usize)?;
        }
        if self.blocked_operations.len() > MAX_BLOCKED_OPERATIONS {
            return Err(ClarifyError::TextTooLong {
                field: String::from("blocked operations"),
                len: self.blocked_operations.len(),
                max: MAX_BLOCKED_OPERATIONS,
                unit: "operations",
            });
        }
        for (i, op) in self.blocked_operations.iter().enumerate() {
            check_operation(op)?;
            if self.blocked_operations.iter().take(i).any(|o| o == op) {
                return Err(ClarifyError::input(format!(
                    "blocked operation '{op}' is listed twice; list each operation once"
                )));
            }
        }
        if let Some(s) = &self.session_id {
            check_uuid("session id", s)?;
        }
        if let Some(g) = &self.gap_id {
            check_text("gap id", g, MAX_GAP_ID)?;
        }
        Ok(())
    }

    /// Whether a record was asked with these Layer 4 fields, for an idempotent replay: the
    /// severity and blocked operations as given (they decide the gate); context, session
    /// and gap ids do not take part (see `docs/decisions.md`).
    fn same_as(&self, record: &Record) -> bool {
        record.severity == self.severity && record.blocked_operations == self.blocked_operations
    }
}

/// Opens a clarification on `ledger` (None: the issue has no ledger yet): [`request_with`]
/// without Layer 4 fields and unsigned.
pub fn request(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    config: &Config,
    workflows: &Workflows,
    now: i64,
) -> Result<Applied, ClarifyError> {
    request_with(
        ledger,
        req,
        &GapFields::default(),
        config,
        workflows,
        now,
        &Signers::default(),
    )
}

/// Opens a clarification with Layer 4's fields; the question is signed when `signers` holds
/// the requester's key.
pub fn request_with(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    gap: &GapFields,
    config: &Config,
    workflows: &Workflows,
    now: i64,
    signers: &Signers,
) -> Result<Applied, ClarifyError> {
    check_now(now)?;
    let issue = req.validate(config)?;
    gap.validate(config)?;
    let blocking = gap.severity.map_or(req.blocking, Severity::is_blocking);
    let mut ledger = match ledger {
        Some(l) if l.issue_number != issue => {
            return Err(ClarifyError::input(format!(
                "the ledger is for issue {} but the request is for issue {issue}",
                l.issue_number
            )))
        }
        Some(l) => l.clone(),
        None => Ledger::new(issue),
    };

    // An agent that crashed and re-sends its request gets the original record back.
    if let Some(key) = &req.idempotency_key {
        if let Some(existing) = ledger
            .clarifications
            .iter()
            .find(|r| r.idempotency_key.as_ref() == Some(key))
        {
            let first_question = existing
                .thread
                .iter()
                .find(|e| e.kind == EntryKind::Question);
            let same = existing.from == req.from
                && existing.to == req.to
                && existing.topic == req.topic
                && first_question.is_some_and(|q| q.body == req.question)
                && gap.same_as(existing);
            if !same {
                return Err(ClarifyError::IdempotencyConflict {
                    key: key.clone(),
                    id: existing.id.clone(),
                });
            }
            let id = existing.id.clone();
            return Ok(Applied {
                ledger,
                id,
                events: Vec::new(),
                idempotent: true,
                error: None,
            });
        }
    }

    let grant = scope::check(
        &Ask {
            from: &req.from,
            to: &req.to,
            blocking,
            workflow: req.workflow.as_deref(),
            step: req.step.as_deref(),
            ledger_workflow: ledger.workflow.as_deref(),
        },
        config,
        workflows,
    )?;

    let id = ledger.next_id().to_string();
    let mut record = Record {
        id: id.clone(),
        from: req.from.clone(),
        to: req.to.clone(),
        topic: req.topic.clone(),
        blocking,
        status: Status::Pending,
        round: 0,
        max_rounds: grant.max_rounds,
        sla_minutes: grant.sla_minutes,
        created: Some(Timestamp::from_ms(now)),
        stale_after: None,
        retries: 0,
        resolved_at: None,
        field: req.field.clone(),
        suggestions: req.suggestions.clone(),
        idempotency_key: req.idempotency_key.clone(),
        severity: gap.severity,
        context: gap.context.clone(),
        blocked_operations: gap.blocked_operations.clone(),
        session_id: gap.session_id.clone(),
        gap_id: gap.gap_id.clone(),
        thread: Vec::new(),
        extra: Map::new(),
    };
    let at = record.append_signed(EntryKind::Question, &req.from, &req.question, now, signers);
    let events = Event::for_entry(
        issue,
        &record,
        EntryKind::Question,
        &req.from,
        &req.question,
        at,
    )
    .into_iter()
    .collect();
    if ledger.workflow.is_none() {
        ledger.workflow = Some(grant.workflow);
    }
    ledger.clarifications.push(record);
    ledger.seal();
    Ok(Applied {
        ledger,
        id,
        events,
        idempotent: false,
        error: None,
    })
}
