//! Workflow definitions `.agentx/workflows/<type>.toml` (docs/protocol.md §6.1): `[[steps]]` with an `id`,
//! an `agent` and optional clarify fields. Other keys are allowed and left alone.

use crate::sorted_map::SortedMap;

use serde::{Deserialize, Serialize};

use crate::error::ClarifyError;
use crate::names::check_agent;
use crate::toml_read::{get, Source};

/// A parsed workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workflow {
    pub steps: Vec<Step>,
}

/// One step and its clarify policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub id: String,
    pub agent: String,
    /// Agents this step may ask; empty = may not ask anyone.
    #[serde(default)]
    pub can_clarify: Vec<String>,
    /// Round limit; unset = 5 for blocking, 6 for non-blocking requests.
    #[serde(default)]
    pub clarify_max_rounds: Option<u32>,
    #[serde(default = "default_sla")]
    pub clarify_sla_minutes: u32,
    #[serde(default = "yes")]
    pub clarify_blocking_allowed: bool,
    /// Who decides this step's escalated records (docs/protocol.md §37): people and
    /// `role:<role>`; empty = the workspace's default. Omitted from JSON when empty, so
    /// workflows without people read and print as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<String>,
    /// Who decides instead for a `BLOCK` record; empty = `deciders`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders_block: Vec<String>,
    /// How many distinct deciders must approve the same decision (docs/protocol.md §37);
    /// unset = one, as without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// The quorum of a `BLOCK` record; unset = `quorum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum_block: Option<u32>,
}

/// The largest quorum a step may ask for.
pub const MAX_QUORUM: u32 = 10;

/// A step's SLA when it sets none (also a legacy record's without `slaMinutes`).
pub const DEFAULT_SLA_MINUTES: u32 = 30;

/// The allowed ranges (inclusive) of a step's round limit and SLA, for TOML and JSON alike.
const MAX_ROUNDS_RANGE: (u32, u32) = (1, 20);
const SLA_MINUTES_RANGE: (u32, u32) = (1, 10_080);

fn default_sla() -> u32 {
    DEFAULT_SLA_MINUTES
}

fn yes() -> bool {
    true
}

impl Workflow {
    /// Parses a workflow file; `CONFIG_INVALID` with file, line and column on any bad value.
    pub fn parse(file: &str, text: &str) -> Result<Workflow, ClarifyError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        let Some(list) = get(root.get_ref(), "steps") else {
            return Ok(Workflow { steps: Vec::new() });
        };
        let toml::de::DeValue::Array(items) = list.get_ref() else {
            return Err(src.error_at(
                &list.span(),
                "`steps` must be an array of tables ([[steps]])",
            ));
        };
        let mut steps = Vec::with_capacity(items.len());
        for item in items.iter() {
            let step = src.table("a [[steps]] entry", item)?;
            let key = |name: &str| get(step, name);
            let required = |name: &str| match key(name) {
                Some(v) => src.string(name, v),
                None => Err(src.error_at(
                    &item.span(),
                    format!("a [[steps]] table is missing `{name}`"),
                )),
            };
            let id = required("id")?;
            let agent = required("agent")?;
            if check_agent(&agent).is_err() {
                if let Some(v) = key("agent") {
                    return Err(src.error_at(
                        &v.span(),
                        format!("agent '{agent}' must match ^[a-z0-9][a-z0-9-]{{0,63}}$"),
                    ));
                }
            }
            let can_clarify = match key("can_clarify") {
                Some(v) => src.agents("can_clarify", v)?,
                None => Vec::new(),
            };
            let clarify_max_rounds = match key("clarify_max_rounds") {
                Some(v) => {
                    let (min, max) = MAX_ROUNDS_RANGE;
                    let n = src.int("clarify_max_rounds", v, min.into(), max.into())?;
                    Some(u32::try_from(n).unwrap_or(max))
                }
                None => None,
            };
            let clarify_sla_minutes = match key("clarify_sla_minutes") {
                Some(v) => {
                    let (min, max) = SLA_MINUTES_RANGE;
                    let n = src.int("clarify_sla_minutes", v, min.into(), max.into())?;
                    u32::try_from(n).unwrap_or(DEFAULT_SLA_MINUTES)
                }
                None => default_sla(),
            };
            let clarify_blocking_allowed = match key("clarify_blocking_allowed") {
                Some(v) => src.boolean("clarify_blocking_allowed", v)?,
                None => true,
            };
            let deciders = |name: &str| match key(name) {
                Some(v) => crate::people::read_deciders(&src, name, v),
                None => Ok(Vec::new()),
            };
            let quorum = |name: &str| match key(name) {
                Some(v) => src
                    .int(name, v, 1, MAX_QUORUM.into())
                    .map(|n| u32::try_from(n).ok()),
                None => Ok(None),
            };
            steps.push(Step {
                id,
                agent,
                can_clarify,
                clarify_max_rounds,
                clarify_sla_minutes,
                clarify_blocking_allowed,
                deciders: deciders("deciders")?,
                deciders_block: deciders("deciders_block")?,
                quorum: quorum("quorum")?,
                quorum_block: quorum("quorum_block")?,
            });
        }
        Ok(Workflow { steps })
    }

    /// Checks a workflow given as JSON (API input) against the TOML ranges.
    pub fn validate(&self, file: &str) -> Result<(), ClarifyError> {
        let bad = |message: String| ClarifyError::ConfigInvalid {
            file: file.to_owned(),
            location: None,
            message,
        };
        for step in &self.steps {
            if check_agent(&step.agent).is_err() {
                return Err(bad(format!(
                    "step '{}' has an invalid agent '{}'",
                    step.id, step.agent
                )));
            }
            if let Some(spec) = step
                .deciders
                .iter()
                .chain(&step.deciders_block)
                .find(|d| !crate::people::is_decider_spec(d))
            {
                return Err(bad(format!(
                    "step '{}' names an invalid decider '{spec}': expected a person's name or role:<role>",
                    step.id
                )));
            }
            if let Some(bad_name) = step.can_clarify.iter().find(|a| check_agent(a).is_err()) {
                return Err(bad(format!(
                    "step '{}' may clarify with an invalid agent '{bad_name}'",
                    step.id
                )));
            }
            let (min, max) = MAX_ROUNDS_RANGE;
            if let Some(n) = step.clarify_max_rounds {
                if !(min..=max).contains(&n) {
                    return Err(bad(format!(
                        "clarifyMaxRounds must be from {min} to {max}, found {n}"
                    )));
                }
            }
            let (min, max) = SLA_MINUTES_RANGE;
            if !(min..=max).contains(&step.clarify_sla_minutes) {
                return Err(bad(format!(
                    "clarifySlaMinutes must be from {min} to {max}, found {}",
                    step.clarify_sla_minutes
                )));
            }
        }
        Ok(())
    }
}

/// Where a workflow comes from: file text (parsed when needed), an already parsed value, or
/// a file that is not UTF-8 (its error, reported when the workflow is used).
#[derive(Clone, Debug)]
pub enum WorkflowSource {
    Text { file: String, text: String },
    Parsed(Workflow),
    Unreadable(ClarifyError),
}

/// The workspace's workflows by type. Only the one a request uses is parsed, so a broken
/// file elsewhere does not stop unrelated requests.
#[derive(Clone, Debug, Default)]
pub struct Workflows {
    by_type: SortedMap<String, WorkflowSource>,
}

impl Workflows {
    pub fn new() -> Self {
        Workflows::default()
    }

    /// The §6.2 defaults, as `agentx init` writes them.
    pub fn defaults() -> Self {
        let mut w = Workflows::new();
        for (name, text) in crate::defaults::DEFAULT_WORKFLOWS {
            w.insert_text(name, text);
        }
        w
    }

    pub fn insert_text(&mut self, name: &str, text: &str) {
        self.by_type.insert(
            name.to_owned(),
            WorkflowSource::Text {
                file: format!("{name}.toml"),
                text: text.to_owned(),
            },
        );
    }

    /// A workflow file's bytes as read from disk: a BOM is skipped; bytes that are not UTF-8
    /// make this workflow (only) `CONFIG_INVALID`, naming the file and the byte offset, when
    /// a request uses it — like a file that does not parse.
    pub fn insert_bytes_as(&mut self, name: &str, file: &str, bytes: &[u8]) {
        let source = match crate::toml_read::toml_text(file, bytes) {
            Ok(text) => WorkflowSource::Text {
                file: file.to_owned(),
                text: text.to_owned(),
            },
            Err(e) => WorkflowSource::Unreadable(e),
        };
        self.by_type.insert(name.to_owned(), source);
    }

    /// A workflow file that could not be read: the requests that use it fail with `error`,
    /// the others go on (as with a file that does not parse).
    pub fn insert_error(&mut self, name: &str, error: ClarifyError) {
        self.by_type
            .insert(name.to_owned(), WorkflowSource::Unreadable(error));
    }

    pub fn insert_parsed(&mut self, name: &str, workflow: Workflow) {
        self.by_type
            .insert(name.to_owned(), WorkflowSource::Parsed(workflow));
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_type.iter().map(|(name, _)| name.as_str())
    }

    /// `(file, text)` of every workflow read as text, by type (for the settings' typo warnings).
    pub fn texts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_type.iter().filter_map(|(_, source)| match source {
            WorkflowSource::Text { file, text } => Some((file.as_str(), text.as_str())),
            _ => None,
        })
    }

    /// The named workflow: `None` when there is no such file, `Err` when it does not parse.
    pub fn get(&self, name: &str) -> Option<Result<Workflow, ClarifyError>> {
        self.by_type.get(name).map(|source| match source {
            WorkflowSource::Text { file, text } => Workflow::parse(file, text),
            WorkflowSource::Parsed(w) => Ok(w.clone()),
            WorkflowSource::Unreadable(e) => Err(e.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_as_specified() {
        let w = Workflows::defaults();
        let feature = w.get("feature").unwrap().unwrap();
        assert_eq!(feature.steps.len(), 2);
        assert_eq!(feature.steps[0].id, "architecture");
        assert_eq!(feature.steps[0].can_clarify, vec!["product-manager"]);
        assert_eq!(
            feature.steps[1].can_clarify,
            vec!["architect", "product-manager"]
        );
        assert_eq!(feature.steps[1].clarify_max_rounds, Some(3));
        assert_eq!(feature.steps[1].clarify_sla_minutes, 60);
        let bug = w.get("bug").unwrap().unwrap();
        assert_eq!(bug.steps[0].clarify_max_rounds, Some(2));
        assert_eq!(bug.steps[0].clarify_sla_minutes, 30);
        assert!(!bug.steps[0].clarify_blocking_allowed);
        assert!(w.get("story").unwrap().is_ok());
        assert!(w.get("nope").is_none());
    }

    #[test]
    fn other_keys_allowed_and_defaults_applied() {
        let w = Workflow::parse(
            "x.toml",
            "name = \"x\"\n[[steps]]\nid = \"s\"\nagent = \"engineer\"\nprompt = \"do it\"\nneeds = [\"a\"]\n",
        )
        .unwrap();
        let s = &w.steps[0];
        assert!(s.can_clarify.is_empty());
        assert_eq!(s.clarify_max_rounds, None);
        assert_eq!(s.clarify_sla_minutes, 30);
        assert!(s.clarify_blocking_allowed);
    }

    #[test]
    fn bad_values_are_config_invalid_with_location() {
        let text = "[[steps]]\nid = \"s\"\nagent = \"engineer\"\nclarify_max_rounds = \"three\"\n";
        let e = Workflow::parse("feature.toml", text).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string().starts_with(
                "feature.toml:4:22: clarify_max_rounds must be an integer from 1 to 20"
            ),
            "{e}"
        );
        let e = Workflow::parse(
            "f.toml",
            "[[steps]]\nid = \"s\"\nagent = \"e\"\nclarify_sla_minutes = 0\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("f.toml:4:23:"), "{e}");
        let e = Workflow::parse("f.toml", "[[steps]]\nid = \"s\"\n").unwrap_err();
        assert!(e.to_string().contains("missing `agent`"), "{e}");
        let e = Workflow::parse("f.toml", "steps = 3\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        let e = Workflow::parse(
            "f.toml",
            "[[steps]]\nid = \"s\"\nagent = \"e\"\ncan_clarify = [\"Bad Name\"]\n",
        )
        .unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        let e = Workflow::parse(
            "f.toml",
            "[[steps]]\nid = \"s\"\nagent = \"e\"\nclarify_blocking_allowed = 1\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("must be true or false"), "{e}");
    }

    #[test]
    fn deciders_are_read_and_checked() {
        let w = Workflow::parse(
            "f.toml",
            "[[steps]]\nid = \"s\"\nagent = \"e\"\ndeciders = [\"role:lead\", \"alice\"]\ndeciders_block = [\"role:cto\"]\n",
        )
        .unwrap();
        assert_eq!(w.steps[0].deciders, ["role:lead", "alice"]);
        assert_eq!(w.steps[0].deciders_block, ["role:cto"]);
        let e = Workflow::parse(
            "f.toml",
            "[[steps]]\nid = \"s\"\nagent = \"e\"\ndeciders = [\"team:x\"]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("f.toml:4:13: deciders must hold"),
            "{e}"
        );
        // JSON without deciders reads and prints as before.
        let plain = Workflow::parse("f.toml", "[[steps]]\nid = \"s\"\nagent = \"e\"\n").unwrap();
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json["steps"][0].get("deciders").is_none(), "{json}");
        let mut bad = plain;
        bad.steps[0].deciders = vec!["Bad".into()];
        assert!(bad
            .validate("f")
            .unwrap_err()
            .to_string()
            .contains("invalid decider"));
    }

    #[test]
    fn workflow_bytes_that_are_not_utf8_fail_when_used() {
        let mut w = Workflows::new();
        w.insert_bytes_as(
            "evil",
            ".agentx/workflows/evil.toml",
            b"[[steps]]\nid = \"s\xc3\x28\"\n",
        );
        w.insert_bytes_as(
            "bom",
            "bom.toml",
            b"\xEF\xBB\xBF[[steps]]\nid = \"s\"\nagent = \"engineer\"\n",
        );
        let e = w.get("evil").unwrap().unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert_eq!(
            e.to_string(),
            ".agentx/workflows/evil.toml:2:8: invalid UTF-8 (byte 0xc3) at byte offset 17; the file must be UTF-8 text"
        );
        assert_eq!(w.get("bom").unwrap().unwrap().steps[0].agent, "engineer");
    }
}
