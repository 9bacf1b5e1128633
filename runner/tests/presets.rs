//! Every preset end to end: a runner table → the core's invocation and prompt → the example
//! CLI of `examples/agents/` (run with the preset's exact command line, only the program path
//! replaced) → the answer found where the preset says it is, the failures where it says they
//! show, the persona delivered the way the CLI takes it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use agentx_clarify_core::ledger::Ledger;
use agentx_clarify_core::routing::{
    build_prompt, AnswerAt, Invocation, OutputSpec, PersonaVia, PromptInput, GEMINI_INSTRUCTION,
};
use agentx_clarify_core::Config;
use agentx_clarify_runner::{run, Exit, RunOutput, Spec};
use serde_json::{json, Value};

const PERSONA: &str =
    "---\nname: architect\ndescription: Designs the system\n---\nYou are the architect.\nCite ADRs.\n";
const PERSONA_BODY: &str = "You are the architect.\nCite ADRs.";
const CACHE_ANSWER: &str = "Redis, with LRU eviction and a 15-minute TTL (ADR-7).";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ledger() -> Ledger {
    let v = json!({"issueNumber": 42, "workflow": "feature", "clarifications": [{
        "id": "CLR-42-001", "from": "engineer", "to": "architect", "topic": "Cache layer",
        "blocking": true, "status": "pending", "round": 1, "maxRounds": 3, "slaMinutes": 30,
        "retries": 0, "resolvedAt": null,
        "thread": [{"round": 1, "from": "engineer", "type": "question",
                    "body": "Redis or in-process?", "timestamp": "2026-11-22T10:00:00.000Z"}]
    }]});
    Ledger::from_value("issue-42.json", &v, None).unwrap()
}

struct Routed {
    invocation: Invocation,
    prompt: String,
    out: RunOutput,
    record: Value,
}

/// Routes CLR-42-001 to the architect through `[agents.architect]` = `table`.
fn route(table: &str, persona: Option<&str>, env: &[(&str, &str)]) -> Routed {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.json");
    let mut text = format!("[agents.architect]\n{table}\nenv = {{ AGENT_RECORD = {record:?}");
    for (k, v) in env {
        text.push_str(&format!(", {k} = {v:?}"));
    }
    text.push_str(" }\n");
    let config = Config::parse_with_runners("config.toml", &text).unwrap();
    let invocation = Invocation::resolve(&config.agents, "architect", persona).unwrap();
    let l = ledger();
    let prompt = build_prompt(&PromptInput {
        record: l.find("CLR-42-001").unwrap(),
        issue: l.issue_number,
        workflow: l.workflow.as_deref(),
        persona: invocation.prompt_persona.as_deref(),
        max_answer_chars: config.max_body_chars,
        replies: &[],
    });
    let out = run(&Spec::for_invocation(&invocation, &prompt, &root())).unwrap();
    let record = std::fs::read_to_string(&record)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    Routed {
        invocation,
        prompt,
        out,
        record,
    }
}

/// Reads stdout by the preset's rules, for a whole JSON document or JSON lines (tests only:
/// the product's interpretation, with the extraction of JSON from chatter, is the core's).
fn locate(spec: &OutputSpec, stdout: &str) -> Result<String, String> {
    let failed = |v: &Value| {
        spec.errors.iter().find(|e| e.check.passes(v)).map(|e| {
            e.message
                .as_deref()
                .and_then(|p| v.pointer(p))
                .map_or_else(|| e.check.pointer.clone(), ToString::to_string)
        })
    };
    match &spec.answer {
        AnswerAt::Text => Ok(stdout.trim_end().to_owned()),
        AnswerAt::Json { pointer } => {
            let v: Value = serde_json::from_str(stdout.trim()).map_err(|e| e.to_string())?;
            if let Some(message) = failed(&v) {
                return Err(message);
            }
            v.pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("no string at {pointer}"))
        }
        AnswerAt::Jsonl { pointer, when } => {
            let lines: Vec<Value> = stdout
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if let Some(message) = lines.iter().find_map(failed) {
                return Err(message);
            }
            lines
                .iter()
                .rev()
                .filter(|v| when.iter().all(|c| c.passes(v)))
                .find_map(|v| v.pointer(pointer).and_then(Value::as_str))
                .map(str::to_owned)
                .ok_or_else(|| format!("no line with {pointer}"))
        }
    }
}

fn answer(r: &Routed) -> Result<String, String> {
    locate(&r.invocation.output, &r.out.stdout_text())
}

#[test]
fn claude_answers_in_result_and_takes_the_persona_as_system_prompt() {
    let r = route(
        "preset = \"claude\"\ncommand = [\"examples/agents/claude\"]",
        Some(PERSONA),
        &[],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
    assert_eq!(r.record["system"], PERSONA_BODY);
    assert_eq!(
        r.record["prompt"],
        r.prompt.as_str(),
        "the prompt came on stdin"
    );
    assert_eq!(
        r.record["args"],
        json!([
            "-p",
            "--output-format",
            "json",
            "--disallowedTools",
            "AskUserQuestion",
            "--append-system-prompt",
            PERSONA_BODY
        ])
    );
    assert!(!r.prompt.contains("# Persona"));
}

#[test]
fn claude_reports_an_api_error_with_is_error() {
    let r = route(
        "preset = \"claude\"\ncommand = [\"examples/agents/claude\"]",
        None,
        &[("AGENT_MODE", "error"), ("AGENT_EXIT", "0")],
    );
    assert_eq!(r.out.exit, Exit::Code(0), "the flag alone must reveal it");
    let e = answer(&r).unwrap_err();
    assert!(e.contains("API Error: 529"), "{e}");
}

#[test]
fn codex_answers_in_the_last_agent_message_with_developer_instructions() {
    let r = route(
        "preset = \"codex\"\ncommand = [\"examples/agents/codex\", \"-m\", \"gpt-5\"]",
        Some(PERSONA),
        &[],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
    assert_eq!(
        r.invocation.persona_via,
        Some(PersonaVia::DeveloperInstructions)
    );
    assert_eq!(
        r.record["system"], "\"You are the architect.\\nCite ADRs.\"",
        "a TOML string, as codex parses -c values"
    );
    assert_eq!(r.record["prompt"], r.prompt.as_str());
    assert_eq!(r.record["args"][0], "exec");
    assert_eq!(r.record["args"].as_array().unwrap().last().unwrap(), "-");
}

#[test]
fn codex_reports_a_failed_turn_even_with_exit_status_0() {
    let r = route(
        "preset = \"codex\"\ncommand = [\"examples/agents/codex\"]",
        None,
        &[("AGENT_MODE", "error"), ("AGENT_EXIT", "0")],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    let e = answer(&r).unwrap_err();
    assert!(e.contains("stream disconnected"), "{e}");
}

#[test]
fn codex_asking_back_carries_the_block_in_its_message() {
    let r = route(
        "preset = \"codex\"\ncommand = [\"examples/agents/codex\"]",
        None,
        &[("AGENT_MODE", "ask"), ("AGENT_ASK_TO", "product-manager")],
    );
    let text = answer(&r).unwrap();
    assert!(
        text.starts_with(
            "[CLARIFICATION_NEEDED]\nagent_id: architect\nblocked_at: Cache layer\nquestions:\n- "
        ),
        "{text}"
    );
    assert!(
        text.ends_with("to: product-manager\n[/CLARIFICATION_NEEDED]"),
        "{text}"
    );
}

#[test]
fn gemini_answers_in_response_with_the_persona_in_the_prompt() {
    let r = route(
        "preset = \"gemini\"\ncommand = [\"examples/agents/gemini\"]",
        Some(PERSONA),
        &[],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
    assert!(r
        .prompt
        .starts_with("# Persona\n\nYou are the architect.\nCite ADRs.\n\n"));
    assert_eq!(
        r.record["prompt"],
        format!("{}\n\n{GEMINI_INSTRUCTION}", r.prompt),
        "stdin, then the -p text"
    );
    assert_eq!(r.record["system"], "");
}

#[test]
fn gemini_fails_with_a_non_zero_exit_and_its_error_on_stderr() {
    let r = route(
        "preset = \"gemini\"\ncommand = [\"examples/agents/gemini\"]",
        None,
        &[("AGENT_MODE", "error")],
    );
    assert_eq!(r.out.exit, Exit::Code(41));
    assert_eq!(r.out.stdout, b"");
    let e: Value = serde_json::from_str(r.out.stderr_text().trim()).unwrap();
    assert_eq!(e["error"]["code"], 41);
}

#[test]
fn copilot_prints_the_answer_and_loads_the_custom_agent() {
    let r = route(
        "preset = \"copilot\"\ncommand = [\"examples/agents/copilot\"]",
        Some(PERSONA),
        &[],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
    assert_eq!(r.record["system"], "architect", "--agent=architect");
    assert_eq!(
        r.record["prompt"],
        r.prompt.as_str(),
        "the prompt was -p's value"
    );
    assert_eq!(r.record["args"][1], r.prompt.as_str());
}

#[test]
fn copilot_fails_with_its_exit_status() {
    let r = route(
        "preset = \"copilot\"\ncommand = [\"examples/agents/copilot\"]",
        None,
        &[("AGENT_MODE", "error")],
    );
    assert_eq!(r.out.exit, Exit::Code(1));
    assert!(r.out.stderr_text().contains("authentication failed"));
}

#[test]
fn cursor_answers_in_result_read_only_with_the_prompt_last() {
    let r = route(
        "preset = \"cursor\"\ncommand = [\"examples/agents/cursor-agent\"]",
        Some(PERSONA),
        &[],
    );
    assert_eq!(r.out.exit, Exit::Code(0));
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
    assert_eq!(r.record["args"][3], "--mode=ask");
    assert_eq!(r.record["prompt"], r.prompt.as_str());
    assert!(r.prompt.starts_with("# Persona\n"));
}

#[test]
fn a_command_runner_takes_the_prompt_as_an_argument() {
    let r = route(
        "command = [\"examples/agents/plain\", \"{prompt}\"]\nprompt = \"arg\"",
        None,
        &[("AGENT_ANSWER", "yes")],
    );
    assert_eq!(answer(&r).as_deref(), Ok("yes"));
    assert_eq!(r.record["args"], json!([r.prompt]));
}

#[test]
fn a_command_runner_answering_in_json_lines_is_read_at_its_pointer() {
    let r = route(
        "command = [\"examples/agents/codex\", \"exec\", \"--json\"]\nanswer = \"jsonl:/item/text\"",
        None,
        &[],
    );
    // Without the preset's filter the last line with the pointer wins: the agent message.
    assert_eq!(answer(&r).as_deref(), Ok(CACHE_ANSWER));
}

#[test]
fn the_remaining_example_behaviours_print_what_their_names_say() {
    let stop = route(
        "preset = \"claude\"\ncommand = [\"examples/agents/claude\"]",
        None,
        &[("AGENT_MODE", "stop")],
    );
    let text = answer(&stop).unwrap();
    assert!(
        text.contains("\n[STOP_WORK]\nagent_id: architect\nblocker_type: missing_access\n"),
        "{text}"
    );
    assert!(
        text.contains("blocked_work: answering CLR-42-001\n"),
        "{text}"
    );
    let fenced = route(
        "command = [\"examples/agents/plain\"]\nanswer = \"json:/answer\"",
        None,
        &[("AGENT_MODE", "fenced")],
    );
    assert!(fenced.out.stdout_text().ends_with(&format!(
        "```json\n{{\"answer\": \"{CACHE_ANSWER}\"}}\n```\n"
    )));
    let empty = route(
        "preset = \"cursor\"\ncommand = [\"examples/agents/cursor-agent\"]",
        None,
        &[("AGENT_MODE", "empty")],
    );
    assert_eq!(answer(&empty).as_deref(), Ok(""));
}
