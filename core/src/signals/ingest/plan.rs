//! What each block of one output does (see the module doc of `ingest`).

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use super::{block_key, Context, Existing};
use crate::config::Config;
use crate::delegation::{self, Manifests, NewDelegation, Response};
use crate::error::ClarifyError;
use crate::names::{check_agent, check_issue, HUMAN};
use crate::ops::NewRequest;
use crate::render::summary;
use crate::scope::{self, Ask};
use crate::signals::parse::{Block, BlockName, FieldValue, Parsed, Problem};
use crate::signals::signal::{
    ClarificationNeeded, CompletionReport, DelegateWork, ReportStatus, Signal, StopWork,
};
use crate::workflow::Workflows;

/// What to do with one block.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A clarification request (scope-checked); the record's `signal` field is in the
    /// request's `extra`.
    Request { request: NewRequest },
    /// A record created already escalated to a human, with `reason`.
    Escalate { request: NewRequest, reason: String },
    /// A delegation request.
    Delegate { request: NewDelegation },
    /// Completes or fails an open delegation of the agent.
    Close {
        id: String,
        action: delegation::Action,
    },
    /// Keeps a completion report that closes no delegation.
    Report {
        report: CompletionReport,
        key: String,
    },
    /// Already ingested (`id`: what holds its key) or a repeat within this output.
    Skip { id: Option<String>, reason: String },
    /// Malformed, or fields missing or wrong: never acted on.
    Invalid { problems: Vec<Problem> },
    /// Well-formed, but refused (validation, configuration).
    Refused { error: ClarifyError },
}

impl Step {
    /// The word the `--json` report uses.
    pub fn action(&self) -> &'static str {
        match self {
            Step::Request { .. } => "request",
            Step::Escalate { .. } => "escalate",
            Step::Delegate { .. } => "delegate",
            Step::Close { action, .. } if action.op == delegation::Op::Fail => "fail",
            Step::Close { .. } => "complete",
            Step::Report { .. } => "report",
            Step::Skip { .. } => "skip",
            Step::Invalid { .. } => "invalid",
            Step::Refused { .. } => "refused",
        }
    }
}

/// One block's decision.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockPlan {
    pub block: BlockName,
    pub start_line: usize,
    pub end_line: Option<usize>,
    /// [`block_key`] of a well-formed block.
    pub key: Option<String>,
    pub step: Step,
    /// E.g. an `agent_id` that differs from the ingesting agent.
    pub warnings: Vec<String>,
}

/// The decisions for one output.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub context: Context,
    pub blocks: Vec<BlockPlan>,
    /// Problems outside any block (closing tags that close nothing).
    pub problems: Vec<Problem>,
}

/// Decides what every block of `parsed` does. Fails only when the context itself is invalid
/// (issue, agent or parent names).
pub fn plan(
    parsed: &Parsed,
    ctx: &Context,
    existing: &Existing<'_>,
    config: &Config,
    workflows: &Workflows,
    manifests: &Manifests,
) -> Result<Plan, ClarifyError> {
    check_issue(u64::from(ctx.issue))?;
    check_agent(&ctx.agent)?;
    // docs/protocol.md §31: the hub's own actors are never impersonated from a file's text — entries by
    // `agent-x` are signed with the hub's key.
    if crate::names::is_reserved(&ctx.agent) {
        return Err(ClarifyError::input(format!(
            "'{}' is reserved: signals are ingested as the output of an agent, never of human, monitor or agent-x",
            ctx.agent
        )));
    }
    if let Some(p) = &ctx.parent {
        check_agent(p)?;
    }
    let mut planner = Planner {
        ctx,
        existing,
        config,
        workflows,
        manifests,
        known: known_keys(existing),
        seen: BTreeMap::new(),
        closing: Vec::new(),
    };
    let blocks = parsed.blocks.iter().map(|b| planner.block(b)).collect();
    Ok(Plan {
        context: ctx.clone(),
        blocks,
        problems: parsed.problems.clone(),
    })
}

/// Every key already on the issue, and what holds it.
fn known_keys(existing: &Existing<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(l) = existing.ledger {
        for r in &l.clarifications {
            if let Some(k) = &r.idempotency_key {
                out.insert(k.clone(), r.id.clone());
            }
        }
    }
    if let Some(dl) = existing.delegations {
        for d in &dl.delegations {
            if let Some(k) = &d.signal_key {
                out.insert(k.clone(), d.id.clone());
            }
            for e in &d.thread {
                if let Some(Value::String(k)) = e.extra.get("signalKey") {
                    out.insert(k.clone(), d.id.clone());
                }
            }
        }
        for r in &dl.reports {
            if let Some(k) = &r.signal_key {
                out.insert(k.clone(), String::from("report"));
            }
        }
    }
    out
}

struct Planner<'a> {
    ctx: &'a Context,
    existing: &'a Existing<'a>,
    config: &'a Config,
    workflows: &'a Workflows,
    manifests: &'a Manifests,
    known: BTreeMap<String, String>,
    /// key → start line of its first block in this output.
    seen: BTreeMap<String, usize>,
    /// Open delegations an earlier block of this output closes. A list: it holds at most the
    /// agent's open delegations, which `completion` scans anyway (a `BTreeSet<String>` cost
    /// the wasm package its own set code).
    closing: Vec<String>,
}

impl Planner<'_> {
    fn block(&mut self, b: &Block) -> BlockPlan {
        let mut out = BlockPlan {
            block: b.name,
            start_line: b.start_line,
            end_line: b.end_line,
            key: None,
            step: Step::Skip {
                id: None,
                reason: String::new(),
            },
            warnings: Vec::new(),
        };
        let signal = match b.signal() {
            Ok(s) => s,
            Err(problems) => {
                out.step = Step::Invalid { problems };
                return out;
            }
        };
        let key = block_key(self.ctx.issue, &self.ctx.agent, &b.text);
        out.key = Some(key.clone());
        if let Some(id) = signal.agent_id().filter(|id| *id != self.ctx.agent) {
            out.warnings.push(format!(
                "the block's agent_id '{}' differs from the ingesting agent '{}'; the block is attributed to '{}'",
                crate::error::shown(id),
                self.ctx.agent,
                self.ctx.agent
            ));
        }
        if let Some(id) = self.known.get(&key) {
            out.step = Step::Skip {
                id: Some(id.clone()),
                reason: format!("already ingested ({id})"),
            };
            return out;
        }
        if let Some(first) = self.seen.get(&key) {
            out.step = Step::Skip {
                id: None,
                reason: format!("repeats the block at line {first}"),
            };
            return out;
        }
        self.seen.insert(key.clone(), b.start_line);
        out.step = match &signal {
            Signal::ClarificationNeeded(s) => self.clarification(s, &signal, &key),
            Signal::StopWork(s) => self.stop_work(s, &signal, &key),
            Signal::DelegateWork(s) => self.delegate(b, s, &key),
            Signal::CompletionReport(s) => self.completion(b, s, &key),
        };
        out
    }

    fn request(
        &self,
        to: &str,
        topic: &str,
        question: String,
        key: &str,
        extra: Map<String, Value>,
    ) -> NewRequest {
        NewRequest {
            issue_number: u64::from(self.ctx.issue),
            from: self.ctx.agent.clone(),
            to: to.to_owned(),
            topic: summary(topic, self.config.max_topic_chars as usize),
            question,
            blocking: true,
            workflow: None,
            step: None,
            field: None,
            suggestions: Vec::new(),
            idempotency_key: Some(key.to_owned()),
            extra,
            ..NewRequest::default()
        }
    }

    fn clarification(&self, s: &ClarificationNeeded, signal: &Signal, key: &str) -> Step {
        let question = match s.questions.as_slice() {
            [one] => one.clone(),
            many => many
                .iter()
                .enumerate()
                .map(|(i, q)| format!("{}. {q}", i + 1))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let first = s.questions.first().map_or("", String::as_str);
        let topic = s.blocked_at.as_deref().unwrap_or(first);
        let extra = signal_extra(signal, key);
        let target = s.to.as_deref().or(self.ctx.parent.as_deref());
        let Some(to) = target.filter(|t| !crate::names::is_reserved(t)) else {
            let request = self.request(HUMAN, topic, question, key, extra);
            let reason = String::from("no agent to ask: the block names no target and there is no parent, so a human answers");
            return self.escalate(request, reason);
        };
        let request = self.request(to, topic, question, key, extra);
        if let Err(error) = request.validate(self.config) {
            return Step::Refused { error };
        }
        let ask = Ask {
            from: &request.from,
            to: &request.to,
            blocking: request.is_blocking(),
            workflow: None,
            step: None,
            ledger_workflow: self.existing.ledger.and_then(|l| l.workflow.as_deref()),
        };
        match scope::check(&ask, self.config, self.workflows) {
            Ok(_) => Step::Request { request },
            // The question must not be lost: a human sees what the scope refused.
            Err(e) if matches!(e.code(), "SCOPE_VIOLATION" | "BLOCKING_NOT_ALLOWED") => {
                let reason = format!("scope refused asking '{to}': {e}");
                self.escalate(request, reason)
            }
            Err(error) => Step::Refused { error },
        }
    }

    fn escalate(&self, request: NewRequest, reason: String) -> Step {
        match request.validate(self.config) {
            Ok(_) if request.from == request.to => Step::Refused {
                error: ClarifyError::SelfClarification {
                    agent: request.from,
                },
            },
            Ok(_) => Step::Escalate {
                request,
                reason: summary(&reason, self.config.max_body_chars as usize),
            },
            Err(error) => Step::Refused { error },
        }
    }

    fn stop_work(&self, s: &StopWork, signal: &Signal, key: &str) -> Step {
        let reason = format!("stop work: {}", s.blocker_type);
        let mut question = s
            .details
            .clone()
            .or_else(|| s.blocked_work.clone())
            .unwrap_or_else(|| reason.clone());
        if let (Some(_), Some(work)) = (&s.details, &s.blocked_work) {
            question.push_str(&format!("\n\nBlocked work: {work}"));
        }
        if let Some(req) = &s.resume_requirements {
            question.push_str(&format!("\nTo resume: {req}"));
        }
        let to = self.ctx.parent.as_deref().unwrap_or(HUMAN);
        let request = self.request(to, &reason, question, key, signal_extra(signal, key));
        self.escalate(request, reason)
    }

    fn delegate(&self, b: &Block, s: &DelegateWork, key: &str) -> Step {
        let to =
            s.to.clone()
                .or_else(|| {
                    s.capability
                        .as_deref()
                        .and_then(|c| self.manifests.best_for(c, &self.ctx.agent))
                        .map(str::to_owned)
                })
                .or_else(|| self.ctx.parent.clone());
        let Some(to) = to else {
            return Step::Refused {
                error: ClarifyError::input(
                    "no agent to delegate to: the block names no target, no manifest offers its capability, and there is no parent",
                ),
            };
        };
        let known = [
            "agent_id",
            "timestamp",
            "new_task_description",
            "capability",
            "to",
            "independence",
            "coordination",
        ];
        // The block's other fields travel as the context slice.
        let context_slice: Map<String, Value> = b
            .fields
            .iter()
            .filter(|f| !known.contains(&f.key.as_str()))
            .map(|f| (f.key.clone(), field_json(&f.value)))
            .collect();
        let mut extra = Map::new();
        if let Some(c) = &s.coordination {
            extra.insert("coordination".into(), Value::from(c.as_str()));
        }
        if let Some(i) = s.independence {
            extra.insert("independence".into(), Value::from(i.as_str()));
        }
        let request = NewDelegation {
            issue_number: u64::from(self.ctx.issue),
            from: self.ctx.agent.clone(),
            to,
            capability: s.capability.clone(),
            objective: s.new_task_description.clone(),
            context_slice,
            output_contract: Map::new(),
            timeout_minutes: None,
            signal_key: Some(key.to_owned()),
            extra,
        };
        match request.validate(self.config) {
            Ok(_) => Step::Delegate { request },
            Err(error) => Step::Refused { error },
        }
    }

    fn completion(&mut self, b: &Block, s: &CompletionReport, key: &str) -> Step {
        let open = self.existing.delegations.and_then(|dl| {
            let mut open: Vec<&delegation::Delegation> = dl
                .delegations
                .iter()
                .filter(|d| {
                    d.to == self.ctx.agent
                        && d.current_status().is_open()
                        && !self.closing.contains(&d.id)
                })
                .collect();
            crate::stable_sort::sort_by_key(&mut open, |d| {
                delegation::DelegationId::parse(&d.id).map_or(u64::MAX, |id| id.seq)
            });
            open.first().map(|d| d.id.clone())
        });
        let Some(id) = open else {
            return Step::Report {
                report: s.clone(),
                key: key.to_owned(),
            };
        };
        self.closing.push(id.clone());
        let by = self.ctx.agent.as_str();
        let action = match s.status {
            ReportStatus::Failed => delegation::Action::fail(
                by,
                Some(
                    s.metrics_achieved
                        .clone()
                        .unwrap_or_else(|| format!("{by} reported the work failed")),
                ),
            ),
            ReportStatus::Success | ReportStatus::Partial => {
                let unresolved = match b.field("unresolved").map(|f| &f.value) {
                    Some(FieldValue::List(items)) => items.clone(),
                    Some(FieldValue::Text(t)) if !t.trim().is_empty() => vec![t.trim().to_owned()],
                    _ => Vec::new(),
                };
                let mut extra = Map::new();
                extra.insert("reportStatus".into(), Value::from(s.status.as_str()));
                extra.insert("deliverables".into(), Value::from(s.deliverables.clone()));
                let summary = s.metrics_achieved.clone().unwrap_or_else(|| {
                    format!(
                        "{}: {} deliverables",
                        s.status.as_str(),
                        s.deliverables.len()
                    )
                });
                delegation::Action::complete(
                    by,
                    Response {
                        artifact_path: s.deliverables.first().cloned(),
                        summary,
                        metrics: Map::new(),
                        follow_up_recommended: s.recommendations.clone(),
                        unresolved,
                        extra,
                    },
                )
            }
        };
        Step::Close {
            id,
            action: action.with_signal_key(Some(key.to_owned())),
        }
    }
}

fn field_json(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(t) => Value::from(t.as_str()),
        FieldValue::List(items) => Value::from(items.clone()),
    }
}

/// The record's `signal` field: the block's typed fields (absent ones left out) and its key.
fn signal_extra(signal: &Signal, key: &str) -> Map<String, Value> {
    let mut fields = match serde_json::to_value(signal) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    fields.retain(|_, v| !v.is_null());
    fields.insert("key".into(), Value::from(key));
    let mut extra = Map::new();
    extra.insert("signal".into(), Value::Object(fields));
    extra
}

impl Serialize for BlockPlan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("block", &self.block)?;
        m.serialize_entry("startLine", &self.start_line)?;
        m.serialize_entry("endLine", &self.end_line)?;
        m.serialize_entry("key", &self.key)?;
        m.serialize_entry("action", self.step.action())?;
        match &self.step {
            Step::Request { request, .. } | Step::Escalate { request, .. } => {
                m.serialize_entry("from", &request.from)?;
                m.serialize_entry("to", &request.to)?;
                m.serialize_entry("topic", &request.topic)?;
                if let Step::Escalate { reason, .. } = &self.step {
                    m.serialize_entry("reason", reason)?;
                }
            }
            Step::Delegate { request } => {
                m.serialize_entry("from", &request.from)?;
                m.serialize_entry("to", &request.to)?;
                m.serialize_entry("capability", &request.capability)?;
            }
            Step::Close { id, .. } | Step::Skip { id: Some(id), .. } => {
                m.serialize_entry("id", id)?;
            }
            Step::Report { .. } | Step::Skip { id: None, .. } => {}
            Step::Invalid { problems } => m.serialize_entry("problems", problems)?,
            Step::Refused { error } => {
                m.serialize_entry("error", &crate::envelope::error_value(error))?;
            }
        }
        if let Step::Skip { reason, .. } = &self.step {
            m.serialize_entry("reason", reason)?;
        }
        m.serialize_entry("warnings", &self.warnings)?;
        m.end()
    }
}

impl Serialize for Plan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.context.issue)?;
        m.serialize_entry("agent", &self.context.agent)?;
        m.serialize_entry("parent", &self.context.parent)?;
        m.serialize_entry("blocks", &self.blocks)?;
        m.serialize_entry("problems", &self.problems)?;
        m.end()
    }
}
