//! From a runner table to the exact process to start: program, arguments, where the prompt
//! goes, environment, directory, time limit, and where the answer will be.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::routing::presets::PersonaVia;
use crate::runners::OutputSpec;
use crate::runners::{Preset, PromptMode, RunnerSpec, Runners, PROMPT_PLACEHOLDER};

/// One run of a runner, before the prompt is known. Bind the prompt with [`Invocation::argv`]
/// and [`Invocation::stdin`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    /// The agent being asked.
    pub agent: String,
    pub preset: Preset,
    /// As configured: a bare name is looked up on `PATH`; a path with a `/` is relative to
    /// the workspace root.
    pub program: String,
    /// Arguments; with `prompt = arg`, `{prompt}` in them stands for the prompt.
    pub args: Vec<String>,
    pub prompt: PromptMode,
    /// Added to (or replacing) the hub's own environment.
    pub env: BTreeMap<String, String>,
    /// Relative to the workspace root.
    pub cwd: String,
    pub timeout_seconds: u32,
    /// Where the answer is and how a failure shows.
    pub output: OutputSpec,
    /// How the persona reached the agent (`None`: no persona).
    pub persona_via: Option<PersonaVia>,
    /// Persona text the prompt must carry itself (for CLIs without a system-prompt channel);
    /// pass it to [`crate::routing::PromptInput::persona`].
    pub prompt_persona: Option<String>,
    /// Preset `a2a`: the environment variable holding the agent's bearer token (the
    /// agent's base URL is `program`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// Preset `a2a`: origins besides the base URL's that the card may name for its endpoint.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_card_origins: Vec<String>,
}

impl Invocation {
    /// The invocation that asks `target`, or `None` when neither `[agents.<target>]` nor
    /// `[agents.default]` exists (`NO_RUNNER`). `persona_file` is the content of the runner's
    /// persona file ([`RunnerSpec::persona_file`]) when it exists.
    pub fn resolve(runners: &Runners, target: &str, persona_file: Option<&str>) -> Option<Self> {
        runners
            .for_agent(target)
            .map(|spec| Invocation::new(spec, target, persona_file))
    }

    /// The invocation of one runner spec for `target`.
    pub fn new(spec: &RunnerSpec, target: &str, persona_file: Option<&str>) -> Self {
        let persona = persona_file.and_then(persona_text);
        let (program, args, prompt, output, persona_via, prompt_persona) = match spec.preset {
            Preset::Command => {
                let mut command = spec.command.iter().cloned();
                (
                    command.next().unwrap_or_default(),
                    command.collect(),
                    spec.prompt.unwrap_or(PromptMode::Stdin),
                    spec.answer
                        .clone()
                        .unwrap_or(crate::runners::AnswerFormat::Text)
                        .output(),
                    persona.map(|_| PersonaVia::Prompt),
                    persona.map(str::to_owned),
                )
            }
            preset => {
                let line = preset.line(
                    &spec.command,
                    target,
                    persona,
                    spec.persona_is_default(target),
                );
                (
                    line.program,
                    line.args,
                    preset.prompt_mode(),
                    preset.output(),
                    line.persona_via,
                    line.prompt_persona,
                )
            }
        };
        // An A2A agent is reached at its URL; that is what a run "starts".
        let program = match (&spec.url, spec.preset) {
            (Some(url), Preset::A2a) => url.clone(),
            _ => program,
        };
        Invocation {
            agent: target.to_owned(),
            preset: spec.preset,
            program,
            args,
            prompt,
            env: spec.env.clone(),
            cwd: spec.cwd.clone(),
            timeout_seconds: spec.timeout_seconds,
            output,
            persona_via,
            prompt_persona,
            token_env: spec.token_env.clone(),
            allow_card_origins: spec.allow_card_origins.clone(),
        }
    }

    /// The arguments with the prompt in place (`prompt = arg`); unchanged for stdin.
    pub fn argv(&self, prompt: &str) -> Vec<String> {
        match self.prompt {
            PromptMode::Stdin => self.args.clone(),
            PromptMode::Arg => self
                .args
                .iter()
                .map(|a| a.replace(PROMPT_PLACEHOLDER, prompt))
                .collect(),
        }
    }

    /// What to write to the program's standard input (`None`: it gets none).
    pub fn stdin<'p>(&self, prompt: &'p str) -> Option<&'p str> {
        (self.prompt == PromptMode::Stdin).then_some(prompt)
    }
}

/// The persona in a persona file: its body, without the YAML front matter that Copilot's
/// `.agent.md` files open with (name, description, tools: metadata, not instructions).
/// `None` when nothing is left.
pub fn persona_text(file: &str) -> Option<&str> {
    let text = file.strip_prefix('\u{feff}').unwrap_or(file);
    let body = front_matter_end(text).map_or(text, |end| text.get(end..).unwrap_or(""));
    let body = body.trim();
    (!body.is_empty()).then_some(body)
}

/// The byte offset just after a closing `---` line, when `text` opens with a `---` line.
fn front_matter_end(text: &str) -> Option<usize> {
    let first = text.lines().next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len();
        if i > 0 && line.trim_end() == "---" {
            return Some(offset);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::runners::{AnswerAt, Test};

    fn runners(text: &str) -> Runners {
        Config::parse_with_runners("config.toml", text)
            .unwrap()
            .agents
    }

    fn resolve(text: &str, target: &str, persona: Option<&str>) -> Invocation {
        Invocation::resolve(&runners(text), target, persona).unwrap()
    }

    const PERSONA: &str = "---\nname: architect\ndescription: designs\ntools: ['read']\n---\n\nYou are the architect.\nKeep ADRs current.\n";

    #[test]
    fn claude_takes_the_persona_as_appended_system_prompt() {
        let inv = resolve(
            "[agents.architect]\npreset = \"claude\"\n",
            "architect",
            Some(PERSONA),
        );
        assert_eq!(inv.program, "claude");
        assert_eq!(
            inv.argv("ignored"),
            [
                "-p",
                "--output-format",
                "json",
                "--disallowedTools",
                "AskUserQuestion",
                "--append-system-prompt",
                "You are the architect.\nKeep ADRs current."
            ]
        );
        assert_eq!(inv.stdin("the prompt"), Some("the prompt"));
        assert_eq!(inv.persona_via, Some(PersonaVia::SystemPrompt));
        assert_eq!(inv.prompt_persona, None);
        assert_eq!(
            inv.output.answer,
            AnswerAt::Json {
                pointer: "/result".into()
            }
        );
        assert_eq!(inv.timeout_seconds, 600);
        assert_eq!(inv.cwd, ".");
    }

    #[test]
    fn codex_reads_stdin_and_takes_developer_instructions() {
        let inv = resolve(
            "[agents.architect]\npreset = \"codex\"\ncommand = [\"tools/codex\", \"-m\", \"gpt-5\"]\n",
            "architect",
            Some("Say \"why\".\n"),
        );
        assert_eq!(inv.program, "tools/codex");
        assert_eq!(
            inv.argv("p"),
            [
                "exec",
                "--json",
                "-c",
                "developer_instructions=\"Say \\\"why\\\".\"",
                "-m",
                "gpt-5",
                "-"
            ]
        );
        assert_eq!(inv.stdin("p"), Some("p"));
        assert_eq!(inv.persona_via, Some(PersonaVia::DeveloperInstructions));
        let AnswerAt::Jsonl { pointer, when } = &inv.output.answer else {
            panic!("codex answers in JSON lines")
        };
        assert_eq!(pointer, "/item/text");
        assert_eq!(when.len(), 2);
        assert_eq!(inv.output.errors.len(), 2);
    }

    #[test]
    fn gemini_reads_stdin_and_carries_the_persona_in_the_prompt() {
        let inv = resolve(
            "[agents.default]\npreset = \"gemini\"\n",
            "ux-designer",
            Some(PERSONA),
        );
        assert_eq!(inv.agent, "ux-designer");
        assert_eq!(
            inv.argv("p"),
            [
                "--output-format",
                "json",
                "-p",
                crate::routing::GEMINI_INSTRUCTION
            ]
        );
        assert_eq!(inv.persona_via, Some(PersonaVia::Prompt));
        assert_eq!(
            inv.prompt_persona.as_deref(),
            Some("You are the architect.\nKeep ADRs current.")
        );
        assert!(matches!(
            inv.output.errors.first().map(|e| &e.check.test),
            Some(Test::Present)
        ));
    }

    #[test]
    fn copilot_names_the_custom_agent_only_for_the_default_persona_file() {
        let text = "[agents.architect]\npreset = \"copilot\"\n[agents.pm]\npreset = \"copilot\"\npersona = \"docs/pm.md\"\n";
        let inv = resolve(text, "architect", Some(PERSONA));
        assert_eq!(inv.program, "copilot");
        assert_eq!(
            inv.argv("the prompt"),
            [
                "-p",
                "the prompt",
                "-s",
                "--no-ask-user",
                "--agent=architect"
            ]
        );
        assert_eq!(inv.stdin("the prompt"), None);
        assert_eq!(inv.persona_via, Some(PersonaVia::CustomAgent));
        assert_eq!(inv.prompt_persona, None);
        let pm = resolve(text, "pm", Some("Own the scope."));
        assert_eq!(
            pm.argv("q"),
            ["-p", "q", "-s", "--no-ask-user"],
            "copilot cannot find docs/pm.md by agent name"
        );
        assert_eq!(pm.prompt_persona.as_deref(), Some("Own the scope."));
        let none = resolve(text, "architect", None);
        assert_eq!(none.argv("q"), ["-p", "q", "-s", "--no-ask-user"]);
        assert_eq!(none.persona_via, None);
        assert_eq!(none.output.answer, AnswerAt::Text);
    }

    #[test]
    fn cursor_asks_read_only_with_the_prompt_last() {
        let inv = resolve(
            "[agents.tester]\npreset = \"cursor\"\ncommand = [\"agent\", \"--model\", \"gpt-5\"]\n",
            "tester",
            None,
        );
        assert_eq!(inv.program, "agent");
        assert_eq!(
            inv.argv("{prompt} is literal here"),
            [
                "-p",
                "--output-format",
                "json",
                "--mode=ask",
                "--model",
                "gpt-5",
                "{prompt} is literal here"
            ]
        );
        assert_eq!(inv.stdin("x"), None);
    }

    #[test]
    fn command_runners_substitute_the_prompt_and_keep_env_and_cwd() {
        let inv = resolve(
            "[agents.qa]\ncommand = [\"bin/ask\", \"--q={prompt}\", \"{prompt}\"]\nprompt = \"arg\"\nanswer = \"json:/answer\"\nenv = { MODE = \"fast\" }\ncwd = \"tools\"\ntimeout_seconds = 3\n",
            "qa",
            Some("Be brief."),
        );
        assert_eq!(inv.program, "bin/ask");
        assert_eq!(inv.argv("hi {prompt}"), ["--q=hi {prompt}", "hi {prompt}"]);
        assert_eq!(inv.stdin("hi"), None);
        assert_eq!(inv.env["MODE"], "fast");
        assert_eq!((inv.cwd.as_str(), inv.timeout_seconds), ("tools", 3));
        assert_eq!(
            inv.output.answer,
            AnswerAt::Json {
                pointer: "/answer".into()
            }
        );
        assert_eq!(inv.prompt_persona.as_deref(), Some("Be brief."));
        let stdin = resolve("[agents.qa]\ncommand = [\"cat\"]\n", "qa", None);
        assert_eq!(stdin.argv("p"), Vec::<String>::new());
        assert_eq!(stdin.stdin("p"), Some("p"));
        assert_eq!(stdin.persona_via, None);
    }

    #[test]
    fn a2a_runners_reach_the_url_with_the_whole_prompt() {
        let inv = resolve(
            "[agents.architect]\npreset = \"a2a\"\nurl = \"http://127.0.0.1:9/a\"\ntoken_env = \"T\"\n",
            "architect",
            Some(PERSONA),
        );
        assert_eq!(inv.program, "http://127.0.0.1:9/a");
        assert_eq!(inv.argv("p"), Vec::<String>::new());
        assert_eq!(inv.stdin("p"), Some("p"));
        assert_eq!(inv.token_env.as_deref(), Some("T"));
        assert_eq!(inv.output.answer, AnswerAt::Text);
        assert_eq!(inv.persona_via, Some(PersonaVia::Prompt));
    }

    #[test]
    fn no_runner_means_none() {
        assert_eq!(
            Invocation::resolve(
                &runners("[agents.pm]\npreset = \"claude\"\n"),
                "architect",
                None
            ),
            None
        );
    }

    #[test]
    fn persona_text_drops_front_matter_and_blank_files() {
        assert_eq!(
            persona_text(PERSONA),
            Some("You are the architect.\nKeep ADRs current.")
        );
        assert_eq!(
            persona_text("\u{feff}Plain persona\n"),
            Some("Plain persona")
        );
        assert_eq!(persona_text("---\nname: x\n---\n  \n"), None);
        assert_eq!(persona_text("   \n"), None);
        assert_eq!(
            persona_text("---\nunterminated front matter\n"),
            Some("---\nunterminated front matter"),
            "an unclosed block is not front matter"
        );
        assert_eq!(
            persona_text("Body first\n---\nrule\n---\n"),
            Some("Body first\n---\nrule\n---")
        );
        assert_eq!(
            persona_text("---\r\nname: x\r\n---\r\nBody\r\n"),
            Some("Body")
        );
    }
}
