//! Routing without a process, for debugging and for the conformance vectors (which every
//! surface plays, the wasm package included): the prompt a record's agent would receive
//! (`route --print-prompt`, op `routePrompt`), and what routing would do with a given run
//! (`route --interpret FILE`, op `routeOutcome`) — the same reading and decision as
//! [`super::route`], on the ledger as it stands, nothing written.

use agentx_clarify_core::routing::{
    decide, interpret, Interpretation, Invocation, Outcome, RunOf, RunResult,
};
use agentx_clarify_core::{ClarifyError, Event, EventType};
use serde_json::{json, Map, Value};

use super::{check, prompt_for, record_json};

use crate::store::Store;

/// What `route` would start, and the prompt.
#[derive(Clone, Debug)]
pub struct PromptView {
    pub id: String,
    pub invocation: Invocation,
    pub prompt: String,
}

impl PromptView {
    /// `route --print-prompt --json`: the prompt and the process it would go to (`{prompt}`
    /// stands for the prompt in the arguments; `env` by name only).
    pub fn to_json(&self) -> Value {
        let inv = &self.invocation;
        let mut command = vec![inv.program.clone()];
        command.extend(inv.args.iter().cloned());
        let mut out = json!({
            "ok": true,
            "id": self.id,
            "prompt": self.prompt,
            "runner": {
                "agent": inv.agent,
                "preset": inv.preset,
                "command": command,
                "promptVia": inv.prompt,
                "personaVia": inv.persona_via,
                "env": inv.env.keys().collect::<Vec<_>>(),
                "cwd": inv.cwd,
                "timeoutSeconds": inv.timeout_seconds,
                "output": inv.output,
            },
        });
        // An A2A runner's token variable, by name (docs/protocol.md §27).
        if let (Some(name), Some(runner)) = (
            &inv.token_env,
            out.get_mut("runner").and_then(Value::as_object_mut),
        ) {
            runner.insert("tokenEnv".into(), json!(name));
        }
        out
    }
}

/// The prompt of record `id` (pending or stale, with a runner). `persona` replaces the
/// persona file's text.
pub fn route_prompt<S: Store>(
    store: &S,
    id: &str,
    persona: Option<&str>,
) -> Result<PromptView, ClarifyError> {
    let config = store.load_runner_config()?;
    let target = check(store, &config, id, persona)?;
    let record = target
        .ledger
        .find(id)
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let prompt = prompt_for(&target.ledger, record, &target.invocation, &config);
    Ok(PromptView {
        id: id.to_owned(),
        invocation: target.invocation,
        prompt,
    })
}

/// A run output given as JSON (`{exit, signal?, timedOut, stdout, stderr, …}`).
pub fn parse_run(value: &Value) -> Result<RunResult, ClarifyError> {
    serde_json::from_value(value.clone())
        .map_err(|e| ClarifyError::input(format!("run output: {e}")))
}

/// What routing `id` would do with `run` at `now`, without writing: `route`'s document
/// without `run` and `monitor`, plus the `interpretation`.
pub fn route_outcome<S: Store + crate::store::Store>(
    store: &S,
    id: &str,
    run: &RunResult,
    now: i64,
) -> Result<Value, ClarifyError> {
    let config = store.load_runner_config()?;
    store.read_statuses()?;
    let workflows = store.load_workflows()?;
    // The persona does not change where the answer is: the file is not read.
    let target = check(store, &config, id, Some(""))?;
    let ledger = &target.ledger;
    let record = ledger
        .find(id)
        .ok_or_else(|| ClarifyError::NotFound { id: id.to_owned() })?;
    let reading = agentx_clarify_core::routing::fit_to_kind(
        interpret(run, &target.invocation.output, config.max_body_chars),
        record,
    );
    let round = record.folded_round();
    // Signed as the routing would sign it, so the preview is what would be written.
    let signers = crate::store::keys::signers(store)?;
    let decision = decide(
        Some(ledger),
        RunOf {
            id,
            round,
            run: &reading,
        },
        &config,
        &workflows,
        now,
        &signers,
    )?;
    let mut events = vec![Event::routing(
        EventType::Routed,
        target.issue,
        record,
        now,
        None,
    )];
    let cause = match &reading {
        Interpretation::AgentError { cause } => {
            events.push(Event::routing(
                EventType::RouteFailed,
                target.issue,
                record,
                now,
                Some(cause.clone()),
            ));
            Some(cause.clone())
        }
        _ => None,
    };
    let after = decision.applied.as_ref().map_or(ledger, |a| &a.ledger);
    events.extend(
        decision
            .applied
            .iter()
            .flat_map(|a| a.events.iter().cloned()),
    );
    let error = (decision.outcome == Outcome::Escalated)
        .then_some(cause)
        .flatten()
        .map(|cause| ClarifyError::AgentError {
            id: id.to_owned(),
            cause,
        });
    let mut out = Map::new();
    out.insert("ok".into(), Value::Bool(error.is_none()));
    if let Some(e) = &error {
        out.insert(
            "error".into(),
            agentx_clarify_core::envelope::error_value(e),
        );
    }
    out.insert("outcome".into(), json!(decision.outcome));
    out.insert("interpretation".into(), json!(reading));
    out.insert(
        "clarification".into(),
        record_json(target.issue, after.find(id)),
    );
    if let Some(asked) = &decision.asked {
        out.insert(
            "askedBack".into(),
            record_json(target.issue, after.find(asked)),
        );
    }
    out.insert("events".into(), json!(events));
    Ok(Value::Object(out))
}

/// The runner that answers for `agent` (its own table or `[agents.default]`), or
/// `NO_RUNNER`: for a caller that routes after asking to refuse before it asks.
pub fn route_runner<S: Store>(store: &S, agent: &str) -> Result<Value, ClarifyError> {
    agentx_clarify_core::names::check_agent(agent)?;
    let config = store.load_runner_config()?;
    let spec = config
        .agents
        .for_agent(agent)
        .ok_or_else(|| ClarifyError::NoRunner {
            agent: agent.to_owned(),
        })?;
    let table = if config.agents.agents.contains_key(agent) {
        agent
    } else {
        agentx_clarify_core::routing::DEFAULT_TABLE
    };
    Ok(json!({
        "ok": true,
        "agent": agent,
        "runner": {
            "table": format!("agents.{table}"),
            "preset": spec.preset,
            "timeoutSeconds": spec.timeout_seconds,
        },
        // `[mcp] max_routes`: how many routings an MCP server runs in the background at once.
        "mcpMaxRoutes": config.mcp_max_routes,
    }))
}
