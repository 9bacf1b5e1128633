//! A Layer 4 plan (`check`'s input): `{session_id?, agent_id?, gaps: [{id, field, severity,
//! question, context?, suggestions?, blocked_operations?, to?}]}`. Every bad shape is
//! `INVALID_INPUT` naming the gap and the field; value limits (lengths, names) are checked
//! when the gaps become requests, with the gap named too.

use serde::ser::SerializeMap;
use serde_json::Value;

use crate::config::MAX_SHORT_TEXT;
use crate::error::{shown, ClarifyError};
use crate::input::{self, Obj};
use crate::kinds::AnswerSpec;
use crate::ledger::Severity;
use crate::names::{check_line, check_uuid};
use crate::ops::MAX_GAP_ID;

/// At most this many gaps per plan: every gap becomes a record of one ledger.
pub const MAX_PLAN_GAPS: usize = 100;

/// The keys a gap may hold. `clarificationId`, `status` and `answer` are what `check`
/// returns: a response fed back as a plan is accepted, those keys ignored.
const GAP_KEYS: &[&str] = &[
    "id",
    "field",
    "severity",
    "question",
    "context",
    "suggestions",
    "blocked_operations",
    "to",
    "answer_kind",
    "options",
    "allow_other",
    "min_select",
    "max_select",
];
/// A gap's answer kind keys (docs/protocol.md §22, docs/layer4.md), in `input::answer_spec_named`'s order.
const GAP_KIND_KEYS: [&str; 5] = [
    "answer_kind",
    "options",
    "allow_other",
    "min_select",
    "max_select",
];
const GAP_OUTPUT_KEYS: &[&str] = &["clarificationId", "status", "answer"];

/// A parsed plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub gaps: Vec<PlanGap>,
}

/// One gap of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanGap {
    pub id: String,
    pub field: String,
    pub severity: Severity,
    pub question: String,
    pub context: Option<String>,
    pub suggestions: Vec<String>,
    pub blocked_operations: Vec<String>,
    pub to: Option<String>,
    /// The answer kind the gap asks for (optional; a text question with `suggestions` as
    /// quick picks when absent).
    pub answer: AnswerSpec,
}

impl PlanGap {
    /// The answer kind of the gap's request.
    pub fn answer_spec(&self) -> AnswerSpec {
        self.answer.clone()
    }

    /// The gap's keys as a plan spells them (see `GAP_KEYS`), every one written.
    pub(crate) fn serialize_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("field", &self.field)?;
        m.serialize_entry("severity", &self.severity)?;
        m.serialize_entry("question", &self.question)?;
        m.serialize_entry("context", &self.context)?;
        m.serialize_entry("suggestions", &self.suggestions)?;
        m.serialize_entry("blocked_operations", &self.blocked_operations)?;
        m.serialize_entry("to", &self.to)?;
        // Written only for a gap that has a kind: the responses to plans without kinds are
        // as before.
        if !self.answer.is_text() {
            m.serialize_entry("answer_kind", &self.answer.kind)?;
            m.serialize_entry("options", &self.answer.options)?;
            if let Some(a) = self.answer.allow_other {
                m.serialize_entry("allow_other", &a)?;
            }
            if let Some(n) = self.answer.min_select {
                m.serialize_entry("min_select", &n)?;
            }
            if let Some(n) = self.answer.max_select {
                m.serialize_entry("max_select", &n)?;
            }
        }
        Ok(())
    }
}

/// Adds where an error happened (`gap 'gap-001'`, `gaps[3]`, `plan`) to its message, for the
/// errors that carry free text; the code is unchanged.
pub(crate) fn located(at: &str, error: ClarifyError) -> ClarifyError {
    match error {
        ClarifyError::InvalidInput { message } => ClarifyError::input(format!("{at}: {message}")),
        ClarifyError::TextEmpty { field } => ClarifyError::TextEmpty {
            field: format!("{at} {field}"),
        },
        ClarifyError::TextTooLong {
            field,
            len,
            max,
            unit,
        } => ClarifyError::TextTooLong {
            field: format!("{at} {field}"),
            len,
            max,
            unit,
        },
        ClarifyError::InvalidAgent { name, why } => ClarifyError::InvalidAgent {
            name,
            why: format!("{why} ({at})"),
        },
        ClarifyError::ScopeViolation { message } => ClarifyError::ScopeViolation {
            message: format!("{at}: {message}"),
        },
        other => other,
    }
}

impl Plan {
    /// Parses a plan from JSON text (a file's content).
    pub fn parse_text(text: &str) -> Result<Plan, ClarifyError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ClarifyError::input(format!("the plan is not JSON: {e}")))?;
        Plan::parse(&value)
    }

    /// Parses a plan. Top-level keys other than `session_id`, `agent_id` and `gaps` are
    /// ignored (a whole Layer 4 document carries `$schema`, `status`, counts, a signature…);
    /// unknown keys in a gap are refused, so a misspelt `blocked_operations` cannot open a gate.
    pub fn parse(value: &Value) -> Result<Plan, ClarifyError> {
        let Value::Object(map) = value else {
            return Err(ClarifyError::input(
                "the plan must be a JSON object with `gaps`",
            ));
        };
        let at_plan = |e| located("plan", e);
        let session_id = input::opt_string(map, "session_id").map_err(at_plan)?;
        if let Some(s) = &session_id {
            check_uuid("plan session_id", s)?;
        }
        let agent_id = input::opt_string(map, "agent_id").map_err(at_plan)?;
        if let Some(a) = &agent_id {
            check_line("plan agent_id", a, MAX_SHORT_TEXT)?;
        }
        let items = match map.get("gaps") {
            None | Some(Value::Null) => {
                return Err(ClarifyError::input(
                    "the plan has no `gaps`: expected an array of gaps",
                ))
            }
            Some(Value::Array(items)) => items,
            Some(_) => return Err(ClarifyError::input("plan: `gaps` must be an array")),
        };
        if items.len() > MAX_PLAN_GAPS {
            return Err(ClarifyError::input(format!(
                "the plan has {} gaps; at most {MAX_PLAN_GAPS} are allowed",
                items.len()
            )));
        }
        let mut gaps: Vec<PlanGap> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let gap = parse_gap(i, item)?;
            if let Some(first) = gaps.iter().position(|g| g.id == gap.id) {
                return Err(ClarifyError::input(format!(
                    "gap '{}' appears twice (gaps[{first}] and gaps[{i}]); gap ids must be unique",
                    shown(&gap.id)
                )));
            }
            gaps.push(gap);
        }
        Ok(Plan {
            session_id,
            agent_id,
            gaps,
        })
    }
}

fn parse_gap(index: usize, item: &Value) -> Result<PlanGap, ClarifyError> {
    let position = format!("gaps[{index}]");
    let Value::Object(map) = item else {
        return Err(ClarifyError::input(format!("{position} must be an object")));
    };
    let id = input::string(map, "id").map_err(|e| located(&position, e))?;
    check_line(&format!("{position} id"), &id, MAX_GAP_ID)?;
    let at = format!("gap '{}'", shown(&id));
    let here = |e| located(&at, e);
    if let Some(key) = map
        .keys()
        .find(|k| !GAP_KEYS.contains(&k.as_str()) && !GAP_OUTPUT_KEYS.contains(&k.as_str()))
    {
        return Err(ClarifyError::input(format!(
            "{at}: unknown field `{}`; known: {}",
            shown(key),
            GAP_KEYS.join(", ")
        )));
    }
    let field = input::string(map, "field").map_err(here)?;
    let severity = severity(map).map_err(here)?;
    let question = input::string(map, "question").map_err(here)?;
    Ok(PlanGap {
        field,
        severity,
        question,
        context: input::opt_string(map, "context").map_err(here)?,
        suggestions: input::string_list(map, "suggestions").map_err(here)?,
        blocked_operations: input::string_list(map, "blocked_operations").map_err(here)?,
        to: input::opt_string(map, "to").map_err(here)?,
        answer: input::answer_spec_named(map, GAP_KIND_KEYS).map_err(here)?,
        id,
    })
}

/// A gap's severity is required: a plan states how much each gap matters.
fn severity(map: &Obj) -> Result<Severity, ClarifyError> {
    let text = input::string(map, "severity")?;
    Severity::parse(&text).map_err(ClarifyError::input)
}
