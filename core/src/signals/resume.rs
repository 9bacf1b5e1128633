//! The texts that resume an agent (seed 002; docs/protocol.md §14.2 last bullet and §17), as structured
//! parts (for `--json`) and as text. Written once: `clarify resume-prompt` and `signals
//! resume-prompt` both use [`resume_record`].
//!
//! ```text
//! CLARIFICATION RESPONSE                  BLOCKER RESOLVED
//! Clarification: CLR-42-001               Clarification: CLR-42-002 (issue #42)
//! Issue: #42                              Issue: external_dependency: need npm install
//! From: engineer                          Resolution: installed
//! To: architect
//! Topic: Session cache                    STATE RESTORATION
//!                                         Completed: [A, B, C]
//! Q1: Redis or an in-process LRU?
//! A1: Redis.                              RESUME INSTRUCTIONS
//!                                         Restore your state from the snapshot above, then
//! Resolution: resolved by engineer        continue with: Task D
//!
//! Continue your work from your last checkpoint with these answers.
//! ```

use serde::Serialize;
use serde_json::Value;

use crate::delegation::{Delegation, Status as DlgStatus};
use crate::ledger::{Decision, EntryKind, Record, Status};
use crate::render::{escalation_reason, round_entries, rounds};

/// Which text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResumeKind {
    ClarificationResponse,
    BlockerResolved,
    DelegationApproved,
    DelegationRejected,
    DelegationFailed,
}

impl ResumeKind {
    pub fn title(self) -> &'static str {
        match self {
            ResumeKind::ClarificationResponse => "CLARIFICATION RESPONSE",
            ResumeKind::BlockerResolved => "BLOCKER RESOLVED",
            ResumeKind::DelegationApproved => "DELEGATION APPROVED",
            ResumeKind::DelegationRejected => "DELEGATION REJECTED",
            ResumeKind::DelegationFailed => "DELEGATION FAILED",
        }
    }
}

/// One question of a thread and its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Round {
    pub round: u32,
    pub question: String,
    pub answer: Option<String>,
}

/// One `Label: value` line of a resume text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    pub label: String,
    pub value: String,
}

fn line(label: &str, value: impl Into<String>) -> Line {
    Line {
        label: label.to_owned(),
        value: value.into(),
    }
}

/// A resume text in parts: the header's lines in order, then the parts of its kind (absent
/// ones are left out of the JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resume {
    pub kind: ResumeKind,
    pub title: &'static str,
    pub id: String,
    pub issue_number: u32,
    /// The record's or the delegation's status.
    pub status: String,
    pub header: Vec<Line>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Round>,
    /// The closing line above the instruction (`Resolution: …`, `Human decision: …`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Line>,
    /// The human's decision on an escalated record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Who decided, through which surface, and the chosen value and its label (docs/protocol.md
    /// §23), when a person decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided: Option<Decision>,
    /// Lines under the outcome (`Decided by: …`, `Note: …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Line>,
    /// Escalated and not decided yet.
    pub waits_for_human: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_restoration: Option<String>,
    /// The one closing instruction (`RESUME INSTRUCTIONS` for a blocker).
    pub instruction: String,
}

impl Resume {
    /// The text an agent is resumed with (no trailing newline).
    pub fn text(&self) -> String {
        let mut out = vec![self.title.to_owned()];
        out.extend(self.header.iter().map(|l| labelled(&l.label, &l.value)));
        if !self.rounds.is_empty() {
            out.push(String::new());
            // After a person's decision a round without an answer is not "yet" to come.
            let unanswered = if self.decided.is_some() {
                "(not answered: a person decided instead, below)"
            } else {
                "(no answer yet)"
            };
            for r in &self.rounds {
                out.push(labelled(&format!("Q{}", r.round), &r.question));
                let answer = r.answer.as_deref().unwrap_or(unanswered);
                out.push(labelled(&format!("A{}", r.round), answer));
            }
        }
        if let Some(l) = &self.outcome {
            out.push(String::new());
            out.push(labelled(&l.label, &l.value));
            for d in &self.details {
                out.push(labelled(&d.label, &d.value));
            }
        }
        if self.kind == ResumeKind::BlockerResolved {
            out.push(String::new());
            out.push(String::from("STATE RESTORATION"));
            out.push(
                self.state_restoration
                    .clone()
                    .unwrap_or_else(|| String::from("(no state snapshot was kept)")),
            );
            out.push(String::new());
            out.push(String::from("RESUME INSTRUCTIONS"));
        } else {
            out.push(String::new());
        }
        out.push(self.instruction.clone());
        out.join("\n")
    }
}

/// `label: value`, continuation lines of a multi-line value indented under it.
fn labelled(label: &str, value: &str) -> String {
    let mut lines = value.split('\n');
    let mut out = format!("{label}: {}", lines.next().unwrap_or(""));
    for l in lines {
        out.push_str("\n    ");
        out.push_str(l);
    }
    out
}

fn signal_field<'a>(record: &'a Record, key: &str) -> Option<&'a str> {
    record
        .extra
        .get("signal")
        .and_then(|s| s.get(key))
        .and_then(Value::as_str)
}

/// The resume text of a clarification record: `BLOCKER RESOLVED` for a resolved record that
/// came from a `[STOP_WORK]` block, else `CLARIFICATION RESPONSE` (every round's question
/// and answer, then the resolution, the human's decision, or that it waits).
pub fn resume_record(issue: u32, record: &Record) -> Resume {
    let status = record.current_status();
    let escalated = record
        .thread
        .iter()
        .any(|e| e.kind == EntryKind::Escalation);
    let resolution = record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Resolution)
        .map(|e| e.body.clone());
    let decision = resolution.clone().filter(|_| escalated);
    let from_stop = signal_field(record, "block") == Some("STOP_WORK");
    if from_stop && status == Status::Resolved {
        return blocker_resolved(issue, record, resolution);
    }
    let header = vec![
        line("Clarification", record.id.clone()),
        line("Issue", format!("#{issue}")),
        line("From", record.from.clone()),
        line("To", record.to.clone()),
        line("Topic", record.topic.clone()),
    ];
    let rounds = rounds(record)
        .into_iter()
        .filter_map(|n| {
            let entries = round_entries(record, n);
            let question = entries.iter().find(|e| e.kind == EntryKind::Question)?;
            let answer = entries
                .iter()
                .rev()
                .find(|e| e.kind == EntryKind::Answer)
                .map(|e| e.body.clone());
            Some(Round {
                round: n,
                question: question.body.clone(),
                answer,
            })
        })
        .collect();
    let reason = escalation_reason(record).unwrap_or("escalated").to_owned();
    let decided = record.decision();
    let (decision_line, details) = match &decided {
        Some(d) => decision_lines(d),
        None => (resolution.clone().unwrap_or_default(), Vec::new()),
    };
    let (outcome, instruction) = match status {
        Status::Resolved if escalated || decided.is_some() => (
            Some(("Human decision", decision_line)),
            String::from("Continue your work from your last checkpoint, following the human decision."),
        ),
        Status::Resolved => (
            Some(("Resolution", resolution.unwrap_or_default())),
            String::from("Continue your work from your last checkpoint with these answers."),
        ),
        Status::Answered => (
            None,
            String::from("Continue your work from your last checkpoint with these answers."),
        ),
        Status::Escalated => (
            Some(("Escalated", format!("{reason}; the question waits for a human decision"))),
            String::from("Do not continue the blocked work until a human decides; you will be resumed with the decision."),
        ),
        Status::Pending | Status::Stale => (
            None,
            format!("Do not continue the blocked work yet: the question waits for an answer from {}.", record.to),
        ),
        Status::Abandoned => (
            Some(("Abandoned", escalation_or_abandonment(record))),
            String::from("Continue without this answer, or ask again."),
        ),
    };
    Resume {
        kind: ResumeKind::ClarificationResponse,
        title: ResumeKind::ClarificationResponse.title(),
        id: record.id.clone(),
        issue_number: issue,
        status: status.as_str().to_owned(),
        header,
        rounds,
        outcome: outcome.map(|(k, v)| line(k, v)),
        decision: decision.or_else(|| decided.as_ref().map(|d| d.text.clone())),
        details: if status == Status::Resolved {
            details
        } else {
            Vec::new()
        },
        decided,
        waits_for_human: status == Status::Escalated,
        state_restoration: signal_field(record, "stateSnapshot").map(str::to_owned),
        instruction,
    }
}

/// The `Human decision:` line and the lines under it: the chosen value and its label (the
/// note as its own line when the person wrote one), and who decided through which surface
/// (left out for the CLI's plain `human`, which names nobody).
fn decision_lines(d: &Decision) -> (String, Vec<Line>) {
    let mut details = Vec::new();
    let shown = match (&d.value, &d.label) {
        (Some(value), Some(label)) => {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            if d.text != *label {
                details.push(line("Note", d.text.clone()));
            }
            if value == *label {
                value
            } else {
                format!("{value} ({label})")
            }
        }
        _ => d.text.clone(),
    };
    let who = match &d.via {
        Some(via) => Some(format!("{} via {via}", d.by)),
        None if d.by != crate::names::HUMAN => Some(d.by.clone()),
        None => None,
    };
    if let Some(who) = who {
        details.insert(0, line("Decided by", who));
    }
    (shown, details)
}

fn escalation_or_abandonment(record: &Record) -> String {
    record
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Abandonment)
        .map_or_else(|| String::from("abandoned"), |e| e.body.clone())
}

fn blocker_resolved(issue: u32, record: &Record, resolution: Option<String>) -> Resume {
    let blocker = signal_field(record, "blockerType").unwrap_or("blocker");
    let what = match signal_field(record, "details") {
        Some(d) => format!("{blocker}: {d}"),
        None => blocker.to_owned(),
    };
    let resolution = resolution.unwrap_or_default();
    let mut instruction = match signal_field(record, "blockedWork") {
        Some(work) => {
            format!("Restore your state from the snapshot above, then continue with: {work}")
        }
        None => String::from(
            "Restore your state from the snapshot above, then continue the blocked work.",
        ),
    };
    if let Some(req) = signal_field(record, "resumeRequirements") {
        instruction.push_str(&format!("\nWhat you required to resume: {req}"));
    }
    Resume {
        kind: ResumeKind::BlockerResolved,
        title: ResumeKind::BlockerResolved.title(),
        id: record.id.clone(),
        issue_number: issue,
        status: record.current_status().as_str().to_owned(),
        header: vec![
            line("Clarification", format!("{} (issue #{issue})", record.id)),
            line("Issue", what),
            line("Resolution", resolution.clone()),
        ],
        rounds: Vec::new(),
        outcome: None,
        decision: Some(resolution),
        decided: None,
        details: Vec::new(),
        waits_for_human: false,
        state_restoration: signal_field(record, "stateSnapshot").map(str::to_owned),
        instruction,
    }
}

/// The resume text of a delegation for its delegator: `DELEGATION APPROVED` (requested,
/// accepted or completed: the new agent, the coordination, the result when there is one),
/// `DELEGATION REJECTED` (either rejection), `DELEGATION FAILED` (timeout, failure).
pub fn resume_delegation(issue: u32, d: &Delegation) -> Resume {
    let status = d.current_status();
    let kind = match status {
        DlgStatus::Requested | DlgStatus::Accepted | DlgStatus::Completed => {
            ResumeKind::DelegationApproved
        }
        DlgStatus::RejectedCapability | DlgStatus::RejectedContext => {
            ResumeKind::DelegationRejected
        }
        DlgStatus::Timeout | DlgStatus::FailedExecution => ResumeKind::DelegationFailed,
    };
    let text_of = |key: &str| d.extra.get(key).and_then(Value::as_str);
    let mut header = vec![line("Delegation", format!("{} (issue #{issue})", d.id))];
    let agent_label = if kind == ResumeKind::DelegationApproved {
        "New agent"
    } else {
        "Requested agent"
    };
    header.push(line(agent_label, d.to.clone()));
    if let Some(c) = &d.capability {
        header.push(line("Capability", c.clone()));
    }
    header.push(line("Task", d.objective.clone()));
    header.push(line("Status", status.as_str()));
    if let Some(c) = text_of("coordination") {
        header.push(line("Coordination", c));
    }
    let f = d.fold();
    if let Some(r) = &f.response {
        let result = match &r.artifact_path {
            Some(p) => format!("{} (artifact: {p})", r.summary),
            None => r.summary.clone(),
        };
        header.push(line("Result", result));
        if !r.unresolved.is_empty() {
            header.push(line("Unresolved", r.unresolved.join("; ")));
        }
    }
    let last_body = d.thread.last().map(|e| e.body.clone()).unwrap_or_default();
    let outcome = (kind != ResumeKind::DelegationApproved)
        .then(|| line("Reason", format!("{}: {last_body}", status.as_str())));
    let blocks = text_of("independence") == Some("blocks_current_work");
    let instruction = match status {
        DlgStatus::Completed => format!("Use the result of {} above and continue your work.", d.to),
        DlgStatus::Requested | DlgStatus::Accepted if blocks => format!(
            "Pause the work that depends on it until {} reports completion; continue anything else.",
            d.to
        ),
        DlgStatus::Requested | DlgStatus::Accepted => format!(
            "Continue your own work in parallel; {} works on the delegated task.",
            d.to
        ),
        DlgStatus::RejectedCapability => String::from(
            "Do the work yourself, or delegate it to an agent whose manifest offers the capability.",
        ),
        DlgStatus::RejectedContext => String::from(
            "Add the missing context and delegate again, or do the work yourself.",
        ),
        DlgStatus::Timeout | DlgStatus::FailedExecution => String::from(
            "Decide whether to delegate the task again or do it yourself.",
        ),
    };
    Resume {
        kind,
        title: kind.title(),
        id: d.id.clone(),
        issue_number: issue,
        status: status.as_str().to_owned(),
        header,
        rounds: Vec::new(),
        outcome,
        decision: None,
        decided: None,
        details: Vec::new(),
        waits_for_human: false,
        state_restoration: None,
        instruction,
    }
}
