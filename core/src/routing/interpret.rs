//! What a routed agent's run means (docs/protocol.md §14.2 step 5): an answer, a question asked back, a
//! stop, or an agent error with a short cause. Pure: the run is data (the `runner` crate
//! produces it; a vector or `route --interpret` can give it as JSON), the rules are the
//! runner's [`OutputSpec`]. Nothing here invents text: when no answer can be found, the
//! outcome is an error, never a fallback recorded as the agent's answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::runners::{AnswerAt, ErrorSignal, OutputSpec};
use crate::signals::{extract_json, parse, BlockName, Problem};

/// Longest cause kept (characters); the run log has the whole output.
pub const MAX_CAUSE_CHARS: usize = 300;

/// One finished run, as the interpretation sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RunResult {
    /// Exit status; `None` when a signal ended the program or it never started.
    pub exit: Option<i32>,
    /// The signal that ended it (SIGKILL after a timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// More than the capture limit was written: the middle was dropped.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// The program could not be started (or was lost track of): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spawn_error: Option<String>,
    /// Wall clock, epoch ms (0 when unknown).
    pub started_ms: i64,
    pub ended_ms: i64,
}

/// What the run says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Interpretation {
    /// The agent's answer, exactly as it gave it (surrounding whitespace aside).
    #[serde(rename_all = "camelCase")]
    Answer { answer: String },
    /// A `[CLARIFICATION_NEEDED]` block: the agent needs answers first.
    #[serde(rename_all = "camelCase")]
    AskedBack {
        questions: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// A `[STOP_WORK]` block.
    #[serde(rename_all = "camelCase")]
    Stopped {
        blocker_type: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<String>,
    },
    /// The agent failed; `cause` is one short line.
    #[serde(rename_all = "camelCase")]
    AgentError { cause: String },
}

/// Reads a run by `spec`; an answer longer than `max_body_chars` is an error (never cut).
pub fn interpret(run: &RunResult, spec: &OutputSpec, max_body_chars: u32) -> Interpretation {
    match answer_of(run, spec) {
        Ok(answer) => classify(answer, max_body_chars),
        Err(cause) => Interpretation::AgentError {
            cause: one_line(&cause),
        },
    }
}

/// The answer text (trimmed, not empty), or why there is none.
fn answer_of(run: &RunResult, spec: &OutputSpec) -> Result<String, String> {
    if let Some(why) = &run.spawn_error {
        return Err(why.clone());
    }
    if run.timed_out {
        return Err(String::from("timed out; its process group was killed"));
    }
    if let Some(signal) = run.signal {
        return Err(format!("killed by signal {signal}{}", signal_name(signal)));
    }
    match run.exit {
        Some(0) => {}
        Some(code) => {
            let said = reported_error(&run.stderr, &spec.errors)
                .or_else(|| reported_error(&run.stdout, &spec.errors))
                .or_else(|| last_line(&run.stderr));
            return Err(match said {
                Some(s) => format!("exit status {code}: {s}"),
                None => format!("exit status {code}"),
            });
        }
        None => return Err(String::from("no exit status")),
    }
    if run.stdout_truncated {
        return Err(String::from(
            "its output exceeded the capture limit and was cut, so the answer cannot be trusted",
        ));
    }
    let answer = match &spec.answer {
        AnswerAt::Text => run.stdout.clone(),
        AnswerAt::Json { pointer } => {
            let Some(doc) = extract_json(&run.stdout) else {
                return Err(no_json(
                    run,
                    &format!("a JSON document with the answer at {pointer}"),
                ));
            };
            if let Some(message) = failure(&doc, &spec.errors) {
                return Err(format!("the agent reported an error: {message}"));
            }
            string_at(doc, pointer).ok_or_else(|| no_answer(pointer, "its JSON output"))?
        }
        AnswerAt::Jsonl { pointer, when } => {
            let mut answer = None;
            let mut any_json = false;
            for line in run.stdout.lines() {
                let Ok(value) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                any_json = true;
                if let Some(message) = failure(&value, &spec.errors) {
                    return Err(format!("the agent reported an error: {message}"));
                }
                if when.iter().all(|c| c.passes(&value)) {
                    if let Some(text) = string_at(value, pointer) {
                        answer = Some(text);
                    }
                }
            }
            if !any_json {
                return Err(no_json(run, "JSON lines"));
            }
            answer.ok_or_else(|| no_answer(pointer, "any of its JSON lines"))?
        }
    };
    let trimmed = answer.trim();
    if trimmed.is_empty() {
        Err(String::from("empty answer"))
    } else if trimmed.len() == answer.len() {
        Ok(answer)
    } else {
        Ok(trimmed.to_owned())
    }
}

/// The string at `pointer`, moved out of `doc`.
fn string_at(mut doc: Value, pointer: &str) -> Option<String> {
    match doc.pointer_mut(pointer).map(Value::take) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn no_answer(pointer: &str, place: &str) -> String {
    format!("no answer (text at {pointer}) in {place}")
}

fn no_json(run: &RunResult, wanted: &str) -> String {
    if run.stdout.trim().is_empty() {
        format!("no output (expected {wanted})")
    } else {
        format!("its output holds no JSON (expected {wanted})")
    }
}

/// The message of the first error signal `value` shows.
fn failure(value: &Value, errors: &[ErrorSignal]) -> Option<String> {
    errors.iter().find(|e| e.check.passes(value)).map(|e| {
        let message = e.message.as_deref().and_then(|p| value.pointer(p));
        match message {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | Some(Value::Null) | None => {
                format!("{} in its output", e.check.pointer)
            }
            Some(other) => other.to_string(),
        }
    })
}

/// An error the output reports by the runner's signals (Gemini prints its JSON error on
/// stderr before exiting non-zero).
fn reported_error(text: &str, errors: &[ErrorSignal]) -> Option<String> {
    if errors.is_empty() || text.trim().is_empty() {
        return None;
    }
    let doc = extract_json(text)?;
    failure(&doc, errors)
}

fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

fn classify(answer: String, max_body_chars: u32) -> Interpretation {
    // docs/protocol.md §31: a signal block inside a fenced code block is quoted text (an agent explaining
    // the protocol is not stopping); the answer keeps it verbatim.
    let parsed = parse(&outside_fences(&answer));
    if let Some(block) = parsed.first(BlockName::ClarificationNeeded) {
        return match block.clarification_needed() {
            Ok(b) => Interpretation::AskedBack {
                questions: b.questions,
                to: b.to,
            },
            Err(problems) => malformed(BlockName::ClarificationNeeded, &problems),
        };
    }
    if let Some(block) = parsed.first(BlockName::StopWork) {
        return match block.stop_work() {
            Ok(b) => Interpretation::Stopped {
                blocker_type: b.blocker_type,
                details: b.details,
            },
            Err(problems) => malformed(BlockName::StopWork, &problems),
        };
    }
    let chars = answer.chars().count();
    if chars > max_body_chars as usize {
        return Interpretation::AgentError {
            cause: format!("answer too long: {chars} characters, at most {max_body_chars} allowed"),
        };
    }
    Interpretation::Answer { answer }
}

/// `text` with every line of a fenced code block (CommonMark: a line opening with three or
/// more backticks or tildes, closed by a like fence at least as long) and its fences blanked,
/// so the block parser sees only what is outside them; line numbers stay as they were.
fn outside_fences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let lead = body.trim_start_matches(' ');
        let fence = lead
            .chars()
            .next()
            .filter(|c| matches!(c, '`' | '~') && body.len() - lead.len() < 4)
            .map(|c| (c, lead.chars().take_while(|x| *x == c).count()))
            .filter(|(_, n)| *n >= 3);
        let inside = match (open, fence) {
            (None, Some(f)) => {
                open = Some(f);
                true
            }
            (Some((c, n)), Some((fc, fnum)))
                if fc == c && fnum >= n && lead.trim_start_matches(c).trim().is_empty() =>
            {
                open = None;
                true
            }
            (Some(_), _) => true,
            (None, None) => false,
        };
        if inside {
            out.push_str(&line[body.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn malformed(name: BlockName, problems: &[Problem]) -> Interpretation {
    let first = problems
        .first()
        .map(|p| format!(": line {}: {}", p.line, p.message))
        .unwrap_or_default();
    Interpretation::AgentError {
        cause: one_line(&format!("malformed [{name}] block{first}")),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// One line of at most [`MAX_CAUSE_CHARS`] characters: line breaks and control characters
/// become spaces, runs of spaces one.
pub(super) fn one_line(text: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        if count == MAX_CAUSE_CHARS - 1 {
            out.push('…');
            return out;
        }
        out.push(c);
        count += 1;
    }
    out.trim_end().to_owned()
}
