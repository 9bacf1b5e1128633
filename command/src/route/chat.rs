//! Routing through a chat model the shell holds (VS Code's `vscode.lm`, docs/protocol.md §14.3). The hub
//! has no process to start, so the routing is split around the shell's model request:
//! [`chat_prompt`] (the core's prompt with the target's persona; nothing written) and
//! [`chat_reply`] (the reply read as a runner's text output, then the same decision under the
//! ledger lock as [`super::route`], statuses and follow-up monitor).
//!
//! No routing lease: only a target without a runner is routed this way and `route --all`
//! never picks one; when another window answers first, the decision re-reads the record under
//! the lock and the reply is `superseded`. A shell that gives up (cancellation) calls nothing
//! and the record stays pending for the monitor.

use agentx_clarify_core::names::AGENT_X;
use agentx_clarify_core::routing::{
    build_prompt, default_persona_path, interpret, persona_text, replies, AnswerAt, Interpretation,
    OutputSpec, PromptInput, RunResult,
};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use super::{agent_error, decide_locked, find, ledger_of, routable, run_events, Routed};
use crate::monitor::{monitor_after, MonitorRun};
use crate::mutation::finish;
use crate::store::Store;

/// What the chat model said: its reply text, or why there is none (no model, a request
/// error, an empty stream).
#[derive(Clone, Debug)]
pub enum ChatReply {
    Text(String),
    Failed(String),
}

/// `routeChatPrompt {id, persona?}`: the prompt for the target of pending or stale record
/// `id`. The persona is `persona` when given, else `.github/agents/<to>.agent.md` when it
/// exists (front matter dropped). `round` goes back with the reply.
pub fn chat_prompt<S: Store>(
    store: &S,
    id: &str,
    persona: Option<&str>,
) -> Result<Value, ClarifyError> {
    let config = store.load_runner_config()?;
    let (issue, ledger) = ledger_of(store, id)?;
    let record = find(&ledger, id)?;
    routable(record)?;
    let (file, text) = match persona {
        Some(text) => (None, Some(text.to_owned())),
        None => {
            let path = default_persona_path(&record.to);
            let text = store.read_persona(&path)?;
            (text.as_ref().map(|_| path), text)
        }
    };
    let asked = replies(&ledger, id);
    let prompt = build_prompt(&PromptInput {
        record,
        issue,
        workflow: ledger.workflow.as_deref(),
        persona: text.as_deref().and_then(persona_text),
        max_answer_chars: config.max_body_chars,
        replies: &asked,
    });
    Ok(json!({
        "ok": true,
        "id": id,
        "issueNumber": issue,
        "from": record.from,
        "to": record.to,
        "round": record.folded_round(),
        "personaFile": file,
        "prompt": prompt,
    }))
}

/// How a reply reads: as a runner whose whole stdout is the answer (`answer = "text"`), so
/// an empty reply, an oversized one, a `[CLARIFICATION_NEEDED]` or `[STOP_WORK]` block mean
/// exactly what they mean from a CLI.
fn reading(reply: &ChatReply, max_body_chars: u32) -> Interpretation {
    let run = match reply {
        ChatReply::Text(text) => RunResult {
            exit: Some(0),
            stdout: text.clone(),
            ..RunResult::default()
        },
        ChatReply::Failed(cause) => RunResult {
            spawn_error: Some(format!("the chat model failed: {cause}")),
            ..RunResult::default()
        },
    };
    let text = OutputSpec {
        answer: AnswerAt::Text,
        errors: Vec::new(),
    };
    interpret(&run, &text, max_body_chars)
}

/// `routeChatReply {id, round, reply | error, model?}`: records what the chat model replied
/// to the prompt of round `round` of `id` (docs/protocol.md §14.2 steps 5–7). `model` names the model
/// in the output's `run`.
pub fn chat_reply<S: Store>(
    store: &S,
    id: &str,
    round: u32,
    reply: &ChatReply,
    model: Option<&str>,
    now: i64,
) -> Result<Routed, ClarifyError> {
    let config = store.load_runner_config()?;
    store.read_statuses()?;
    let workflows = store.load_workflows()?;
    let (issue, ledger) = ledger_of(store, id)?;
    let record = find(&ledger, id)?;
    let reading =
        agentx_clarify_core::routing::fit_to_kind(reading(reply, config.max_body_chars), record);
    let (mut events, cause) = run_events(issue, record, &reading, now, now);
    let to = record.to.clone();
    let signers = crate::store::keys::signers_for(store, &[to.as_str()])?;
    let rules = super::Rules {
        config: &config,
        workflows: &workflows,
        signers: &signers,
    };
    let decision = decide_locked(store, rules, id, round, &reading, now)?;
    let mut warnings = Vec::new();
    let monitor = match decision.applied {
        Some(applied) => {
            let m = finish(store, &config, now, applied, AGENT_X, &signers)?;
            warnings.extend(m.warnings);
            events.extend(m.events);
            m.monitor
        }
        None => {
            let m: MonitorRun = monitor_after(store, &config, now, Some(issue), &mut warnings);
            events.extend(m.events.iter().cloned());
            m
        }
    };
    let after = store.read_ledger(issue).unwrap_or_else(|e| {
        warnings.push(format!(
            "the routing was written, but reading it back failed: {e}"
        ));
        None
    });
    let find = |id: &str| after.as_ref().and_then(|l| l.find(id)).cloned();
    Ok(Routed {
        issue,
        id: id.to_owned(),
        outcome: decision.outcome,
        clarification: find(id),
        asked_back: decision.asked.as_deref().and_then(find),
        events,
        run: json!({"agent": to, "via": "chat-model", "model": model, "interpretation": reading}),
        monitor,
        error: agent_error(id, decision.outcome, cause),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemStore;
    use agentx_clarify_core::routing::Outcome;

    const NOW: i64 = 1_800_000_000_000;

    fn workspace(persona: Option<&str>) -> MemStore {
        let store = MemStore::new();
        crate::json::call(&store, "init", &json!({}), NOW);
        if let Some(text) = persona {
            store.put(
                ".github/agents/architect.agent.md",
                Some(text.as_bytes().to_vec()),
            );
        }
        let asked = crate::json::call(
            &store,
            "ask",
            &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
                    "topic": "Cache layer", "question": "Redis or in-process?"}),
            NOW,
        );
        assert_eq!(asked["ok"], true, "{asked}");
        store
    }

    fn reply(store: &MemStore, reply: ChatReply) -> Routed {
        chat_reply(
            store,
            "CLR-42-001",
            1,
            &reply,
            Some("test-model"),
            NOW + 1000,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_prompt_carries_the_persona_file_without_its_front_matter_and_the_question() {
        let store = workspace(Some(
            "---\nname: architect\n---\nYou are the ARCHITECT persona.",
        ));
        let p = chat_prompt(&store, "CLR-42-001", None).unwrap_or_else(|e| panic!("{e}"));
        let prompt = p["prompt"].as_str().unwrap_or_default();
        assert!(
            prompt.contains("You are the ARCHITECT persona."),
            "{prompt}"
        );
        assert!(!prompt.contains("name: architect"), "{prompt}");
        assert!(prompt.contains("Redis or in-process?"), "{prompt}");
        assert_eq!(p["personaFile"], ".github/agents/architect.agent.md");
        assert_eq!(p["round"], 1);
        assert_eq!(p["to"], "architect");
    }

    #[test]
    fn no_persona_file_is_no_persona_and_a_given_persona_replaces_it() {
        let store = workspace(None);
        let p = chat_prompt(&store, "CLR-42-001", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p["personaFile"], Value::Null);
        let given = chat_prompt(&store, "CLR-42-001", Some("Speak as the GIVEN persona."))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(given["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("Speak as the GIVEN persona.")));
    }

    #[test]
    fn an_answer_is_written_by_the_target() {
        let store = workspace(None);
        let r = reply(&store, ChatReply::Text("  Redis, see ADR-7.\n".into()));
        assert_eq!(r.outcome, Outcome::Answered);
        assert!(r.error.is_none());
        let doc = r.to_json();
        assert_eq!(doc["clarification"]["status"], "answered");
        let thread = doc["clarification"]["thread"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let last = thread.last().cloned().unwrap_or_default();
        assert_eq!(last["from"], "architect");
        assert_eq!(last["body"], "Redis, see ADR-7.");
        assert_eq!(doc["run"]["via"], "chat-model");
        assert_eq!(doc["run"]["model"], "test-model");
        // The record is no longer routable: a second prompt is refused.
        assert!(matches!(
            chat_prompt(&store, "CLR-42-001", None),
            Err(ClarifyError::InvalidTransition { .. })
        ));
    }

    #[test]
    fn a_question_asked_back_becomes_a_request_the_scope_allows() {
        let store = workspace(None);
        let text = "Before I answer:\n[CLARIFICATION_NEEDED]\nagent_id: architect\nquestions:\n- Which SLA?\nto: product-manager\n[/CLARIFICATION_NEEDED]\n";
        let r = reply(&store, ChatReply::Text(text.into()));
        assert_eq!(r.outcome, Outcome::AskedBack);
        let asked = r
            .asked_back
            .unwrap_or_else(|| panic!("no record asked back"));
        assert_eq!(asked.from, "architect");
        assert_eq!(asked.to, "product-manager");
    }

    #[test]
    fn a_stop_and_a_model_failure_escalate_and_only_the_failure_is_an_agent_error() {
        let store = workspace(None);
        let stop = "[STOP_WORK]\nagent_id: architect\nblocker_type: missing_context\ndetails: no ADR\n[/STOP_WORK]\n";
        let r = reply(&store, ChatReply::Text(stop.into()));
        assert_eq!(r.outcome, Outcome::Escalated);
        assert!(r.error.is_none());

        let store = workspace(None);
        let r = reply(&store, ChatReply::Failed("rate limited".into()));
        assert_eq!(r.outcome, Outcome::Escalated);
        let err = r.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("the chat model failed: rate limited"), "{err}");
        assert_eq!(r.to_json()["clarification"]["status"], "escalated");
    }

    #[test]
    fn an_empty_reply_is_an_agent_error_never_an_answer() {
        let store = workspace(None);
        let r = reply(&store, ChatReply::Text("   \n".into()));
        assert_eq!(r.outcome, Outcome::Escalated);
        assert!(r.error.is_some());
    }

    #[test]
    fn a_reply_for_an_older_round_is_superseded_and_writes_nothing() {
        let store = workspace(None);
        let _ = reply(&store, ChatReply::Text("Redis.".into()));
        let before = store.files();
        let late = reply(&store, ChatReply::Text("In-process.".into()));
        assert_eq!(late.outcome, Outcome::Superseded);
        assert_eq!(
            store
                .files()
                .get(".agentx/state/clarifications/issue-42.json"),
            before.get(".agentx/state/clarifications/issue-42.json")
        );
    }
}
