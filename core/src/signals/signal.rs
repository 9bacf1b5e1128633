//! Typed views of the four blocks, with seed 002's fields (docs/protocol.md §17). A view reads the fields
//! it knows; the block keeps the others. Every refusal is a [`Problem`] naming the field.

use serde::Serialize;

use super::parse::{Block, BlockName, FieldValue, Problem};
use crate::delegation::check_capability;
use crate::names::{check_agent, is_reserved};

/// `[CLARIFICATION_NEEDED]`: the agent cannot go on without answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClarificationNeeded {
    pub agent_id: Option<String>,
    pub timestamp: Option<String>,
    pub blocked_at: Option<String>,
    /// At least one, none empty.
    pub questions: Vec<String>,
    pub current_state: Option<String>,
    /// Whom to ask (a valid agent name, not a reserved actor).
    pub to: Option<String>,
}

/// `[STOP_WORK]`: the agent hit a blocker and paused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StopWork {
    pub agent_id: Option<String>,
    pub timestamp: Option<String>,
    /// `blocker_type`, or `stop_reason` when the block names no blocker type.
    pub blocker_type: String,
    pub details: Option<String>,
    pub state_snapshot: Option<String>,
    pub blocked_work: Option<String>,
    pub resume_requirements: Option<String>,
}

/// How delegated work relates to the delegator's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Independence {
    CanProceedParallel,
    BlocksCurrentWork,
}

impl Independence {
    pub fn as_str(self) -> &'static str {
        match self {
            Independence::CanProceedParallel => "can_proceed_parallel",
            Independence::BlocksCurrentWork => "blocks_current_work",
        }
    }
}

/// `[DELEGATE_WORK]`: separable work the agent wants someone else to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DelegateWork {
    pub agent_id: Option<String>,
    pub timestamp: Option<String>,
    pub new_task_description: String,
    /// A dotted capability name (`research.context.deepen`).
    pub capability: Option<String>,
    pub to: Option<String>,
    pub independence: Option<Independence>,
    pub coordination: Option<String>,
}

/// The `status` of a completion report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportStatus {
    Success,
    Partial,
    Failed,
}

impl ReportStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportStatus::Success => "success",
            ReportStatus::Partial => "partial",
            ReportStatus::Failed => "failed",
        }
    }
}

/// `[COMPLETION_REPORT]`: the agent finished (or gave up).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionReport {
    pub agent_id: Option<String>,
    pub timestamp: Option<String>,
    pub status: ReportStatus,
    pub deliverables: Vec<String>,
    pub metrics_achieved: Option<String>,
    pub recommendations: Vec<String>,
}

/// A well-formed block, typed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "block", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Signal {
    ClarificationNeeded(ClarificationNeeded),
    StopWork(StopWork),
    DelegateWork(DelegateWork),
    CompletionReport(CompletionReport),
}

impl Signal {
    pub fn agent_id(&self) -> Option<&str> {
        match self {
            Signal::ClarificationNeeded(s) => s.agent_id.as_deref(),
            Signal::StopWork(s) => s.agent_id.as_deref(),
            Signal::DelegateWork(s) => s.agent_id.as_deref(),
            Signal::CompletionReport(s) => s.agent_id.as_deref(),
        }
    }
}

/// Reads fields, collecting every problem instead of stopping at the first.
struct Reader<'a> {
    block: &'a Block,
    problems: Vec<Problem>,
}

impl<'a> Reader<'a> {
    fn new(block: &'a Block, expected: BlockName) -> Reader<'a> {
        let mut problems = block.problems.clone();
        if block.name != expected {
            problems.push(Problem::new(
                block.start_line,
                format!("the block is [{}], not [{expected}]", block.name),
            ));
        }
        Reader { block, problems }
    }

    fn line_of(&self, key: &str) -> usize {
        self.block
            .field(key)
            .map_or(self.block.start_line, |f| f.line)
    }

    /// A one-line value (an id, a name, an enum): a list is a problem; empty is absent.
    fn word(&mut self, key: &str) -> Option<String> {
        match self.block.field(key).map(|f| &f.value) {
            None => None,
            Some(FieldValue::Text(t)) => non_empty(t),
            Some(FieldValue::List(items)) => {
                let message = format!(
                    "`{key}` must be a single value, found a list of {} items",
                    items.len()
                );
                self.problems.push(Problem::new(self.line_of(key), message));
                None
            }
        }
    }

    /// A text: a list is accepted and kept as `- item` lines; empty is absent.
    fn text(&self, key: &str) -> Option<String> {
        match self.block.field(key).map(|f| &f.value) {
            None => None,
            Some(FieldValue::Text(t)) => non_empty(t),
            Some(FieldValue::List(items)) => non_empty(
                &items
                    .iter()
                    .map(|i| format!("- {i}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
    }

    /// A list: one value stands for a list of one; empty is an empty list.
    fn list(&self, key: &str) -> Vec<String> {
        match self.block.field(key).map(|f| &f.value) {
            None => Vec::new(),
            Some(FieldValue::Text(t)) => non_empty(t).into_iter().collect(),
            Some(FieldValue::List(items)) => items.clone(),
        }
    }

    fn agent(&mut self, key: &str) -> Option<String> {
        let name = self.word(key)?;
        let why = match check_agent(&name) {
            Err(e) => Some(e.to_string()),
            Ok(()) if is_reserved(&name) => Some(format!(
                "`{key}` names '{name}', a reserved actor (human, monitor, agent-x) that cannot be asked"
            )),
            Ok(()) => None,
        };
        match why {
            Some(message) => {
                self.problems.push(Problem::new(
                    self.line_of(key),
                    format!("`{key}`: {message}"),
                ));
                None
            }
            None => Some(name),
        }
    }

    fn missing(&mut self, message: String) {
        self.problems
            .push(Problem::new(self.block.start_line, message));
    }

    fn done<T>(self, value: T) -> Result<T, Vec<Problem>> {
        if self.problems.is_empty() {
            Ok(value)
        } else {
            Err(self.problems)
        }
    }
}

fn non_empty(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

impl Block {
    /// The block as the signal its name says, or every problem found (syntax problems
    /// included: a block with any is never acted on).
    pub fn signal(&self) -> Result<Signal, Vec<Problem>> {
        match self.name {
            BlockName::ClarificationNeeded => {
                self.clarification_needed().map(Signal::ClarificationNeeded)
            }
            BlockName::StopWork => self.stop_work().map(Signal::StopWork),
            BlockName::DelegateWork => self.delegate_work().map(Signal::DelegateWork),
            BlockName::CompletionReport => self.completion_report().map(Signal::CompletionReport),
        }
    }

    pub fn clarification_needed(&self) -> Result<ClarificationNeeded, Vec<Problem>> {
        let mut r = Reader::new(self, BlockName::ClarificationNeeded);
        let questions = r.list("questions");
        if questions.is_empty() {
            r.missing(String::from(
                "`questions` is missing: list at least one question as `- …` lines under `questions:`",
            ));
        }
        for (i, q) in questions.iter().enumerate() {
            if q.trim().is_empty() {
                let line = r.line_of("questions");
                r.problems.push(Problem::new(
                    line,
                    format!("question {} of `questions` is empty", i + 1),
                ));
            }
        }
        let view = ClarificationNeeded {
            agent_id: r.word("agent_id"),
            timestamp: r.word("timestamp"),
            blocked_at: r.text("blocked_at"),
            questions: questions.iter().map(|q| q.trim().to_owned()).collect(),
            current_state: r.text("current_state"),
            to: r.agent("to"),
        };
        r.done(view)
    }

    pub fn stop_work(&self) -> Result<StopWork, Vec<Problem>> {
        let mut r = Reader::new(self, BlockName::StopWork);
        let blocker = r.word("blocker_type").or_else(|| r.word("stop_reason"));
        if blocker.is_none() {
            r.missing(String::from(
                "`blocker_type` (or `stop_reason`) is missing: say what kind of blocker stopped the work",
            ));
        }
        let view = StopWork {
            agent_id: r.word("agent_id"),
            timestamp: r.word("timestamp"),
            blocker_type: blocker.unwrap_or_default(),
            details: r.text("details"),
            state_snapshot: r.text("state_snapshot"),
            blocked_work: r.text("blocked_work"),
            resume_requirements: r.text("resume_requirements"),
        };
        r.done(view)
    }

    pub fn delegate_work(&self) -> Result<DelegateWork, Vec<Problem>> {
        let mut r = Reader::new(self, BlockName::DelegateWork);
        let task = r.text("new_task_description");
        if task.is_none() {
            r.missing(String::from(
                "`new_task_description` is missing: describe the work to delegate",
            ));
        }
        let capability = r.word("capability");
        if let Some(c) = &capability {
            if let Err(why) = check_capability(c) {
                let line = r.line_of("capability");
                r.problems
                    .push(Problem::new(line, format!("`capability`: {why}")));
            }
        }
        let independence = match r.word("independence").as_deref() {
            None => None,
            Some("can_proceed_parallel") => Some(Independence::CanProceedParallel),
            Some("blocks_current_work") => Some(Independence::BlocksCurrentWork),
            Some(other) => {
                let line = r.line_of("independence");
                r.problems.push(Problem::new(
                    line,
                    format!(
                        "`independence` is '{}'; allowed: can_proceed_parallel, blocks_current_work",
                        crate::error::shown(other)
                    ),
                ));
                None
            }
        };
        let view = DelegateWork {
            agent_id: r.word("agent_id"),
            timestamp: r.word("timestamp"),
            new_task_description: task.unwrap_or_default(),
            capability,
            to: r.agent("to"),
            independence,
            coordination: r.text("coordination"),
        };
        r.done(view)
    }

    pub fn completion_report(&self) -> Result<CompletionReport, Vec<Problem>> {
        let mut r = Reader::new(self, BlockName::CompletionReport);
        let status = match r.word("status").as_deref() {
            Some("success") => Some(ReportStatus::Success),
            Some("partial") => Some(ReportStatus::Partial),
            Some("failed") => Some(ReportStatus::Failed),
            Some(other) => {
                let line = r.line_of("status");
                r.problems.push(Problem::new(
                    line,
                    format!(
                        "`status` is '{}'; allowed: success, partial, failed",
                        crate::error::shown(other)
                    ),
                ));
                None
            }
            None => {
                r.missing(String::from(
                    "`status` is missing: one of success, partial, failed",
                ));
                None
            }
        };
        let view = CompletionReport {
            agent_id: r.word("agent_id"),
            timestamp: r.word("timestamp"),
            status: status.unwrap_or(ReportStatus::Failed),
            deliverables: r.list("deliverables"),
            metrics_achieved: r.text("metrics_achieved"),
            recommendations: r.list("recommendations"),
        };
        r.done(view)
    }
}
