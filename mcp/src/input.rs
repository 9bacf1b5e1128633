//! Tool inputs: the Rust types the input schemas are derived from, and their decoding. No
//! input names the acting agent — the server's `--agent` is the actor of every call.
//! Unknown fields are refused (the schemas say `additionalProperties: false`), so a model
//! that guesses a field name hears about it instead of having it ignored.

use std::sync::Arc;

use agentx_clarify_core::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use agentx_clarify_core::replies::ASKED_BACK;
use agentx_clarify_core::{Action, ClarifyError, NewRequest, Status};
use rmcp::model::JsonObject;
use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Longest `clarify_wait`: clients cut calls at about 60 s, so a wait ends well before.
pub const MAX_WAIT_SECONDS: f64 = 50.0;

/// The input schema of `T`: draft 2020-12 with root `type: object` (as rmcp derives it, its
/// root title and description left out), but **without union types**. An optional field is
/// simply not `required`; schemars would also spell it `"type": ["string", "null"]` (or
/// `anyOf: [{…}, {"type": "null"}]`), which clients that map tool schemas onto a
/// single-`type` dialect (Gemini's function declarations) may reject — the MCP Inspector's
/// portability check warns on each (docs/decisions.md, "Tool schemas without unions"). A
/// `null` sent anyway is still accepted as absent by the decoder.
pub fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let generator = SchemaSettings::draft2020_12()
        .with_transform(NoNull)
        .into_generator();
    let root = generator.into_root_schema_for::<T>();
    match serde_json::to_value(root) {
        Ok(serde_json::Value::Object(mut object))
            if object.get("type") == Some(&serde_json::Value::from("object")) =>
        {
            object.remove("title");
            object.remove("description");
            Arc::new(object)
        }
        _ => rmcp::handler::server::common::schema_for_empty_input(),
    }
}

/// Takes `null` out of every (sub)schema: from `type` arrays (one type left: a plain
/// `type`), `enum`s, `anyOf` branches (one branch left: merged into its parent) and a
/// `default` of `null`.
#[derive(Clone, Copy)]
struct NoNull;

impl Transform for NoNull {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        strip_null(object);
    }
}

fn strip_null(object: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let null = Value::from("null");
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| *t != null);
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if object.get("default") == Some(&Value::Null) {
        object.remove("default");
    }
    let is_null =
        |v: &Value| v.get("type") == Some(&null) && v.as_object().is_some_and(|o| o.len() == 1);
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        branches.retain(|b| !is_null(b));
        if let [Value::Object(only)] = branches.as_slice() {
            let only = only.clone();
            object.remove("anyOf");
            for (key, value) in only {
                object.entry(key).or_insert(value);
            }
        }
    }
}

/// Decodes a tool's arguments; a wrong shape is the caller's `INVALID_INPUT`, in serde's words
/// (an unknown field with the nearest known one, as every door says it).
pub fn decode<T: DeserializeOwned>(args: JsonObject) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::Object(args))
        .map_err(|e| agentx_clarify_core::call::fields::serde_message(&e.to_string()))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ask {
    /// The issue the question is about. Defaults to the issue this server was started with
    /// (--issue); required when it was started without one.
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
    /// The agent who should answer, e.g. "architect" or "product-manager". Workflows decide
    /// whom you may ask; a refusal says who is allowed.
    pub to: String,
    /// A short title for the question, e.g. "Cache layer".
    pub topic: String,
    /// The question itself, with the context the other agent needs to answer it.
    pub question: String,
    /// Whether your work is blocked until the answer arrives (default true).
    pub blocking: Option<bool>,
    /// The exact field or decision the gap concerns, e.g. "storage.cache".
    pub field: Option<String>,
    /// Answers you would accept (at most 10), e.g. ["redis", "in-process LRU"].
    pub suggestions: Option<Vec<String>>,
    /// BLOCK: you must not proceed without the answer; WARN: you may, stating your
    /// assumption. Sets `blocking` (default: BLOCK when blocking, WARN otherwise).
    pub severity: Option<Severity>,
    /// What you know so far and why the answer matters (kept with the question).
    pub context: Option<String>,
    /// The operations this question blocks while open, e.g. ["deploy"] (at most 20 names of
    /// a-z 0-9 _ . -; none: every operation). `agentx gate --operation` refuses them.
    #[schemars(length(max = 20))]
    pub blocked_operations: Option<Vec<String>>,
    /// Re-sending an ask with the same key returns the original record instead of a duplicate.
    pub idempotency_key: Option<String>,
    /// The workflow whose rules apply (default: the issue's).
    pub workflow: Option<String>,
    /// The workflow step you are in (default: the step your agent runs).
    pub step: Option<String>,
    /// Have the hub run the target agent's CLI (its `[agents.<name>]` runner) in the
    /// background; then call clarify_wait with the id. Refused with NO_RUNNER when the target
    /// has no runner.
    pub route: Option<bool>,
    /// To answer a pending question asked of you with a question of your own: its id, e.g.
    /// "CLR-42-001". Then `to` must be whoever asked it; the ask is always allowed (it is part
    /// of that conversation) and is never taken for a deadlock.
    pub asked_back: Option<String>,
    /// The shape of answer you need: "text" (default), "confirm" (yes/no), "choice" (one of
    /// `options`) or "multi_choice" (several of `options`).
    pub answer_kind: Option<AnswerKindArg>,
    /// For choice and multi_choice (2 to 10): the acceptable answers.
    pub options: Option<Vec<OptionArg>>,
    /// For choice and multi_choice: whether a free-text answer outside the options is
    /// accepted (default true).
    pub allow_other: Option<bool>,
    /// For multi_choice: the fewest options an answer may choose (default 1).
    #[schemars(range(min = 1, max = 10))]
    pub min_select: Option<u32>,
    /// For multi_choice: the most options an answer may choose (default: all).
    #[schemars(range(min = 1, max = 10))]
    pub max_select: Option<u32>,
    /// Ask even when this issue already holds the same question to the same agent (by
    /// default the existing record, with its answer if any, is returned with reused: true).
    pub ask_again: Option<bool>,
    /// The id of a resolved record whose decision answers this question (from `related` or
    /// clarify_search, e.g. "CLR-17-003"): the new record is resolved at once with it, citing
    /// it, and nobody is asked. A record that is not resolved is refused.
    pub reuse: Option<String>,
    /// "task": answer with an MCP task (the Tasks extension, `io.modelcontextprotocol/tasks`,
    /// which the client must declare) whose id is the record's; poll it with tasks/get.
    pub wait: Option<AskWait>,
}

/// How `clarify_ask` answers: the record at once (the default), or a task on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AskWait {
    Task,
}

/// An answer kind (docs/protocol.md §22).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKindArg {
    Text,
    Confirm,
    Choice,
    MultiChoice,
}

/// One acceptable answer of a choice question.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionArg {
    /// What is recorded: 1–64 characters of A-Z a-z 0-9 _ . : -, e.g. "redis".
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"))]
    pub value: String,
    /// What people see, e.g. "Redis" (at most 100 characters).
    pub label: Option<String>,
    /// A longer explanation (at most 500 characters).
    pub description: Option<String>,
}

/// A typed answer or decision: true/false for confirm, one option value for choice, an array
/// of option values for multi_choice.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ValueArg {
    Yes(bool),
    One(String),
    Several(Vec<String>),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Id {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Wait {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
    /// How long to wait at most, in seconds (0 to 50, default 50). Call again to keep waiting.
    #[schemars(range(min = 0, max = 50))]
    pub timeout_seconds: Option<f64>,
    /// "answer" (default): return when the record leaves pending/stale (answered, resolved,
    /// escalated or abandoned). "decision": also wait while it is escalated, until a human
    /// decides (resolved) or it is answered or abandoned.
    pub until: Option<Until>,
}

/// What `clarify_wait` waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Until {
    #[default]
    Answer,
    Decision,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Answer {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
    /// Your answer: decide, and say why when it matters. Optional when `value` is given.
    pub body: Option<String>,
    /// For a question with an answer kind (see its answerKind and options): true/false for
    /// confirm, one option value for choice, an array of option values for multi_choice.
    pub value: Option<ValueArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resolve {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
    /// Why, in one line (kept in the thread).
    pub message: Option<String>,
    /// The decision as a typed value, for a question with an answer kind: true/false for
    /// confirm, one option value for choice, an array of option values for multi_choice.
    pub value: Option<ValueArg>,
    /// Resolved records whose decisions this one replaces (at most 10, e.g. ["CLR-17-003"]):
    /// clarify_search and related then show them as superseded by this one.
    pub supersedes: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FollowUp {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
    /// The next question about the same topic.
    pub question: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Close {
    /// The clarification id, e.g. "CLR-42-001".
    pub id: String,
    /// Why, in one line (kept in the thread).
    pub message: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Show {
    /// One clarification's id, e.g. "CLR-42-001".
    pub id: Option<String>,
    /// Every clarification of this issue (default: this server's --issue).
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct List {
    /// Only this issue's clarifications.
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
    /// Only these statuses, e.g. ["pending", "stale"].
    #[serde(default)]
    #[schemars(schema_with = "statuses")]
    pub status: Option<Vec<Status>>,
    /// Include resolved and abandoned ones (default: open ones only).
    pub all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Search {
    /// The words to look for, e.g. "redis cache eviction": your question in a few words.
    pub query: String,
    /// Only this issue's records.
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
    /// Only these statuses, e.g. ["resolved"] for decisions taken (default: every status).
    #[serde(default)]
    #[schemars(schema_with = "statuses")]
    pub status: Option<Vec<Status>>,
    /// Only records of this field (the exact field or decision a question concerns).
    pub field: Option<String>,
    /// Only records this agent asked (`from` elsewhere: MCP tools take no actor field, the
    /// session's agent is the actor).
    pub asked_by: Option<String>,
    /// Only records asked of this agent.
    pub asked_of: Option<String>,
    /// At most this many hits, best first (1-100, default 10).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Monitor {
    /// Report what the monitor would do without writing anything.
    pub dry_run: Option<bool>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The session the gaps belong to (a UUID). Give the session id of an earlier check to
    /// check the same plan again (idempotent: nothing is asked twice); absent, a new one is
    /// drawn and returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Who made the plan (default: this server's agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// What you refuse to guess, one gap per missing or ambiguous field (at most 100).
    pub gaps: Vec<Gap>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// The gap's id, unique in the plan, e.g. "gap-001".
    pub id: String,
    /// The exact field or decision that is missing, e.g. "storage.cache".
    pub field: String,
    /// BLOCK: you must not proceed without the answer; WARN: you may, with a stated assumption.
    pub severity: Severity,
    /// The question that would settle it.
    pub question: String,
    /// What you know so far and why it matters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Answers you would accept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<String>>,
    /// The operations the gap blocks while open, e.g. ["deploy"] (none: every operation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_operations: Option<Vec<String>>,
    /// Who should answer this gap (default: the check's `to`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
pub enum Severity {
    #[serde(rename = "BLOCK")]
    Block,
    #[serde(rename = "WARN")]
    Warn,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Check {
    /// The issue the plan is for. Defaults to the issue this server was started with.
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
    /// Who answers the gaps that name no `to`, e.g. "architect".
    pub to: Option<String>,
    /// Layer 4's plan: {session_id?, agent_id?, gaps: [{id, field, severity, question, …}]}.
    pub plan: Plan,
    /// The workflow whose rules apply (default: the issue's).
    pub workflow: Option<String>,
    /// The workflow step you are in.
    pub step: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Audit {
    /// One clarification's id, e.g. "CLR-42-001".
    pub id: Option<String>,
    /// Every clarification of this issue (default: this server's --issue).
    #[schemars(range(max = 2147483647))]
    pub issue: Option<u32>,
}

/// `status`: an array of the core's statuses (its names, so the schema cannot drift).
fn statuses(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    schemars::json_schema!({
        "type": "array",
        "items": { "type": "string", "enum": names },
    })
}

// ---- Typed calls: each tool input as the command layer's Rust value ----

impl Search {
    /// The query's words and the search's filters.
    pub fn typed(self) -> Result<(String, agentx_clarify_core::search::Filter), ClarifyError> {
        let limit = self
            .limit
            .map(|n| agentx_clarify_core::search::check_limit(i64::from(n)))
            .transpose()?;
        let filter = agentx_clarify_core::search::Filter {
            issue: self.issue,
            statuses: self.status.unwrap_or_default(),
            field: self.field,
            from: self.asked_by,
            to: self.asked_of,
            not_issue: None,
            limit,
        };
        Ok((self.query, filter))
    }
}

impl Ask {
    /// The request this input asks, as `from`, on `issue` (the input's or the server's).
    pub fn request(self, issue: u32, from: &str) -> NewRequest {
        let answer = AnswerSpec {
            kind: match self.answer_kind {
                None | Some(AnswerKindArg::Text) => AnswerKind::Text,
                Some(AnswerKindArg::Confirm) => AnswerKind::Confirm,
                Some(AnswerKindArg::Choice) => AnswerKind::Choice,
                Some(AnswerKindArg::MultiChoice) => AnswerKind::MultiChoice,
            },
            options: self
                .options
                .unwrap_or_default()
                .into_iter()
                .map(|o| AnswerOption {
                    value: o.value,
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            allow_other: self.allow_other,
            min_select: self.min_select,
            max_select: self.max_select,
        };
        let mut extra = serde_json::Map::new();
        if let Some(id) = self.asked_back {
            extra.insert(ASKED_BACK.to_owned(), serde_json::Value::from(id));
        }
        NewRequest {
            issue_number: u64::from(issue),
            from: from.to_owned(),
            to: self.to,
            topic: self.topic,
            question: self.question,
            blocking: self.blocking.unwrap_or(true),
            workflow: self.workflow,
            step: self.step,
            field: self.field,
            suggestions: self.suggestions.unwrap_or_default(),
            idempotency_key: self.idempotency_key,
            severity: self.severity.map(Severity::core),
            context: self.context,
            blocked_operations: self.blocked_operations.unwrap_or_default(),
            session_id: None,
            gap_id: None,
            answer,
            ask_again: self.ask_again.unwrap_or(false),
            extra,
        }
    }
}

impl Severity {
    fn core(self) -> agentx_clarify_core::Severity {
        match self {
            Severity::Block => agentx_clarify_core::Severity::Block,
            Severity::Warn => agentx_clarify_core::Severity::Warn,
        }
    }
}

impl ValueArg {
    /// The typed value as the core reads it (docs/protocol.md §22).
    pub fn value(self) -> serde_json::Value {
        match self {
            ValueArg::Yes(b) => serde_json::Value::Bool(b),
            ValueArg::One(s) => serde_json::Value::String(s),
            ValueArg::Several(v) => v.into_iter().map(serde_json::Value::String).collect(),
        }
    }
}

impl Answer {
    /// The answer by `from`: a typed one when `value` is given (its body then optional).
    pub fn action(self, from: &str) -> Result<Action, ClarifyError> {
        let from = from.to_owned();
        match (self.value, self.body) {
            (Some(value), body) => Ok(Action::AnswerValue {
                from,
                body,
                value: value.value(),
            }),
            (None, Some(body)) => Ok(Action::Answer { from, body }),
            (None, None) => Err(ClarifyError::input(
                "`body` is required (a string), or `value` for a question with an answer kind",
            )),
        }
    }
}

impl Resolve {
    /// The resolution by `from` (typed when `value` is given).
    pub fn action(self, from: &str) -> Action {
        let from = Some(from.to_owned());
        match self.value {
            Some(value) => Action::ResolveValue {
                from,
                message: self.message,
                value: value.value(),
            },
            None => Action::Resolve {
                from,
                message: self.message,
            },
        }
    }
}
