//! What each preset runs: the documented non-interactive mode of each agent CLI. Every fact
//! here has its source in `docs/runners.md`; change both together.

use serde::Serialize;
use serde_json::{json, Value};

use crate::runners::{AnswerAt, Check, ErrorSignal, OutputSpec, Test};
use crate::runners::{Preset, PromptMode, PROMPT_PLACEHOLDER};

/// Gemini CLI appends its `-p` text to the prompt read from stdin (`<stdin>\n\n<-p text>`):
/// the prompt travels on stdin, and this closes it.
pub const GEMINI_INSTRUCTION: &str =
    "Reply to the clarification request above, following its instructions on how to reply.";

/// How the persona reached the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PersonaVia {
    /// Claude Code `--append-system-prompt`.
    SystemPrompt,
    /// Codex `-c developer_instructions=…`.
    DeveloperInstructions,
    /// Copilot CLI `--agent=<target>`, which loads `.github/agents/<target>.agent.md` itself.
    CustomAgent,
    /// At the head of the prompt: the CLI takes no system prompt (or only as a full
    /// replacement of its own).
    Prompt,
}

/// The parts of a preset's command line that depend on the persona.
pub(crate) struct Line {
    pub program: String,
    pub args: Vec<String>,
    pub persona_via: Option<PersonaVia>,
    /// The persona text the prompt itself must carry.
    pub prompt_persona: Option<String>,
}

impl Preset {
    /// The program a preset runs when `command` does not name one.
    pub fn program(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Gemini => "gemini",
            Preset::Copilot => "copilot",
            Preset::Cursor => "cursor-agent",
            // No program: the runner's url is what is "run".
            Preset::Command | Preset::A2a => "",
        }
    }

    /// How the preset's CLI takes the prompt (`command` runners configure theirs).
    pub fn prompt_mode(self) -> PromptMode {
        match self {
            Preset::Copilot | Preset::Cursor => PromptMode::Arg,
            // An A2A agent gets the prompt as the text of one message (not a process's stdin,
            // but the same whole text).
            Preset::Claude | Preset::Codex | Preset::Gemini | Preset::Command | Preset::A2a => {
                PromptMode::Stdin
            }
        }
    }

    /// Where the preset's CLI puts the answer and how it reports a failure (`command`
    /// runners: see [`crate::runners::AnswerFormat::output`]).
    pub fn output(self) -> OutputSpec {
        let eq = |p: &str, v: Value| Check::new(p, Test::Equals(v));
        let ne = |p: &str, v: Value| Check::new(p, Test::NotEquals(v));
        match self {
            // `{"type":"result","subtype":"success","is_error":false,"result":"…",…}`; an API
            // failure keeps subtype "success" with is_error true and the message in result;
            // error_max_turns / error_during_execution carry no result.
            Preset::Claude | Preset::Cursor => OutputSpec {
                answer: AnswerAt::Json {
                    pointer: "/result".into(),
                },
                errors: vec![
                    ErrorSignal::new(eq("/is_error", json!(true)), Some("/result")),
                    ErrorSignal::new(ne("/subtype", json!("success")), Some("/subtype")),
                ],
            },
            // JSONL events; the answer is the last completed agent_message. A failed turn
            // or a stream error may still exit 0.
            Preset::Codex => OutputSpec {
                answer: AnswerAt::Jsonl {
                    pointer: "/item/text".into(),
                    when: vec![
                        eq("/type", json!("item.completed")),
                        eq("/item/type", json!("agent_message")),
                    ],
                },
                errors: vec![
                    ErrorSignal::new(eq("/type", json!("turn.failed")), Some("/error/message")),
                    ErrorSignal::new(eq("/type", json!("error")), Some("/message")),
                ],
            },
            // `{"response":"…","stats":{…},"error":{"type","message","code"}?}`.
            Preset::Gemini => OutputSpec {
                answer: AnswerAt::Json {
                    pointer: "/response".into(),
                },
                errors: vec![ErrorSignal::new(
                    Check::new("/error", Test::Present),
                    Some("/error/message"),
                )],
            },
            // `-s` prints only the agent's response; failures show in the exit status. An A2A
            // runner reports the task's outcome the same way: the answer text, or an error.
            Preset::Copilot | Preset::Command | Preset::A2a => OutputSpec {
                answer: AnswerAt::Text,
                errors: Vec::new(),
            },
        }
    }

    /// The preset's command line. `command` is the runner's (program and extra arguments;
    /// empty: the preset's program); `persona` the persona text, when there is one.
    pub(crate) fn line(
        self,
        command: &[String],
        target: &str,
        persona: Option<&str>,
        persona_is_default: bool,
    ) -> Line {
        let program = command
            .first()
            .cloned()
            .unwrap_or_else(|| self.program().to_owned());
        let extra = command.get(1..).unwrap_or_default().iter().cloned();
        let fixed = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let mut via = None;
        let mut args = match self {
            Preset::Claude => {
                // Headless Claude Code answers its own AskUserQuestion tool at once with an
                // empty answer, so a routed Claude would "ask" and go on with nothing
                // (anthropics/claude-code #50728): without the tool it asks in its reply,
                // which routing turns into a question back.
                let mut args = fixed(&[
                    "-p",
                    "--output-format",
                    "json",
                    "--disallowedTools",
                    "AskUserQuestion",
                ]);
                if let Some(p) = persona {
                    args.extend(["--append-system-prompt".to_owned(), p.to_owned()]);
                    via = Some(PersonaVia::SystemPrompt);
                }
                args
            }
            Preset::Codex => {
                let mut args = fixed(&["exec", "--json"]);
                if let Some(p) = persona {
                    args.extend([
                        "-c".to_owned(),
                        format!("developer_instructions={}", toml_basic_string(p)),
                    ]);
                    via = Some(PersonaVia::DeveloperInstructions);
                }
                args
            }
            Preset::Gemini => fixed(&["--output-format", "json"]),
            Preset::Copilot => {
                let mut args = fixed(&["-p", PROMPT_PLACEHOLDER, "-s", "--no-ask-user"]);
                if persona.is_some() && persona_is_default {
                    args.push(format!("--agent={target}"));
                    via = Some(PersonaVia::CustomAgent);
                }
                args
            }
            Preset::Cursor => fixed(&["-p", "--output-format", "json", "--mode=ask"]),
            Preset::Command | Preset::A2a => Vec::new(),
        };
        args.extend(extra);
        // Each CLI's prompt goes last: after the extra arguments, so they cannot swallow it.
        match self {
            Preset::Codex => args.push("-".to_owned()),
            Preset::Gemini => args.extend(["-p".to_owned(), GEMINI_INSTRUCTION.to_owned()]),
            Preset::Cursor => args.push(PROMPT_PLACEHOLDER.to_owned()),
            _ => {}
        }
        let prompt_persona = match (persona, via) {
            (Some(p), None) => {
                via = Some(PersonaVia::Prompt);
                Some(p.to_owned())
            }
            _ => None,
        };
        Line {
            program,
            args,
            persona_via: via,
            prompt_persona,
        }
    }
}

/// A TOML basic string: Codex parses the value of `-c key=value` as TOML and would take a
/// persona that is not valid TOML as a bare literal, mangled or not.
fn toml_basic_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persona_strings_are_valid_toml_for_codex() {
        for text in [
            "plain",
            "quotes \" and \\ backslashes",
            "lines\nand\ttabs\r\n",
            "control \u{7f} \u{1b}[31m \u{0}",
            "unicode: é — 漢字 🙂",
            "'''triple''' \"\"\"quotes\"\"\"",
        ] {
            let doc = format!("developer_instructions = {}", toml_basic_string(text));
            let parsed = toml::de::DeTable::parse(&doc).unwrap();
            let value = crate::toml_read::get(parsed.get_ref(), "developer_instructions");
            match value.map(toml::Spanned::get_ref) {
                Some(toml::de::DeValue::String(s)) => assert_eq!(s, text),
                other => panic!("{text:?} read back as {other:?}"),
            }
        }
    }
}
