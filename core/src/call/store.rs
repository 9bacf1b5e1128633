//! The inputs of the command layer's operations (docs/api.md "The store's commands"), one
//! struct per operation (a few operations share one: `escalate`, `abandon` and `reopen` take
//! the same fields). The pure facade takes the same structs with the ledgers they are decided
//! on ([`super::pure`]); the CLI fills them from its flags.
//!
//! Each struct converts into the core's own request (`Ask::into_request` → [`NewRequest`]) in
//! the order every surface has always checked its fields, with the same messages.

use serde_json::{Map, Value};

use super::{opt_issue, Integer, IssueArg, Time};
use crate::error::ClarifyError;
use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use crate::ledger::{Severity, Status};
use crate::listing::ListFilter;
use crate::ops::{Action, NewRequest};

crate::input! {
    /// No fields (`init`, `verify`, `nextWakeup`, `keysList`, and the facade's `version`, …).
    #[ts(rename = "NoInput")]
    pub struct Nothing {}
}

crate::input! {
    /// `ask` (the vectors' `request`): a new clarification (docs/protocol.md §3, §16, §22, §30).
    #[ts(rename = "AskFields")]
    pub struct Ask {
        pub issue_number: IssueArg = "issueNumber",
        pub from: String = "from",
        pub to: String = "to",
        pub topic: String = "topic",
        pub question: String = "question",
        /// Default true; a given `severity` decides instead.
        pub blocking: Option<bool> = "blocking",
        pub workflow: Option<String> = "workflow",
        pub step: Option<String> = "step",
        /// The exact field or decision the gap concerns.
        pub field: Option<String> = "field",
        /// Answers the asker would accept (at most 10).
        pub suggestions: Option<Vec<String>> = "suggestions",
        /// Re-sending a request with the same key returns the original record.
        pub idempotency_key: Option<String> = "idempotencyKey",
        /// Layer 4 (docs/protocol.md §16): given, it sets `blocking`.
        #[ts(optional, type = "Severity")]
        pub severity: Option<String> = "severity",
        pub context: Option<String> = "context",
        /// Operations the record blocks while open; absent or empty: every operation.
        pub blocked_operations: Option<Vec<String>> = "blockedOperations",
        /// A UUID: the Layer 4 session the gap belongs to.
        pub session_id: Option<String> = "sessionId",
        pub gap_id: Option<String> = "gapId",
        /// Ask back: the id of the pending question, asked of `from` by `to`, that this one
        /// answers with a question (docs/protocol.md §30).
        pub asked_back: Option<String> = "askedBack",
        /// docs/protocol.md §22: `text` (default), `confirm`, `choice`, `multi_choice`.
        #[ts(optional, type = "AnswerKind")]
        pub answer_kind: Option<String> = "answerKind",
        /// 2–10, for choice and multi_choice only.
        pub options: Option<Vec<OptionInput>> = "options",
        /// Choice kinds: accept free text outside the options (default true).
        pub allow_other: Option<bool> = "allowOther",
        /// multi_choice: default 1.
        pub min_select: Option<Integer> = "minSelect",
        /// multi_choice: default the number of options.
        pub max_select: Option<Integer> = "maxSelect",
        /// Ask even when the issue holds the same question (docs/protocol.md §22); else the
        /// record that holds it comes back with `reused: true`.
        pub ask_again: Option<bool> = "askAgain",
        /// Take this resolved record's decision (docs/protocol.md §36): the new record is
        /// resolved at once by its requester, citing it (`ref`, `refHash`, `via: "reuse"`).
        pub reuse: Option<String> = "reuse",
    }
}

crate::input! {
    /// One acceptable answer of a choice kind, as a request gives it.
    #[ts(rename = "AnswerOption")]
    pub struct OptionInput {
        /// `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`, unique within the request.
        pub value: String = "value",
        /// At most 100 characters; the value is shown when absent.
        pub label: Option<String> = "label",
        /// At most 500 characters.
        pub description: Option<String> = "description",
    }
}

impl Ask {
    /// The core's request, checked in the order every surface reads the fields: the issue,
    /// the severity, then the answer kind (the rest is `NewRequest::validate`'s).
    pub fn into_request(self) -> Result<NewRequest, ClarifyError> {
        let issue_number = self.issue_number.number()?;
        let severity = self
            .severity
            .map(|s| Severity::parse(&s).map_err(ClarifyError::input))
            .transpose()?;
        let answer = answer_spec(
            self.answer_kind.as_deref(),
            self.options.unwrap_or_default(),
            self.allow_other,
            [
                ("minSelect", self.min_select),
                ("maxSelect", self.max_select),
            ],
        )?;
        let mut extra = Map::new();
        if let Some(id) = self.asked_back {
            extra.insert(crate::replies::ASKED_BACK.to_owned(), Value::from(id));
        }
        Ok(NewRequest {
            issue_number,
            from: self.from,
            to: self.to,
            topic: self.topic,
            question: self.question,
            blocking: self.blocking.unwrap_or(true),
            workflow: self.workflow,
            step: self.step,
            field: self.field,
            suggestions: self.suggestions.unwrap_or_default(),
            idempotency_key: self.idempotency_key,
            severity,
            context: self.context,
            blocked_operations: self.blocked_operations.unwrap_or_default(),
            session_id: self.session_id,
            gap_id: self.gap_id,
            answer,
            ask_again: self.ask_again.unwrap_or(false),
            extra,
        })
    }
}

/// A request's answer kind (docs/protocol.md §22), checked against itself later by
/// `AnswerSpec::validate`.
fn answer_spec(
    kind: Option<&str>,
    options: Vec<OptionInput>,
    allow_other: Option<bool>,
    counts: [(&str, Option<Integer>); 2],
) -> Result<AnswerSpec, ClarifyError> {
    let kind = match kind {
        Some(k) => AnswerKind::parse(k)?,
        None => AnswerKind::Text,
    };
    let [min, max] = counts.map(|(key, n)| {
        n.map(|Integer(n)| {
            u32::try_from(n)
                .map_err(|_| ClarifyError::input(format!("`{key}` must be a whole number from 0")))
        })
        .transpose()
    });
    Ok(AnswerSpec {
        kind,
        options: options
            .into_iter()
            .map(|o| AnswerOption {
                value: o.value,
                label: o.label,
                description: o.description,
            })
            .collect(),
        allow_other,
        min_select: min?,
        max_select: max?,
    })
}

crate::input! {
    /// `answer`: by the record's target; `body` may be left out when a typed `value` is given (it
    /// is rendered from the value).
    #[ts(rename = "AnswerFields")]
    pub struct Answer {
        pub id: String = "id",
        pub from: String = "from",
        pub body: Option<String> = "body",
        /// docs/protocol.md §22: `true`/`false`, an option value, or option values.
        #[ts(optional, type = "AnswerValue")]
        pub value: Option<Value> = "value",
    }
}

impl Answer {
    pub fn action(self) -> Result<Action, ClarifyError> {
        Ok(match self.value {
            Some(value) => Action::AnswerValue {
                from: self.from,
                body: self.body,
                value,
            },
            None => Action::Answer {
                from: self.from,
                body: self
                    .body
                    .ok_or_else(|| ClarifyError::input("`body` is required (a string)"))?,
            },
        })
    }
}

crate::input! {
    /// `followUp`: the requester's next round.
    #[ts(rename = "FollowUpFields")]
    pub struct FollowUp {
        pub id: String = "id",
        pub from: String = "from",
        pub question: String = "question",
    }
}

impl FollowUp {
    pub fn action(self) -> Action {
        Action::FollowUp {
            from: self.from,
            question: self.question,
        }
    }
}

crate::input! {
    /// `resolve`: a typed `value` records the decision (docs/protocol.md §22).
    #[ts(rename = "ResolveFields")]
    pub struct Resolve {
        pub id: String = "id",
        /// Default: `human` on an escalated record, else the requester.
        pub from: Option<String> = "from",
        pub message: Option<String> = "message",
        #[ts(optional, type = "AnswerValue")]
        pub value: Option<Value> = "value",
        /// Resolved records whose decisions this one replaces (at most 10, docs/protocol.md
        /// §36): recorded on the resolution; search and `related` show them superseded.
        pub supersedes: Option<Vec<String>> = "supersedes",
    }
}

impl Resolve {
    pub fn action(self) -> Action {
        match self.value {
            Some(value) => Action::ResolveValue {
                from: self.from,
                message: self.message,
                value,
            },
            None => Action::Resolve {
                from: self.from,
                message: self.message,
            },
        }
    }
}

crate::input! {
    /// `escalate`, `abandon`, `reopen`: who and why.
    #[ts(rename = "CloseFields")]
    pub struct Close {
        pub id: String = "id",
        pub from: Option<String> = "from",
        pub message: Option<String> = "message",
    }
}

impl Close {
    pub fn escalate(self) -> Action {
        Action::Escalate {
            from: self.from,
            message: self.message,
        }
    }

    pub fn abandon(self) -> Action {
        Action::Abandon {
            from: self.from,
            message: self.message,
        }
    }
}

crate::input! {
    /// `claim`: a person takes an escalated record (docs/protocol.md §37). Through a server the
    /// person is the signed-in one; elsewhere (the CLI's `--as`, a vector) `as` names them.
    #[ts(rename = "ClaimFields")]
    pub struct Claim {
        pub id: String = "id",
        pub person: Option<String> = "as",
        pub message: Option<String> = "message",
    }
}

crate::input! {
    /// `handoff`: the holder (or a decider) hands an escalated record to `to`; `as` as
    /// `claim`'s. Without `id`, every escalated record `as` holds goes to `to` (end of a shift).
    #[ts(rename = "HandoffFields")]
    pub struct Handoff {
        pub id: Option<String> = "id",
        pub to: String = "to",
        pub person: Option<String> = "as",
        pub message: Option<String> = "message",
    }
}

crate::input! {
    /// `approve`: a decider's approval of an escalated record's decision (docs/protocol.md
    /// §37) — `message`/`value` propose one, neither approves the first proposed as written;
    /// `as` as `claim`'s.
    #[ts(rename = "ApproveFields")]
    pub struct Approve {
        pub id: String = "id",
        pub person: Option<String> = "as",
        pub message: Option<String> = "message",
        #[ts(optional, type = "AnswerValue")]
        pub value: Option<Value> = "value",
    }
}

crate::input! {
    /// `decide` (a person through the server, docs/protocol.md §23): resolves the record, taking
    /// it first when it is not escalated.
    #[ts(rename = "DecideFields")]
    pub struct Decide {
        pub id: String = "id",
        pub message: Option<String> = "message",
        #[ts(optional, type = "AnswerValue")]
        pub value: Option<Value> = "value",
    }
}

crate::input! {
    /// `monitor`; `route` and `jobs` where the shell can start agents.
    #[ts(rename = "MonitorFields")]
    pub struct Monitor {
        pub dry_run: Option<bool> = "dryRun",
        /// Route what the monitor retried (default `[clarify] route_on_retry`).
        pub route: Option<bool> = "route",
        /// How many routings run at once (1–64, default 1).
        pub jobs: Option<Integer> = "jobs",
    }
}

/// `jobs`: how many routings run at once (1–64, default 1).
pub fn jobs(jobs: Option<Integer>) -> Result<usize, ClarifyError> {
    match jobs {
        None => Ok(1),
        Some(Integer(n)) if (1..=64).contains(&n) => Ok(usize::try_from(n).unwrap_or(1)),
        Some(Integer(n)) => Err(ClarifyError::input(format!(
            "`jobs` {n} is out of range: expected 1 to 64"
        ))),
    }
}

crate::input! {
    /// `list` and `delegateList`: `status` names the statuses of records (or of delegations).
    #[ts(rename = "ListFields")]
    pub struct List {
        pub issue: Option<IssueArg> = "issue",
        pub status: Option<Vec<String>> = "status",
        /// Resolved and abandoned ones too.
        pub all: Option<bool> = "all",
    }
}

impl List {
    /// The records' filter: statuses first, then the issue, as always.
    pub fn filter(&self) -> Result<ListFilter, ClarifyError> {
        let statuses = self
            .status
            .iter()
            .flatten()
            .map(|s| {
                Status::parse(s).ok_or_else(|| {
                    ClarifyError::input(format!(
                        "unknown status '{s}'; allowed: pending, stale, answered, escalated, resolved, abandoned"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListFilter {
            issue: opt_issue(self.issue.as_ref())?,
            statuses,
            all: self.all.unwrap_or(false),
        })
    }

    /// The delegations' statuses (`REQUESTED`, …).
    pub fn delegation_statuses(&self) -> Result<Vec<crate::delegation::Status>, ClarifyError> {
        use crate::delegation::Status;
        self.status
            .iter()
            .flatten()
            .map(|s| {
                Status::parse(s).ok_or_else(|| {
                    let allowed: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
                    ClarifyError::input(format!(
                        "unknown delegation status '{s}'; allowed: {}",
                        allowed.join(", ")
                    ))
                })
            })
            .collect()
    }
}

crate::input! {
    /// `show`, `audit`, `delegateShow`: one record (`id`) or one issue.
    #[ts(rename = "TargetFields")]
    pub struct Target {
        pub id: Option<String> = "id",
        pub issue: Option<IssueArg> = "issue",
    }
}

/// What [`Target`] names.
pub enum Named {
    Id(String),
    Issue(u32),
}

impl Target {
    pub fn named(self) -> Result<Named, ClarifyError> {
        match (self.id, opt_issue(self.issue.as_ref())?) {
            (Some(id), _) => Ok(Named::Id(id)),
            (None, Some(issue)) => Ok(Named::Issue(issue)),
            (None, None) => Err(ClarifyError::input("`id` or `issue` is required")),
        }
    }
}

crate::input! {
    /// `search`: records by their words, ranked by the core (docs/protocol.md §36).
    #[ts(rename = "SearchFields")]
    pub struct Search {
        /// The words looked for in question, topic, field, context, answers and decisions.
        pub query: String = "query",
        pub issue: Option<IssueArg> = "issue",
        /// Only these statuses (any of them); absent: every status.
        pub status: Option<Vec<String>> = "status",
        /// Only records of this field.
        pub field: Option<String> = "field",
        /// Only records this agent asked.
        pub from: Option<String> = "from",
        /// Only records asked of this agent.
        pub to: Option<String> = "to",
        /// 1–100, default 10.
        pub limit: Option<Integer> = "limit",
    }
}

impl Search {
    /// The query's field and the search's filters.
    pub fn filter(&self) -> Result<crate::search::Filter, ClarifyError> {
        let statuses = List {
            status: self.status.clone(),
            ..List::default()
        }
        .filter()?
        .statuses;
        Ok(crate::search::Filter {
            issue: opt_issue(self.issue.as_ref())?,
            statuses,
            field: self.field.clone(),
            from: self.from.clone(),
            to: self.to.clone(),
            not_issue: None,
            limit: self
                .limit
                .map(|Integer(n)| crate::search::check_limit(n))
                .transpose()?,
        })
    }
}

crate::input! {
    /// `stats`.
    #[ts(rename = "StatsFields")]
    pub struct Stats {
        /// Only records created since then (with `people`: what each person did since).
        pub since: Option<Time> = "since",
        /// Add `people`, one row per person (docs/protocol.md §37).
        pub people: Option<bool> = "people",
    }
}

crate::input! {
    /// `hook`: `event` is `start` or `finish`.
    #[ts(rename = "HookFields")]
    pub struct Hook {
        #[ts(type = "'start' | 'finish'")]
        pub event: String = "event",
        pub agent: String = "agent",
        pub issue: Option<IssueArg> = "issue",
    }
}

crate::input! {
    /// `hookStart`, `hookFinish`.
    #[ts(rename = "HookAgentFields")]
    pub struct HookAgent {
        pub agent: String = "agent",
        pub issue: Option<IssueArg> = "issue",
    }
}

crate::input! {
    /// `ready`: `monitor: false` reads the queue as it stands (nothing run, written or locked).
    #[ts(rename = "ReadyFields")]
    pub struct Ready {
        /// Default true: an escalated blocking record holds its issue too.
        pub include_escalated: Option<bool> = "includeEscalated",
        pub monitor: Option<bool> = "monitor",
    }
}

crate::input! {
    /// `state`: reads the statuses, or with `agent` and `status` sets one.
    #[ts(rename = "StateFields")]
    pub struct State {
        pub agent: Option<String> = "agent",
        #[ts(optional, type = "AgentState")]
        pub status: Option<String> = "status",
        pub issue: Option<IssueArg> = "issue",
    }
}

crate::input! {
    /// `scopePreview`: whom `from` may ask, and with what limits (any field absent).
    #[ts(rename = "ScopePreviewFields")]
    pub struct ScopePreview {
        pub from: Option<String> = "from",
        pub to: Option<String> = "to",
        pub blocking: Option<bool> = "blocking",
        pub workflow: Option<String> = "workflow",
        pub step: Option<String> = "step",
        pub issue_number: Option<IssueArg> = "issueNumber",
    }
}

impl ScopePreview {
    pub fn question(self) -> crate::scope::Question {
        crate::scope::Question {
            from: self.from.unwrap_or_default(),
            to: self.to.unwrap_or_default(),
            blocking: self.blocking.unwrap_or(true),
            workflow: self.workflow,
            step: self.step,
        }
    }
}

crate::input! {
    /// `waitForGraph`: one issue, or every one.
    #[ts(rename = "IssueFields")]
    pub struct Issue {
        pub issue: Option<IssueArg> = "issue",
    }
}

crate::input! {
    /// `migrate`.
    #[ts(rename = "MigrateFields")]
    pub struct Migrate {
        pub dry_run: Option<bool> = "dryRun",
    }
}

crate::input! {
    /// `signalsParse` (and the facade's `extractJson`): an agent's output.
    #[ts(rename = "TextFields")]
    pub struct Text {
        pub text: String = "text",
    }
}

crate::input! {
    /// `signalsIngest`: act on every block of `agent`'s output on `issue`.
    #[ts(rename = "IngestFields")]
    pub struct Ingest {
        pub issue: IssueArg = "issue",
        pub agent: String = "agent",
        /// Its coordinator: asked when a block names no target.
        pub parent: Option<String> = "parent",
        pub text: String = "text",
    }
}

impl Ingest {
    /// Who ingests (checked by the planner, in its order), and the output.
    pub fn context(self) -> Result<(crate::signals::Context, String), ClarifyError> {
        let context = crate::signals::Context {
            issue: self.issue.checked()?,
            agent: self.agent,
            parent: self.parent,
        };
        Ok((context, self.text))
    }
}

crate::input! {
    /// `resumePrompt`: a clarification (`CLR-…`) or a delegation (`DLG-…`).
    #[ts(rename = "IdFields")]
    pub struct Id {
        pub id: String = "id",
    }
}

crate::input! {
    /// `delegateRequest`: seed 003 §6.2's envelope.
    #[ts(rename = "DelegateRequestFields")]
    pub struct DelegateRequest {
        pub issue_number: IssueArg = "issueNumber",
        pub from: String = "from",
        pub to: String = "to",
        pub capability: Option<String> = "capability",
        pub objective: String = "objective",
        #[ts(optional, type = "Record<string, unknown>")]
        pub context_slice: Option<Value> = "contextSlice",
        #[ts(optional, type = "Record<string, unknown>")]
        pub output_contract: Option<Value> = "outputContract",
        /// 1–10080, default 60: minutes from acceptance to TIMEOUT.
        pub timeout_minutes: Option<Integer> = "timeoutMinutes",
    }
}

/// An optional object field (`contextSlice`, `outputContract`, `metrics`).
fn object(value: Option<Value>, key: &str) -> Result<Map<String, Value>, ClarifyError> {
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(o)) => Ok(o),
        Some(_) => Err(ClarifyError::input(format!("`{key}` must be an object"))),
    }
}

impl DelegateRequest {
    pub fn into_delegation(self) -> Result<crate::delegation::NewDelegation, ClarifyError> {
        let timeout_minutes = match self.timeout_minutes {
            None => None,
            Some(Integer(n)) => Some(u32::try_from(n).map_err(|_| {
                let (min, max) = crate::delegation::TIMEOUT_RANGE;
                ClarifyError::input(format!(
                    "timeoutMinutes must be from {min} to {max}, found {n}"
                ))
            })?),
        };
        Ok(crate::delegation::NewDelegation {
            issue_number: self.issue_number.number()?,
            from: self.from,
            to: self.to,
            capability: self.capability,
            objective: self.objective,
            context_slice: object(self.context_slice, "contextSlice")?,
            output_contract: object(self.output_contract, "outputContract")?,
            timeout_minutes,
            signal_key: None,
            extra: Map::new(),
        })
    }
}

crate::input! {
    /// `delegateAccept`, `delegateFail`: by `from` (the target, or `human`).
    #[ts(rename = "DelegateActFields")]
    pub struct DelegateAct {
        pub id: String = "id",
        pub from: String = "from",
        pub message: Option<String> = "message",
    }
}

crate::input! {
    /// `delegateReject`: `reason` `capability` or `context` (the default).
    #[ts(rename = "DelegateRejectFields")]
    pub struct DelegateReject {
        pub id: String = "id",
        pub from: String = "from",
        pub message: Option<String> = "message",
        #[ts(optional, type = "'capability' | 'context'")]
        pub reason: Option<String> = "reason",
    }
}

impl DelegateReject {
    pub fn action(self) -> Result<crate::delegation::Action, ClarifyError> {
        let capability = match self.reason.as_deref() {
            Some("capability") => true,
            Some("context") | None => false,
            Some(other) => {
                return Err(ClarifyError::input(format!(
                    "unknown rejection reason '{other}'; allowed: capability, context"
                )))
            }
        };
        Ok(crate::delegation::Action::reject(
            &self.from,
            capability,
            self.message,
        ))
    }
}

crate::input! {
    /// `delegateComplete`: the response envelope (seed 003 §6.4).
    #[ts(rename = "DelegateCompleteFields")]
    pub struct DelegateComplete {
        pub id: String = "id",
        pub from: String = "from",
        pub message: Option<String> = "message",
        pub artifact_path: Option<String> = "artifactPath",
        pub summary: Option<String> = "summary",
        #[ts(optional, type = "Record<string, unknown>")]
        pub metrics: Option<Value> = "metrics",
        pub follow_up_recommended: Option<Vec<String>> = "followUpRecommended",
        pub unresolved: Option<Vec<String>> = "unresolved",
    }
}

impl DelegateComplete {
    pub fn action(self) -> Result<crate::delegation::Action, ClarifyError> {
        let response = crate::delegation::Response {
            artifact_path: self.artifact_path,
            summary: self.summary.unwrap_or_default(),
            metrics: object(self.metrics, "metrics")?,
            follow_up_recommended: self.follow_up_recommended.unwrap_or_default(),
            unresolved: self.unresolved.unwrap_or_default(),
            extra: Map::new(),
        };
        Ok(crate::delegation::Action::complete(&self.from, response))
    }
}

crate::input! {
    /// `check` (Layer 4, docs/protocol.md §16): ask every gap of a plan.
    #[ts(rename = "CheckFields")]
    pub struct Check {
        pub issue: Option<IssueArg> = "issue",
        pub from: String = "from",
        /// The target of gaps without their own `to`.
        pub to: Option<String> = "to",
        /// Layer 4's plan: `{session_id?, agent_id?, gaps}` (its own snake_case keys).
        #[ts(optional, type = "Plan")]
        pub plan: Option<Value> = "plan",
        pub workflow: Option<String> = "workflow",
        pub step: Option<String> = "step",
        /// The session id when the plan has none (a UUID v4 the shell drew).
        pub new_session_id: Option<String> = "newSessionId",
    }
}

impl Check {
    /// The plan and `check`'s arguments, in the order they were always checked: the plan,
    /// the issue, the session.
    pub fn plan(self) -> Result<(crate::layer4::Plan, crate::layer4::CheckArgs), ClarifyError> {
        let plan = self.plan.ok_or_else(|| {
            ClarifyError::input("`plan` is required: Layer 4's {session_id?, agent_id?, gaps}")
        })?;
        let plan = crate::layer4::Plan::parse(&plan)?;
        let issue = opt_issue(self.issue.as_ref())?
            .ok_or_else(|| ClarifyError::input("`issue` is required"))?;
        let new_session_id = self.new_session_id.unwrap_or_default();
        if plan.session_id.is_none() && new_session_id.is_empty() {
            return Err(ClarifyError::input(
                "the plan has no `session_id`: give it one, or give `newSessionId` (a UUID v4)",
            ));
        }
        let args = crate::layer4::CheckArgs {
            issue_number: u64::from(issue),
            from: self.from,
            to: self.to,
            workflow: self.workflow,
            step: self.step,
            new_session_id,
        };
        Ok((plan, args))
    }
}

crate::input! {
    /// `gate`: whether an operation may proceed on an issue.
    #[ts(rename = "GateFields")]
    pub struct Gate {
        pub issue: Option<IssueArg> = "issue",
        pub operation: Option<String> = "operation",
    }
}

impl Gate {
    pub fn issue(&self) -> Result<u32, ClarifyError> {
        opt_issue(self.issue.as_ref())?.ok_or_else(|| ClarifyError::input("`issue` is required"))
    }
}

crate::input! {
    /// `route`: one record (`id`), or every routable one (`all`, `jobs` at once).
    #[ts(rename = "RouteFields")]
    pub struct Route {
        pub id: Option<String> = "id",
        pub all: Option<bool> = "all",
        pub jobs: Option<Integer> = "jobs",
    }
}

crate::input! {
    /// `routeRunner`: the runner that answers for `agent`.
    #[ts(rename = "RouteRunnerFields")]
    pub struct RouteRunner {
        pub agent: String = "agent",
    }
}

crate::input! {
    /// `routePrompt`, `routeChatPrompt`: the prompt for the record's target; `persona` replaces
    /// the persona file's text.
    #[ts(rename = "RoutePromptFields")]
    pub struct RoutePrompt {
        pub id: String = "id",
        pub persona: Option<String> = "persona",
    }
}

crate::input! {
    /// `routeOutcome`: what routing would do with a run's output (nothing written).
    #[ts(rename = "RouteOutcomeFields")]
    pub struct RouteOutcome {
        pub id: String = "id",
        #[ts(optional, type = "RunOutput")]
        pub output: Option<Value> = "output",
    }
}

crate::input! {
    /// `routeChatReply`: the chat model's `reply`, or the `error` that left it without one.
    #[ts(rename = "ChatReplyFields")]
    pub struct RouteChatReply {
        pub id: String = "id",
        /// The round of the prompt (`routeChatPrompt`'s `round`).
        pub round: Option<Integer> = "round",
        pub reply: Option<String> = "reply",
        pub error: Option<String> = "error",
        pub model: Option<String> = "model",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::decode;
    use serde_json::json;

    #[test]
    fn an_ask_becomes_the_request_every_surface_builds() {
        let ask: Ask = decode(&json!({
            "issueNumber": "42", "from": "engineer", "to": "architect", "topic": "Cache",
            "question": "Redis?", "severity": "WARN", "answerKind": "choice",
            "options": [{"value": "redis"}, {"value": "lru", "label": "LRU"}],
            "minSelect": 1.0, "askedBack": "CLR-42-001", "blocking": null,
        }))
        .unwrap();
        let req = ask.into_request().unwrap();
        assert_eq!(req.issue_number, 42);
        assert!(req.blocking);
        assert_eq!(req.severity, Some(Severity::Warn));
        assert_eq!(req.answer.kind, AnswerKind::Choice);
        assert_eq!(req.answer.options[1].label.as_deref(), Some("LRU"));
        assert_eq!(req.answer.min_select, Some(1));
        assert_eq!(req.extra["askedBack"], "CLR-42-001");
    }

    #[test]
    fn meanings_are_checked_after_the_shape() {
        let bad = |v: Value| decode::<Ask>(&v).unwrap().into_request().unwrap_err();
        let base = json!({"from": "a", "to": "b", "topic": "t", "question": "q"});
        let with = |k: &str, v: Value| {
            let mut o = base.clone();
            o["issueNumber"] = json!(1);
            o[k] = v;
            o
        };
        assert_eq!(bad(with("issueNumber", json!("x"))).code(), "INVALID_ISSUE");
        assert_eq!(bad(with("issueNumber", json!(-1))).code(), "INVALID_ISSUE");
        assert_eq!(
            bad(with("severity", json!("MAYBE"))).to_string(),
            "invalid input: unknown severity 'MAYBE'; allowed: BLOCK, WARN"
        );
        assert_eq!(
            bad(with("minSelect", json!(-1))).to_string(),
            "invalid input: `minSelect` must be a whole number from 0"
        );
    }
}
