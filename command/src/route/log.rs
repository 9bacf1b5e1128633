//! The run log (docs/protocol.md §14.2 step 4): `.agentx/state/runs/<id>.r<round>.<n>.json` with the
//! command, the times, how it ended, stdout, stderr and the outcome. The `env` of a runner is
//! logged by name only: its values may be secrets.

use agentx_clarify_core::routing::{Interpretation, Invocation, Outcome, RunResult};
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::store::Store;

/// Everything one log holds.
pub(super) struct RunLog<'a> {
    pub issue: u32,
    pub id: &'a str,
    pub round: u32,
    pub invocation: &'a Invocation,
    pub prompt: &'a str,
    pub result: &'a RunResult,
    pub reading: &'a Interpretation,
    /// The outcome, or why the decision could not be written.
    pub outcome: Result<Outcome, String>,
}

/// The program and its arguments as started (the prompt in place for `prompt = arg`).
pub(super) fn command(invocation: &Invocation, prompt: &str) -> Vec<String> {
    let mut argv = vec![invocation.program.clone()];
    argv.extend(invocation.argv(prompt));
    argv
}

fn time(ms: i64) -> Value {
    if ms > 0 {
        Value::from(format_ms(ms))
    } else {
        Value::Null
    }
}

/// Writes the log; its path, or why it could not be written (the routing stands either way).
pub(super) fn write<S: Store>(store: &S, log: &RunLog<'_>) -> Result<String, ClarifyError> {
    let inv = log.invocation;
    let r = log.result;
    let (outcome, error) = match &log.outcome {
        Ok(o) => (Value::from(o.as_str()), Value::Null),
        Err(e) => (Value::Null, Value::from(e.as_str())),
    };
    let doc = json!({
        "id": log.id,
        "issueNumber": log.issue,
        "round": log.round,
        "agent": inv.agent,
        "preset": inv.preset,
        "command": command(inv, log.prompt),
        "stdin": inv.stdin(log.prompt).is_some(),
        "prompt": log.prompt,
        "cwd": inv.cwd,
        "env": inv.env.keys().collect::<Vec<_>>(),
        "timeoutSeconds": inv.timeout_seconds,
        "start": time(r.started_ms),
        "end": time(r.ended_ms),
        "exit": r.exit,
        "signal": r.signal,
        "timedOut": r.timed_out,
        "spawnError": r.spawn_error,
        "stdout": r.stdout,
        "stderr": r.stderr,
        "stdoutTruncated": r.stdout_truncated,
        "stderrTruncated": r.stderr_truncated,
        "interpretation": log.reading,
        "outcome": outcome,
        "error": error,
    });
    store.write_run_log(log.id, log.round, &doc)
}

/// The `run` of a routing's output: the log has the rest.
pub(super) fn summary(
    invocation: &Invocation,
    result: &RunResult,
    reading: &Interpretation,
    logged: &Result<String, ClarifyError>,
) -> Value {
    let mut run = json!({
        "agent": invocation.agent,
        "preset": invocation.preset,
        "program": invocation.program,
        "exit": result.exit,
        "signal": result.signal,
        "timedOut": result.timed_out,
        "startedMs": result.started_ms,
        "endedMs": result.ended_ms,
        "durationMs": result.ended_ms.saturating_sub(result.started_ms).max(0),
        "interpretation": reading,
    });
    if let Value::Object(m) = &mut run {
        match logged {
            Ok(path) => {
                m.insert("log".into(), Value::from(path.as_str()));
            }
            Err(e) => {
                m.insert("log".into(), Value::Null);
                m.insert("logError".into(), Value::from(e.to_string()));
            }
        }
    }
    run
}
