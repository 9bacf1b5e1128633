//! The operation table: every operation of the command layer and every function of the pure
//! facade, once, with its input and what it answers. Every list of names is read from here —
//! the command layer's dispatch (it implements [`Operations`], one method per row), the
//! server's allow-list for people (`/api/v1/call`), the Node and wasm wrappers, the
//! TypeScript types (`types/types.d.ts` is generated from this table and the input structs) —
//! so a name cannot be callable on one surface and unknown on another.
//!
//! Where a new operation goes: its input struct in `store.rs` (or `pure.rs`), a row below,
//! and its method in the command layer's `impl Operations` (or the facade's `impl
//! Functions`); the compiler names the method that is missing. The generated dispatcher
//! decodes a row's input and hands it to its method in one step: no enum of every input is
//! built and taken apart again (each would be moved twice, which the wasm package pays for).

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
        $(#[$meta:meta])* $vis:vis trait $trait:ident; $list:ident; $names:ident; $dispatch:ident; $types:ident;
        $( $(#[doc = $doc:literal])* $name:literal => $method:ident($input:ty), $people:ident, $out:literal; )*
    ) => {
        $(#[$meta])*
        $vis trait $trait {
            /// What every method answers (the command layer's `--json` document).
            type Out;
            /// How a method fails (an input that does not decode is one).
            type Error: From<ClarifyError>;
            $( $(#[doc = $doc])* #[doc = concat!("`", $name, "`.")] fn $method(&self, input: $input) -> Result<Self::Out, Self::Error>; )*
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

        /// Decodes row `name`'s input and runs its method of `on`.
        pub fn $dispatch<H: $trait>(on: &H, name: &str, input: &Value) -> Result<H::Out, H::Error> {
            match name {
                $( $name => on.$method(<$input as Decode>::decode(input)?), )*
                other => Err(unknown(other, $names).into()),
            }
        }

        /// The table's input types, for the types generator (`tests/types.rs`).
        pub mod $types {
            use super::*;

            /// Each row's name and the TypeScript type of its input.
            pub fn names(cfg: &ts_rs::Config) -> Vec<(&'static str, String)> {
                vec![$( ($name, <$input as ts_rs::TS>::name(cfg)), )*]
            }

            /// Visits every input type (the generator declares them).
            pub fn visit(v: &mut impl ts_rs::TypeVisitor) {
                $( v.visit::<$input>(); )*
            }
        }
    };
}

/// The refusal of a name the table does not hold, with the nearest one.
fn unknown(name: &str, names: &[&str]) -> ClarifyError {
    let hint = match crate::nearest::nearest(name, names) {
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
    /// The operations of the command layer, each with its input (docs/api.md "The store's
    /// commands").
    pub trait Operations; OPERATIONS; OPERATION_NAMES; dispatch_operation; operation_types;
    /// Creates `.agentx/` with the default workflows and settings.
    "init" => init(Nothing), Closed, "{ created: string[] }";
    /// A new clarification (`clarify ask`).
    "ask" => ask(Ask), Closed, "StoreMutation";
    "answer" => answer(Answer), Closed, "StoreMutation";
    "followUp" => follow_up(FollowUp), Closed, "StoreMutation";
    "resolve" => resolve(Resolve), Act, "StoreMutation";
    "escalate" => escalate(Close), Act, "StoreMutation";
    "abandon" => abandon(Close), Act, "StoreMutation";
    /// A human sends an escalated record back to its target (docs/protocol.md §30).
    "reopen" => reopen(Close), Closed, "StoreMutation";
    /// A person takes an escalated record: "alice is on it" (docs/protocol.md §37).
    "claim" => claim(Claim), Act, "StoreMutation";
    /// A person hands an escalated record (or every one they hold) to another.
    "handoff" => handoff(Handoff), Act, "StoreMutation | StoreHandoffAll";
    /// A decider's approval, where several must agree (docs/protocol.md §37).
    "approve" => approve(Approve), Act, "StoreMutation";
    /// A person's decision (docs/protocol.md §23): only through the server, as that person.
    "decide" => decide(Decide), Act, "StoreMutation";
    "monitor" => monitor(Monitor), Closed, "StoreMonitor";
    "verify" => verify(Nothing), Read, "VerifyResult";
    "list" => list(List), Read, "StoreList";
    /// Records by their words, ranked by the core (docs/protocol.md §36): look before you ask.
    "search" => search(Search), Read, "StoreSearch";
    "show" => show(Target), Read, "ShowResult";
    "stats" => stats(Stats), Read, "StoreStats";
    /// `hook start|finish` with the event as a field.
    "hook" => hook(Hook), Closed, "StoreHook";
    "hookStart" => hook_start(HookAgent), Closed, "StoreHook";
    "hookFinish" => hook_finish(HookAgent), Closed, "StoreHook";
    "ready" => ready(Ready), Read, "StoreReady";
    /// Reads the statuses, or sets one (closed to people: see `people_of`).
    "state" => state(State), Read, "StoreState";
    "scopePreview" => scope_preview(ScopePreview), Read, "{ preview: unknown }";
    "nextWakeup" => next_wakeup(Nothing), Read, "{ wakeup: number | null }";
    "waitForGraph" => wait_for_graph(Issue), Read, "{ graphs: unknown[] }";
    "migrate" => migrate(Migrate), Closed, "StoreMigrate";
    "signalsParse" => signals_parse(Text), Closed, "SignalsParseResult";
    "signalsIngest" => signals_ingest(Ingest), Closed, "StoreIngest";
    "resumePrompt" => resume_prompt(Id), Closed, "StoreResumePrompt";
    "delegateRequest" => delegate_request(DelegateRequest), Closed, "StoreDelegation";
    "delegateAccept" => delegate_accept(DelegateAct), Closed, "StoreDelegation";
    "delegateComplete" => delegate_complete(DelegateComplete), Closed, "StoreDelegation";
    "delegateReject" => delegate_reject(DelegateReject), Closed, "StoreDelegation";
    "delegateFail" => delegate_fail(DelegateAct), Closed, "StoreDelegation";
    "delegateShow" => delegate_show(Target), Read, "{ delegation?: Delegation; ledger?: DelegationLedger }";
    "delegateList" => delegate_list(List), Read, "{ delegations: Delegation[]; errors: FileError[] }";
    "check" => check(Check), Closed, "StoreCheck";
    "gate" => gate(Gate), Read, "GateResult";
    "audit" => audit(Target), Read, "AuditRecord";
    "keysList" => keys_list(Nothing), Read, "{ keys: KeyInfo[] }";
    /// Runs the record's target agent (where the shell can start agents).
    "route" => route(Route), Route, "StoreRoute | StoreRouteAll";
    "routeRunner" => route_runner(RouteRunner), Read, "{ agent: string; preset: string; mcpMaxRoutes?: number }";
    "routePrompt" => route_prompt(RoutePrompt), Read, "{ id: string; prompt: string; runner: unknown }";
    "routeOutcome" => route_outcome(RouteOutcome), Closed, "{ outcome: RouteOutcome; interpretation: RouteInterpretation }";
    "routeChatPrompt" => route_chat_prompt(RoutePrompt), Closed, "ChatPrompt";
    "routeChatReply" => route_chat_reply(RouteChatReply), Closed, "StoreChatRoute";
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

table! {
    /// The functions of the pure facade, each with its input (docs/api.md "Operations").
    pub trait Functions; FUNCTIONS; FUNCTION_NAMES; dispatch_function; function_types;
    "request" => request(Pair<pure::OnNew, Ask>), Closed, "MutationResult";
    "answer" => answer(Pair<pure::OnRecord, Answer>), Closed, "MutationResult";
    "followUp" => follow_up(Pair<pure::OnRecord, FollowUp>), Closed, "MutationResult";
    "resolve" => resolve(Pair<pure::OnRecord, Resolve>), Closed, "MutationResult";
    "escalate" => escalate(Pair<pure::OnRecord, Close>), Closed, "MutationResult";
    "abandon" => abandon(Pair<pure::OnRecord, Close>), Closed, "MutationResult";
    "monitor" => monitor(pure::Monitor), Closed, "MonitorResult";
    "verify" => verify(pure::Verify), Closed, "VerifyResult";
    "audit" => audit(pure::Audit), Closed, "AuditResult";
    "stats" => stats(pure::Metrics), Closed, "StatsResult";
    "list" => list(Pair<pure::Ledgers, List>), Closed, "ListResult";
    "show" => show(Pair<pure::Ledgers, Target>), Closed, "ShowResult";
    "ready" => ready(pure::Ready), Closed, "ReadyResult";
    "setStatus" => set_status(pure::SetStatus), Closed, "SetStatusResult";
    "parseWorkflow" => parse_workflow(pure::Parse), Closed, "{ workflow: Workflow }";
    "parseConfig" => parse_config(pure::Parse), Closed, "{ config: Config }";
    /// Who is on call at `now` for each rotation of a people.toml (docs/protocol.md §37).
    /// Whom a deciders list names at `now`, rotations applied (docs/protocol.md §37).
    "peopleDeciders" => people_deciders(pure::PeopleDeciders), Closed, "{ deciders: string[] }";
    "peopleList" => people_list(pure::PeopleList), Closed, "{ people: unknown[]; onCall: { role: string; person: string | null; until?: string; next?: string }[] }";
    "defaultWorkflows" => default_workflows(Nothing), Closed, "{ workflows: Record<string, string>; config: string }";
    "renderMarkdown" => render_markdown(pure::Render), Closed, "{ text: string }";
    "renderText" => render_text(Pair<pure::Color, pure::Render>), Closed, "{ text: string }";
    "transitions" => transitions(Nothing), Closed, "{ transitions: Transitions }";
    "errorCodes" => error_codes(Nothing), Closed, "{ codes: { code: ErrorCode; class: ErrorClass }[] }";
    "version" => version(Nothing), Closed, "{ version: string }";
    "signalsParse" => signals_parse(Text), Closed, "SignalsParseResult";
    "extractJson" => extract_json(Text), Closed, "ExtractJsonResult";
    "signalsIngest" => signals_ingest(Pair<pure::OnIngest, Ingest>), Closed, "SignalsIngestResult";
    "resumePrompt" => resume_prompt(pure::Resume), Closed, "ResumePromptResult";
    "delegationMetrics" => delegation_metrics(pure::Metrics), Closed, "DelegationMetricsResult";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_an_unknown_one_suggests_the_nearest() {
        for names in [OPERATION_NAMES, FUNCTION_NAMES] {
            let mut seen = std::collections::BTreeSet::new();
            for n in names {
                assert!(seen.insert(n), "{n} twice");
            }
        }
        assert_eq!(OPERATION_NAMES.len(), OPERATIONS.len());
        assert_eq!(canonical("request"), "ask");
        assert_eq!(
            unknown("delegateAcept", OPERATION_NAMES).to_string(),
            "invalid input: unknown operation 'delegateAcept'; did you mean 'delegateAccept'?"
        );
        assert!(unknown("zzzzzzzz", FUNCTION_NAMES)
            .to_string()
            .contains("known: request, answer"));
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
