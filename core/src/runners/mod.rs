//! Runner tables of `.agentx/config.toml` (docs/protocol.md §14.1): `[agents.<name>]` and
//! `[agents.default]`, read into typed specs. A bad table is `CONFIG_INVALID` at
//! file:line:column, like every other setting.
//!
//! Below `config`, which holds the table, and `routing`, which turns a runner into a process,
//! a prompt and the reading of its answer; `routing` re-exports everything here, so
//! `routing::Runners` and the rest keep their paths.

mod output;

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Serialize;
use toml::de::{DeTable, DeValue};

use crate::error::ClarifyError;
use crate::names::{check_agent, is_reserved};
use crate::sorted_map::SortedMap;
use crate::toml_read::{describe, get, Source, Value};

pub use output::{AnswerAt, AnswerFormat, Check, ErrorSignal, OutputSpec, Test};

/// Default and allowed range of `timeout_seconds`.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 600;
const TIMEOUT_SECONDS: (i64, i64) = (1, 86_400);

/// The table used for targets without a table of their own.
pub const DEFAULT_TABLE: &str = "default";

/// The element of a `command` runner's arguments replaced by the prompt (`prompt = "arg"`).
pub const PROMPT_PLACEHOLDER: &str = "{prompt}";

const KEYS: &[&str] = &[
    "preset",
    "command",
    "prompt",
    "answer",
    "timeout_seconds",
    "persona",
    "env",
    "cwd",
    "url",
    "token_env",
    "allow_card_origins",
];

/// Which agent CLI a runner drives; each preset encodes that CLI's documented headless mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
    /// Any program: the prompt, the answer's location are configured.
    Command,
    /// An A2A 1.0 agent over HTTP (docs/protocol.md §27): `url` and an optional `token_env`, no
    /// process.
    A2a,
}

impl Preset {
    pub const ALL: [Preset; 7] = [
        Preset::Claude,
        Preset::Codex,
        Preset::Gemini,
        Preset::Copilot,
        Preset::Cursor,
        Preset::Command,
        Preset::A2a,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Gemini => "gemini",
            Preset::Copilot => "copilot",
            Preset::Cursor => "cursor",
            Preset::Command => "command",
            Preset::A2a => "a2a",
        }
    }

    pub fn parse(text: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// How the prompt reaches the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptMode {
    /// Written to its standard input, which is then closed.
    Stdin,
    /// Substituted for `{prompt}` in its arguments.
    Arg,
}

/// One `[agents.<name>]` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerSpec {
    pub preset: Preset,
    /// Program and fixed arguments. For a preset: empty (the CLI's usual name) or the program
    /// path followed by extra arguments for that CLI.
    pub command: Vec<String>,
    /// `command` runners only (presets fix their own delivery).
    pub prompt: Option<PromptMode>,
    /// `command` runners only (presets know where their CLI puts the answer).
    pub answer: Option<AnswerFormat>,
    pub timeout_seconds: u32,
    /// Persona file, relative to the workspace root; `None` means the default
    /// `.github/agents/<target>.agent.md` when it exists.
    pub persona: Option<String>,
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the workspace root.
    pub cwd: String,
    /// Preset `a2a` only: the agent's base URL (its card at `/.well-known/agent-card.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Preset `a2a` only: the environment variable holding the agent's bearer token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// Preset `a2a` only: origins besides `url`'s that the agent's card may name for its
    /// JSON-RPC endpoint (the bearer token goes there too). Normalised (`origin::origin_of`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_card_origins: Vec<String>,
}

/// The persona file a runner reads for one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonaFile {
    /// Relative to the workspace root.
    pub path: String,
    /// Configured explicitly: a missing file is an error, not "no persona".
    pub required: bool,
}

impl RunnerSpec {
    /// Where the persona of `target` is read from.
    pub fn persona_file(&self, target: &str) -> PersonaFile {
        match &self.persona {
            Some(path) => PersonaFile {
                path: path.clone(),
                required: true,
            },
            None => PersonaFile {
                path: default_persona_path(target),
                required: false,
            },
        }
    }

    /// Whether the persona is the target's own `.github/agents/<target>.agent.md`, the file
    /// Copilot CLI finds by itself for `--agent=<target>`.
    pub fn persona_is_default(&self, target: &str) -> bool {
        self.persona
            .as_deref()
            .is_none_or(|p| p.trim_start_matches("./") == default_persona_path(target))
    }
}

/// AgentX's and Copilot's convention for an agent's persona.
pub fn default_persona_path(target: &str) -> String {
    format!(".github/agents/{target}.agent.md")
}

/// Every runner of a workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Runners {
    /// `[agents.<name>]`, by agent name.
    pub agents: SortedMap<String, RunnerSpec>,
    /// `[agents.default]`.
    pub default: Option<RunnerSpec>,
}

impl Runners {
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty() && self.default.is_none()
    }

    /// The runner that answers for `agent`: its own table, else `[agents.default]`. `None`
    /// means the agent cannot be routed to (`NO_RUNNER`).
    pub fn for_agent(&self, agent: &str) -> Option<&RunnerSpec> {
        self.agents.get(agent).or(self.default.as_ref())
    }

    /// Reads the `agents` table of a parsed config document; absent means no runners.
    pub(crate) fn parse(src: &Source<'_>, root: &DeTable<'_>) -> Result<Runners, ClarifyError> {
        let mut runners = Runners::default();
        let Some(value) = get(root, "agents") else {
            return Ok(runners);
        };
        let table = src.table("agents", value)?;
        for (name, value) in table.iter() {
            let name_text: &str = name.get_ref();
            let key = format!("agents.{name_text}");
            if name_text != DEFAULT_TABLE {
                check_runner_name(name_text).map_err(|why| src.error_at(&name.span(), why))?;
            }
            let spec = Reader { src, key: &key }.spec(value)?;
            if name_text == DEFAULT_TABLE {
                runners.default = Some(spec);
            } else {
                runners.agents.insert(name_text.to_owned(), spec);
            }
        }
        Ok(runners)
    }
}

fn check_runner_name(name: &str) -> Result<(), String> {
    if let Err(e) = check_agent(name) {
        return Err(format!("[agents.{name}]: {e}"));
    }
    if is_reserved(name) {
        return Err(format!(
            "[agents.{name}]: '{name}' is never asked, so it takes no runner"
        ));
    }
    Ok(())
}

/// Reads one runner table, naming every error by its dotted key.
struct Reader<'s, 'a> {
    src: &'s Source<'a>,
    key: &'s str,
}

impl Reader<'_, '_> {
    fn err(&self, span: &Range<usize>, message: impl Into<String>) -> ClarifyError {
        self.src.error_at(span, message)
    }

    fn spec(&self, value: &Value<'_>) -> Result<RunnerSpec, ClarifyError> {
        let table = self.src.table(self.key, value)?;
        self.check_keys(table)?;
        let field = |name: &str| get(table, name);
        let preset = field("preset").map(|v| self.preset(v)).transpose()?;
        let command = field("command")
            .map(|v| Ok((self.command(v)?, v.span())))
            .transpose()?;
        let preset = self.resolve_preset(preset, command.is_some(), value)?;
        let prompt = field("prompt")
            .map(|v| {
                self.command_only(preset, "prompt", v)
                    .and_then(|()| self.prompt(v))
            })
            .transpose()?;
        let answer = field("answer")
            .map(|v| {
                self.command_only(preset, "answer", v)
                    .and_then(|()| self.answer(v))
            })
            .transpose()?;
        let url = field("url")
            .map(|v| self.a2a_only(preset, "url", v).and_then(|()| self.url(v)))
            .transpose()?;
        let token_env = field("token_env")
            .map(|v| {
                self.a2a_only(preset, "token_env", v)
                    .and_then(|()| self.token_env(v))
            })
            .transpose()?;
        let allow_card_origins = field("allow_card_origins")
            .map(|v| {
                self.a2a_only(preset, "allow_card_origins", v)
                    .and_then(|()| self.origins(v))
            })
            .transpose()?
            .unwrap_or_default();
        let (command, command_span) = self.command_for(preset, command, url.is_some(), value)?;
        let prompt = (preset == Preset::Command).then(|| prompt.unwrap_or(PromptMode::Stdin));
        self.check_placeholder(&command, &command_span, prompt)?;
        Ok(RunnerSpec {
            preset,
            command,
            prompt,
            answer: (preset == Preset::Command).then(|| answer.unwrap_or(AnswerFormat::Text)),
            timeout_seconds: field("timeout_seconds")
                .map(|v| self.timeout(v))
                .transpose()?
                .unwrap_or(DEFAULT_TIMEOUT_SECONDS),
            persona: field("persona")
                .map(|v| self.path("persona", v))
                .transpose()?,
            env: field("env")
                .map(|v| self.env(v))
                .transpose()?
                .unwrap_or_default(),
            cwd: field("cwd")
                .map(|v| self.path("cwd", v))
                .transpose()?
                .unwrap_or_else(|| String::from(".")),
            url,
            token_env,
            allow_card_origins,
        })
    }

    /// Every key of a runner table must be one this reader knows: a typo would otherwise
    /// leave a runner without the setting its author meant.
    fn check_keys(&self, table: &DeTable<'_>) -> Result<(), ClarifyError> {
        for (k, _) in table.iter() {
            let k_text: &str = k.get_ref();
            if !KEYS.contains(&k_text) {
                return Err(self.err(
                    &k.span(),
                    format!(
                        "unknown key '{k_text}' in [{}]; allowed: {}{}",
                        self.key,
                        KEYS.join(", "),
                        crate::nearest::nearest(k_text, KEYS)
                            .map(|k| format!("; did you mean '{k}'?"))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The preset named, else `command` when the table has a command; a table with neither
    /// says nothing about how to run the agent.
    fn resolve_preset(
        &self,
        preset: Option<Preset>,
        has_command: bool,
        value: &Value<'_>,
    ) -> Result<Preset, ClarifyError> {
        match (preset, has_command) {
            (Some(p), _) => Ok(p),
            (None, true) => Ok(Preset::Command),
            (None, false) => Err(self.err(
                &value.span(),
                format!(
                    "[{}] needs a preset ({}) or a command",
                    self.key,
                    preset_names()
                ),
            )),
        }
    }

    /// The command and where it was written: an `a2a` runner takes a url and no command, a
    /// `command` runner must have one; other presets bring their own (empty here).
    fn command_for(
        &self,
        preset: Preset,
        command: Option<(Vec<String>, Range<usize>)>,
        has_url: bool,
        value: &Value<'_>,
    ) -> Result<(Vec<String>, Range<usize>), ClarifyError> {
        if preset == Preset::A2a {
            if let Some((_, span)) = &command {
                return Err(self.err(
                    span,
                    format!(
                        "[{}] has preset \"a2a\": it takes url = \"<agent base URL>\", not a command",
                        self.key
                    ),
                ));
            }
            if !has_url {
                return Err(self.err(
                    &value.span(),
                    format!(
                        "[{}] has preset \"a2a\" but no url = \"<agent base URL>\"",
                        self.key
                    ),
                ));
            }
        }
        match command {
            Some((c, span)) => Ok((c, span)),
            None if preset == Preset::Command => Err(self.err(
                &value.span(),
                format!(
                    "[{}] has preset \"command\" but no command = [program, args…]",
                    self.key
                ),
            )),
            None => Ok((Vec::new(), value.span())),
        }
    }

    /// `allow_card_origins`: origins (`scheme://host[:port]`, no path), normalised.
    fn origins(&self, v: &Value<'_>) -> Result<Vec<String>, ClarifyError> {
        let listed = self.src.strings(
            &format!("{}.allow_card_origins", self.key),
            v,
            (
                "origins",
                "origins like \"https://agents.example.com\" (scheme, host and port, no path)",
            ),
            crate::origin::is_origin,
        )?;
        Ok(listed
            .iter()
            .filter_map(|o| crate::origin::origin_of(o))
            .collect())
    }

    fn a2a_only(&self, preset: Preset, name: &str, v: &Value<'_>) -> Result<(), ClarifyError> {
        if preset == Preset::A2a {
            return Ok(());
        }
        Err(self.err(
            &v.span(),
            format!(
                "{}.{name} belongs to preset \"a2a\" only (this runner's preset is \"{}\")",
                self.key,
                preset.as_str()
            ),
        ))
    }

    /// An http(s) URL without whitespace: where the agent's card and JSON-RPC endpoint are.
    fn url(&self, v: &Value<'_>) -> Result<String, ClarifyError> {
        let text = self.string("url", v)?;
        let rest = text
            .strip_prefix("http://")
            .or_else(|| text.strip_prefix("https://"));
        match rest {
            Some(rest)
                if !rest.is_empty()
                    && !rest.starts_with('/')
                    && !text.chars().any(|c| c.is_whitespace() || c.is_control()) =>
            {
                Ok(text)
            }
            _ => Err(self.err(
                &v.span(),
                format!(
                    "{}.url must be an http:// or https:// URL (the A2A agent's base URL), found \"{text}\"",
                    self.key
                ),
            )),
        }
    }

    fn token_env(&self, v: &Value<'_>) -> Result<String, ClarifyError> {
        let text = self.string("token_env", v)?;
        if is_env_name(&text) {
            Ok(text)
        } else {
            Err(self.err(
                &v.span(),
                format!(
                    "{}.token_env must name an environment variable (^[A-Za-z_][A-Za-z0-9_]*$), found \"{text}\"",
                    self.key
                ),
            ))
        }
    }

    fn string(&self, name: &str, v: &Value<'_>) -> Result<String, ClarifyError> {
        self.src.string(&format!("{}.{name}", self.key), v)
    }

    fn preset(&self, v: &Value<'_>) -> Result<Preset, ClarifyError> {
        let text = self.string("preset", v)?;
        Preset::parse(&text).ok_or_else(|| {
            self.err(
                &v.span(),
                format!(
                    "{}.preset must be one of {}, found \"{text}\"",
                    self.key,
                    preset_names()
                ),
            )
        })
    }

    fn command(&self, v: &Value<'_>) -> Result<Vec<String>, ClarifyError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                &v.span(),
                format!(
                    "{}.command must be an array of strings [program, args…], found {}",
                    self.key,
                    describe(v.get_ref())
                ),
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.get_ref() {
                DeValue::String(s) if !s.contains('\0') => out.push(s.to_string()),
                other => {
                    return Err(self.err(
                        &item.span(),
                        format!(
                            "{}.command must hold strings without NUL characters, found {}",
                            self.key,
                            describe(other)
                        ),
                    ))
                }
            }
        }
        match out.first() {
            // A program given as a path is inside the workspace (docs/protocol.md §31): relative
            // to the root, without `..`. A bare name is looked up on `PATH` (the runner's `env`
            // may set it), so an absolute path is never needed.
            Some(program) if program.contains('/') && !is_inside(program) => Err(self.err(
                &v.span(),
                format!(
                    "{}.command's program \"{program}\" must be a path relative to the workspace root without '..', or a bare name looked up on PATH (set `env = {{ PATH = \"…\" }}` to add a directory)",
                    self.key
                ),
            )),
            Some(program) if !program.is_empty() => Ok(out),
            _ => Err(self.err(
                &v.span(),
                format!("{}.command must start with a program name", self.key),
            )),
        }
    }

    fn command_only(&self, preset: Preset, name: &str, v: &Value<'_>) -> Result<(), ClarifyError> {
        if preset == Preset::Command {
            return Ok(());
        }
        Err(self.err(
            &v.span(),
            format!(
                "{}.{name} is fixed by preset \"{}\"; only preset \"command\" takes {name}",
                self.key,
                preset.as_str()
            ),
        ))
    }

    fn prompt(&self, v: &Value<'_>) -> Result<PromptMode, ClarifyError> {
        match self.string("prompt", v)?.as_str() {
            "stdin" => Ok(PromptMode::Stdin),
            "arg" => Ok(PromptMode::Arg),
            other => Err(self.err(
                &v.span(),
                format!(
                    "{}.prompt must be \"stdin\" or \"arg\", found \"{other}\"",
                    self.key
                ),
            )),
        }
    }

    fn answer(&self, v: &Value<'_>) -> Result<AnswerFormat, ClarifyError> {
        let text = self.string("answer", v)?;
        AnswerFormat::parse(&text)
            .map_err(|why| self.err(&v.span(), format!("{}.answer {why}", self.key)))
    }

    /// `{prompt}` belongs in a `command` runner's arguments exactly when the prompt is an
    /// argument: anywhere else it would be passed on literally, which is never meant.
    fn check_placeholder(
        &self,
        command: &[String],
        span: &Range<usize>,
        prompt: Option<PromptMode>,
    ) -> Result<(), ClarifyError> {
        let has = command
            .iter()
            .skip(1)
            .any(|a| a.contains(PROMPT_PLACEHOLDER));
        let message = match (prompt, has) {
            (Some(PromptMode::Arg), false) => format!(
                "{}.command has no \"{PROMPT_PLACEHOLDER}\" argument for prompt = \"arg\"",
                self.key
            ),
            (Some(PromptMode::Stdin), true) => format!(
                "{}.command has \"{PROMPT_PLACEHOLDER}\" but prompt = \"stdin\"; set prompt = \"arg\"",
                self.key
            ),
            (None, true) => format!(
                "{}.command holds \"{PROMPT_PLACEHOLDER}\", but a preset places the prompt itself; list only extra arguments",
                self.key
            ),
            _ => return Ok(()),
        };
        Err(self.err(span, message))
    }

    fn timeout(&self, v: &Value<'_>) -> Result<u32, ClarifyError> {
        let (min, max) = TIMEOUT_SECONDS;
        let n = self
            .src
            .int(&format!("{}.timeout_seconds", self.key), v, min, max)?;
        // The range fits in u32.
        Ok(u32::try_from(n).unwrap_or(DEFAULT_TIMEOUT_SECONDS))
    }

    fn path(&self, name: &str, v: &Value<'_>) -> Result<String, ClarifyError> {
        let text = self.string(name, v)?;
        if text.is_empty() || text.contains('\0') {
            return Err(self.err(
                &v.span(),
                format!(
                    "{}.{name} must be a non-empty path without NUL characters",
                    self.key
                ),
            ));
        }
        // docs/protocol.md §31: a persona or a working directory outside the workspace would put another
        // file in the prompt (and the run log), or run the agent elsewhere.
        if !is_inside(&text) {
            return Err(self.err(
                &v.span(),
                format!(
                    "{}.{name} must be a relative path inside the workspace (no '..', not absolute), found \"{text}\"",
                    self.key
                ),
            ));
        }
        Ok(text)
    }

    fn env(&self, v: &Value<'_>) -> Result<BTreeMap<String, String>, ClarifyError> {
        let table = self.src.table(&format!("{}.env", self.key), v)?;
        let mut out = BTreeMap::new();
        for (k, value) in table.iter() {
            let name: &str = k.get_ref();
            if !is_env_name(name) {
                return Err(self.err(
                    &k.span(),
                    format!(
                        "{}.env: '{name}' is not an environment variable name (^[A-Za-z_][A-Za-z0-9_]*$)",
                        self.key
                    ),
                ));
            }
            match value.get_ref() {
                DeValue::String(s) if !s.contains('\0') => {
                    out.insert(name.to_owned(), s.to_string());
                }
                other => {
                    return Err(self.err(
                        &value.span(),
                        format!(
                            "{}.env.{name} must be a string without NUL characters, found {}",
                            self.key,
                            describe(other)
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// A relative path without `..` components: inside the directory it is joined to.
fn is_inside(path: &str) -> bool {
    !path.starts_with('/') && !path.split('/').any(|part| part == "..")
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn preset_names() -> String {
    Preset::ALL.map(Preset::as_str).join(", ")
}

#[cfg(test)]
mod tests;
