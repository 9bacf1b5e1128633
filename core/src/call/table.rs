//! The operation table: every operation of the command layer and every function of the pure
//! facade, once, with its input and what it answers. Every list of names is read from here —
//! the command layer's dispatch (an exhaustive `match` on [`Operation`]), the server's
//! allow-list for people (`/api/v1/call`), the Node and wasm wrappers, the TypeScript types
//! (`types/types.d.ts` is generated from this table and the input structs) — so a name cannot
//! be callable on one surface and unknown on another.
//!
//! Where a new operation goes: a variant of [`Operation`] (or [`Function`]) with its input
//! struct in `store.rs` (or `pure.rs`), a row below, and its arm in the command layer's
//! `dispatch` (or the facade's); the compiler finds the arm that is missing.

use serde_json::Value;

use super::pure;
use super::store::*;
use super::Input;
use crate::error::ClarifyError;

/// An input the table can decode: a struct of `store.rs`/`pure.rs`, or a [`Pair`].
pub trait Decode: Sized {
    fn decode(input: &Value) -> Result<Self, ClarifyError>;
}

impl<T: Input> Decode for T {
    fn decode(input: &Value) -> Result<Self, ClarifyError> {
        super::decode(input)
    }
}

/// Decodes `T` and wraps it as its row's variant. One copy per input type, out of line: the
/// table's `match` on names stays a list of calls (the wasm package carries it).
#[inline(never)]
fn wrap<T: Decode, E>(input: &Value, variant: fn(T) -> E) -> Result<E, ClarifyError> {
    T::decode(input).map(variant)
}

/// One object read as two inputs: the pure facade's part `A` (the ledgers it decides on) and
/// the operation's own input `B`, shared with the command layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pair<A, B>(pub A, pub B);

impl<A: Input, B: Input> Decode for Pair<A, B> {
    fn decode(input: &Value) -> Result<Self, ClarifyError> {
        super::decode_pair(input).map(|(a, b)| Pair(a, b))
    }
}

/// `A & B` in TypeScript.
impl<A: ts_rs::TS, B: ts_rs::TS> ts_rs::TS for Pair<A, B> {
    type WithoutGenerics = Pair<ts_rs::Dummy, ts_rs::Dummy>;
    type OptionInnerType = Self;

    fn name(cfg: &ts_rs::Config) -> String {
        format!("{} & {}", A::name(cfg), B::name(cfg))
    }

    fn inline(cfg: &ts_rs::Config) -> String {
        format!("{} & {}", A::inline(cfg), B::inline(cfg))
    }

    fn visit_dependencies(v: &mut impl ts_rs::TypeVisitor)
    where
        Self: 'static,
    {
        v.visit::<A>();
        v.visit::<B>();
    }
}

/// Who may call an operation through the server's `/api/v1/call` (docs/api.md "Over HTTP"),
/// acting as the signed-in person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum People {
    /// Reads only; nothing is written.
    Read,
    /// A person's action: the entries are `human`'s with `by`/`via`.
    Act,
    /// Runs the record's target agent (its runner writes the agent's entries): one record.
    Route,
    /// Not open to people: agents ask, answer and report through `/mcp`, the CLI and the SDKs.
    Closed,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub name: &'static str,
    pub people: People,
    /// The TypeScript type of its success envelope's fields (types/types.d.ts).
    pub output: &'static str,
}

macro_rules! table {
    (
        $(#[$meta:meta])* $vis:vis enum $enum:ident; $list:ident; $names:ident;
        $( $(#[doc = $doc:literal])* $name:literal => $variant:ident($input:ty), $people:ident, $out:literal; )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        $vis enum $enum {
            $( $(#[doc = $doc])* $variant($input), )*
        }

        /// The names of the rows, in order.
        pub const $names: &[&str] = &[$($name,)*];

        /// The rows, in the order of docs/api.md.
        pub const $list: &[Row] = &[
            $( Row {
                name: $name,
                people: People::$people,
                output: $out,
            }, )*
        ];

        impl $enum {
            /// Decodes operation `name`'s input.
            pub fn decode(name: &str, input: &Value) -> Result<$enum, ClarifyError> {
                match name {
                    $( $name => wrap::<$input, $enum>(input, $enum::$variant), )*
                    other => Err(unknown(other, $list)),
                }
            }

            /// Its name in the table.
            pub fn name(&self) -> &'static str {
                match self {
                    $( $enum::$variant(_) => $name, )*
                }
            }

            /// Each row's name and the TypeScript type of its input (the types generator).
            pub fn ts_inputs(cfg: &ts_rs::Config) -> Vec<(&'static str, String)> {
                vec![$( ($name, <$input as ts_rs::TS>::name(cfg)), )*]
            }

            /// Visits every input type (the types generator declares them).
            pub fn visit_inputs(v: &mut impl ts_rs::TypeVisitor) {
                $( v.visit::<$input>(); )*
            }
        }
    };
}

/// The refusal of a name the table does not hold, with the nearest one.
fn unknown(name: &str, rows: &[Row]) -> ClarifyError {
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    let hint = match crate::nearest::nearest(name, &names) {
        Some(near) => format!("did you mean '{near}'?"),
        None => format!("known: {}", names.join(", ")),
    };
    ClarifyError::input(format!(
        "unknown operation '{}'; {hint}",
        crate::error::shown(name)
    ))
}

/// The row of `name` (an alias's row is its operation's).
pub fn row(name: &str) -> Option<&'static Row> {
    let name = canonical(name);
    OPERATIONS.iter().find(|r| r.name == name)
}

/// The vectors' older names: `request` is `ask`.
pub fn canonical(name: &str) -> &str {
    match name {
        "request" => "ask",
        other => other,
    }
}

table! {
    /// An operation of the command layer with its input (docs/api.md "The store's commands").
    pub enum Operation; OPERATIONS; OPERATION_NAMES;
    /// Creates `.agentx/` with the default workflows and settings.
    "init" => Init(Nothing), Closed, "{ created: string[] }";
    /// A new clarification (`clarify ask`).
    "ask" => Ask(Ask), Closed, "StoreMutation";
    "answer" => Answer(Answer), Closed, "StoreMutation";
    "followUp" => FollowUp(FollowUp), Closed, "StoreMutation";
    "resolve" => Resolve(Resolve), Act, "StoreMutation";
    "escalate" => Escalate(Close), Act, "StoreMutation";
    "abandon" => Abandon(Close), Act, "StoreMutation";
    /// A human sends an escalated record back to its target (docs/protocol.md §30).
    "reopen" => Reopen(Close), Closed, "StoreMutation";
    /// A person's decision (docs/protocol.md §23): only through the server, as that person.
    "decide" => Decide(Decide), Act, "StoreMutation";
    "monitor" => Monitor(Monitor), Closed, "StoreMonitor";
    "verify" => Verify(Nothing), Read, "VerifyResult";
    "list" => List(List), Read, "StoreList";
    "show" => Show(Target), Read, "ShowResult";
    "stats" => Stats(Stats), Read, "StoreStats";
    /// `hook start|finish` with the event as a field.
    "hook" => Hook(Hook), Closed, "StoreHook";
    "hookStart" => HookStart(HookAgent), Closed, "StoreHook";
    "hookFinish" => HookFinish(HookAgent), Closed, "StoreHook";
    "ready" => Ready(Ready), Read, "StoreReady";
    /// Reads the statuses, or sets one (closed to people: see `people_of`).
    "state" => State(State), Read, "StoreState";
    "scopePreview" => ScopePreview(ScopePreview), Read, "{ preview: unknown }";
    "nextWakeup" => NextWakeup(Nothing), Read, "{ wakeup: number | null }";
    "waitForGraph" => WaitForGraph(Issue), Read, "{ graphs: unknown[] }";
    "migrate" => Migrate(Migrate), Closed, "StoreMigrate";
    "signalsParse" => SignalsParse(Text), Closed, "SignalsParseResult";
    "signalsIngest" => SignalsIngest(Ingest), Closed, "StoreIngest";
    "resumePrompt" => ResumePrompt(Id), Closed, "StoreResumePrompt";
    "delegateRequest" => DelegateRequest(DelegateRequest), Closed, "StoreDelegation";
    "delegateAccept" => DelegateAccept(DelegateAct), Closed, "StoreDelegation";
    "delegateComplete" => DelegateComplete(DelegateComplete), Closed, "StoreDelegation";
    "delegateReject" => DelegateReject(DelegateReject), Closed, "StoreDelegation";
    "delegateFail" => DelegateFail(DelegateAct), Closed, "StoreDelegation";
    "delegateShow" => DelegateShow(Target), Read, "{ delegation?: Delegation; ledger?: DelegationLedger }";
    "delegateList" => DelegateList(List), Read, "{ delegations: Delegation[]; errors: FileError[] }";
    "check" => Check(Check), Closed, "StoreCheck";
    "gate" => Gate(Gate), Read, "GateResult";
    "audit" => Audit(Target), Read, "AuditRecord";
    "keysList" => KeysList(Nothing), Read, "{ keys: KeyInfo[] }";
    /// Runs the record's target agent (where the shell can start agents).
    "route" => Route(Route), Route, "StoreRoute | StoreRouteAll";
    "routeRunner" => RouteRunner(RouteRunner), Read, "{ agent: string; preset: string; mcpMaxRoutes?: number }";
    "routePrompt" => RoutePrompt(RoutePrompt), Read, "{ id: string; prompt: string; runner: unknown }";
    "routeOutcome" => RouteOutcome(RouteOutcome), Closed, "{ outcome: RouteOutcome; interpretation: RouteInterpretation }";
    "routeChatPrompt" => RouteChatPrompt(RoutePrompt), Closed, "ChatPrompt";
    "routeChatReply" => RouteChatReply(RouteChatReply), Closed, "StoreChatRoute";
}

/// Who may call `op` with `input` through the server: `state` sets a status when it names
/// an agent or a status (an agent's report, not a person's read).
pub fn people_of(name: &str, input: &Value) -> People {
    match row(name) {
        Some(r) if r.name == "state" => {
            let sets = ["agent", "status"]
                .iter()
                .any(|k| input.get(k).is_some_and(|v| !v.is_null()));
            if sets {
                People::Closed
            } else {
                People::Read
            }
        }
        Some(r) => r.people,
        None => People::Closed,
    }
}

impl Operation {
    /// Decodes `name` (an alias too) with its input.
    pub fn parse(name: &str, input: &Value) -> Result<Operation, ClarifyError> {
        Operation::decode(canonical(name), input)
    }
}

table! {
    /// A function of the pure facade with its input (docs/api.md "Operations").
    pub enum Function; FUNCTIONS; FUNCTION_NAMES;
    "request" => Request(Pair<pure::OnNew, Ask>), Closed, "MutationResult";
    "answer" => Answer(Pair<pure::OnRecord, Answer>), Closed, "MutationResult";
    "followUp" => FollowUp(Pair<pure::OnRecord, FollowUp>), Closed, "MutationResult";
    "resolve" => Resolve(Pair<pure::OnRecord, Resolve>), Closed, "MutationResult";
    "escalate" => Escalate(Pair<pure::OnRecord, Close>), Closed, "MutationResult";
    "abandon" => Abandon(Pair<pure::OnRecord, Close>), Closed, "MutationResult";
    "monitor" => Monitor(pure::Monitor), Closed, "MonitorResult";
    "verify" => Verify(pure::Verify), Closed, "VerifyResult";
    "audit" => Audit(pure::Audit), Closed, "AuditResult";
    "stats" => Stats(pure::Metrics), Closed, "StatsResult";
    "list" => List(Pair<pure::Ledgers, List>), Closed, "ListResult";
    "show" => Show(Pair<pure::Ledgers, Target>), Closed, "ShowResult";
    "ready" => Ready(pure::Ready), Closed, "ReadyResult";
    "setStatus" => SetStatus(pure::SetStatus), Closed, "SetStatusResult";
    "parseWorkflow" => ParseWorkflow(pure::Parse), Closed, "{ workflow: Workflow }";
    "parseConfig" => ParseConfig(pure::Parse), Closed, "{ config: Config }";
    "defaultWorkflows" => DefaultWorkflows(Nothing), Closed, "{ workflows: Record<string, string>; config: string }";
    "renderMarkdown" => RenderMarkdown(pure::Render), Closed, "{ text: string }";
    "renderText" => RenderText(Pair<pure::Color, pure::Render>), Closed, "{ text: string }";
    "transitions" => Transitions(Nothing), Closed, "{ transitions: Transitions }";
    "errorCodes" => ErrorCodes(Nothing), Closed, "{ codes: { code: ErrorCode; class: ErrorClass }[] }";
    "version" => Version(Nothing), Closed, "{ version: string }";
    "signalsParse" => SignalsParse(Text), Closed, "SignalsParseResult";
    "extractJson" => ExtractJson(Text), Closed, "ExtractJsonResult";
    "signalsIngest" => SignalsIngest(Pair<pure::OnIngest, Ingest>), Closed, "SignalsIngestResult";
    "resumePrompt" => ResumePrompt(pure::Resume), Closed, "ResumePromptResult";
    "delegationMetrics" => DelegationMetrics(pure::Metrics), Closed, "DelegationMetricsResult";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_row_decodes_its_own_name_and_names_are_unique() {
        for rows in [OPERATIONS, FUNCTIONS] {
            let mut seen = std::collections::BTreeSet::new();
            for r in rows {
                assert!(seen.insert(r.name), "{} twice", r.name);
            }
        }
        for r in OPERATIONS {
            // A decode error is about the input, never "unknown operation".
            if let Err(e) = Operation::parse(r.name, &json!({})) {
                assert!(!e.to_string().contains("unknown operation"), "{}: {e}", r.name);
            }
        }
        assert_eq!(
            Operation::parse("request", &json!({"issueNumber": 1, "from": "a", "to": "b", "topic": "t", "question": "q"}))
                .unwrap()
                .name(),
            "ask"
        );
    }

    #[test]
    fn an_unknown_name_suggests_the_nearest() {
        let e = Operation::parse("delegateAcept", &json!({})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid input: unknown operation 'delegateAcept'; did you mean 'delegateAccept'?"
        );
    }

    #[test]
    fn people_may_read_state_but_not_set_it() {
        assert_eq!(people_of("state", &json!({})), People::Read);
        assert_eq!(people_of("state", &json!({"agent": "a"})), People::Closed);
        assert_eq!(people_of("state", &json!({"agent": null})), People::Read);
        assert_eq!(people_of("decide", &json!({})), People::Act);
        assert_eq!(people_of("request", &json!({})), People::Closed);
        assert_eq!(people_of("nope", &json!({})), People::Closed);
    }
}
