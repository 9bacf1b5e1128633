//! Capability manifests `.agentx/agents/<name>.toml` (seed 003 §4–§5, docs/protocol.md §18): what an agent
//! can be delegated. Any bad value is `CONFIG_INVALID` at file:line:column; other keys are
//! allowed and left alone.
//!
//! ```toml
//! version = "1.2.0"
//! role = "Research specialist"
//! interface = ["working-file"]     # accepted delegation types
//! max_depth = "deep"               # quick | learning | deep
//! exclusions = ["content.script.drafting"]
//!
//! [[capabilities]]
//! name = "research.context.deepen"
//! confidence = 0.92                # 0 to 1
//! constraints = ["Needs multi-source saturation"]
//! latency_weight = 1.2             # 0.01 to 100, default 1
//! ```

use crate::sorted_map::SortedMap;

use serde::Serialize;
use toml::de::DeValue;

use super::capability::{check_capability, covers};
use crate::error::ClarifyError;
use crate::toml_read::{get, Source};

/// One capability an agent offers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    pub name: String,
    pub confidence: f64,
    pub constraints: Vec<String>,
    /// How slow this agent is at it, relative to 1 (gap scoring normalises round trips by it).
    pub latency_weight: f64,
}

/// The depth tiers of seed 003 §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    Quick,
    Learning,
    Deep,
}

/// A parsed manifest.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub agent: String,
    pub version: String,
    pub role: String,
    pub capabilities: Vec<Capability>,
    pub exclusions: Vec<String>,
    pub interface: Vec<String>,
    pub max_depth: Option<Depth>,
}

/// Whether a manifest offers a capability.
#[derive(Clone, Debug, PartialEq)]
pub enum Offer<'a> {
    /// Listed (itself or an ancestor), not excluded.
    Offered(&'a Capability),
    /// Excluded by this entry of `exclusions` (exclusion wins over a listing).
    Excluded(&'a str),
    /// Not listed.
    Missing,
}

const LATENCY_WEIGHT_RANGE: (f64, f64) = (0.01, 100.0);

impl Manifest {
    /// Parses the manifest of `agent` (the file's stem) from `file`'s text.
    pub fn parse(file: &str, agent: &str, text: &str) -> Result<Manifest, ClarifyError> {
        if let Err(e) = crate::names::check_agent(agent) {
            return Err(ClarifyError::ConfigInvalid {
                file: file.to_owned(),
                location: None,
                message: format!("the file does not name an agent: {e}"),
            });
        }
        let src = Source { file, text };
        let root = src.parse()?;
        let table = root.get_ref();
        let whole = 0..0;
        let required = |key: &str| {
            get(table, key).ok_or_else(|| {
                src.error_at(
                    &whole,
                    format!("the manifest of '{agent}' is missing `{key}`"),
                )
            })
        };
        let non_empty = |key: &str| -> Result<String, ClarifyError> {
            let v = required(key)?;
            let s = src.string(key, v)?;
            if s.trim().is_empty() {
                return Err(src.error_at(&v.span(), format!("{key} must not be empty")));
            }
            Ok(s)
        };
        if let Some(v) = get(table, "agent") {
            let named = src.string("agent", v)?;
            if named != agent {
                return Err(src.error_at(
                    &v.span(),
                    format!("agent is '{named}' but the file is the manifest of '{agent}'"),
                ));
            }
        }
        let version = non_empty("version")?;
        let role = non_empty("role")?;
        let capabilities = capabilities(&src, required("capabilities")?)?;
        let names = (
            "capability names",
            "dotted capability names like research.context.deepen",
        );
        let exclusions = match get(table, "exclusions") {
            Some(v) => src.strings("exclusions", v, names, |s| check_capability(s).is_ok())?,
            None => Vec::new(),
        };
        let interface = match get(table, "interface") {
            Some(v) => src.strings(
                "interface",
                v,
                ("delegation types", "non-empty strings"),
                |s| !s.trim().is_empty(),
            )?,
            None => Vec::new(),
        };
        let max_depth = match get(table, "max_depth") {
            Some(v) => Some(match src.string("max_depth", v)?.as_str() {
                "quick" => Depth::Quick,
                "learning" => Depth::Learning,
                "deep" => Depth::Deep,
                other => {
                    return Err(src.error_at(
                        &v.span(),
                        format!(
                            "max_depth must be one of quick, learning, deep, found \"{other}\""
                        ),
                    ))
                }
            }),
            None => None,
        };
        Ok(Manifest {
            agent: agent.to_owned(),
            version,
            role,
            capabilities,
            exclusions,
            interface,
            max_depth,
        })
    }

    /// Whether this agent offers `capability` (exclusions first, then the listing).
    pub fn offers(&self, capability: &str) -> Offer<'_> {
        if let Some(ex) = self.exclusions.iter().find(|e| covers(e, capability)) {
            return Offer::Excluded(ex);
        }
        // The most specific listing wins (its confidence and weight are the relevant ones).
        self.capabilities
            .iter()
            .filter(|c| covers(&c.name, capability))
            .max_by_key(|c| c.name.len())
            .map_or(Offer::Missing, Offer::Offered)
    }
}

fn capabilities(
    src: &Source<'_>,
    v: &crate::toml_read::Value<'_>,
) -> Result<Vec<Capability>, ClarifyError> {
    let DeValue::Array(items) = v.get_ref() else {
        return Err(src.error_at(
            &v.span(),
            "capabilities must be an array of tables ([[capabilities]] or [{name = …}])",
        ));
    };
    let mut out: Vec<Capability> = Vec::with_capacity(items.len());
    for item in items.iter() {
        let t = src.table("a capabilities entry", item)?;
        let Some(name_v) = get(t, "name") else {
            return Err(src.error_at(&item.span(), "a capabilities entry is missing `name`"));
        };
        let name = src.string("name", name_v)?;
        if let Err(why) = check_capability(&name) {
            return Err(src.error_at(&name_v.span(), why));
        }
        if out.iter().any(|c| c.name == name) {
            return Err(src.error_at(
                &name_v.span(),
                format!("capability '{name}' is listed twice"),
            ));
        }
        let Some(conf_v) = get(t, "confidence") else {
            return Err(src.error_at(
                &item.span(),
                format!("capability '{name}' is missing `confidence` (0 to 1)"),
            ));
        };
        let confidence = src.float("confidence", conf_v, 0.0, 1.0, "0 to 1")?;
        let constraints = match get(t, "constraints") {
            Some(c) => src.strings("constraints", c, ("strings", "strings"), |_| true)?,
            None => Vec::new(),
        };
        let latency_weight = match get(t, "latency_weight") {
            Some(w) => {
                let (min, max) = LATENCY_WEIGHT_RANGE;
                src.float("latency_weight", w, min, max, "0.01 to 100")?
            }
            None => 1.0,
        };
        out.push(Capability {
            name,
            confidence,
            constraints,
            latency_weight,
        });
    }
    Ok(out)
}

/// The workspace's manifests by agent. A broken manifest is kept as its error, so it fails
/// only what needs that agent's manifest.
#[derive(Clone, Debug, Default)]
pub struct Manifests {
    by_agent: SortedMap<String, Result<Manifest, ClarifyError>>,
}

impl Manifests {
    pub fn new() -> Self {
        Manifests::default()
    }

    /// Parses and keeps the manifest of `agent` read from `file`.
    pub fn insert_text(&mut self, agent: &str, file: &str, text: &str) {
        self.by_agent
            .insert(agent.to_owned(), Manifest::parse(file, agent, text));
    }

    /// Keeps why the manifest of `agent` could not be read (a file that is not UTF-8, not a
    /// regular file): it fails only what needs that agent's manifest, like a broken one.
    pub fn insert_error(&mut self, agent: &str, error: ClarifyError) {
        self.by_agent.insert(agent.to_owned(), Err(error));
    }

    pub fn insert(&mut self, manifest: Manifest) {
        self.by_agent.insert(manifest.agent.clone(), Ok(manifest));
    }

    /// `None`: the agent has no manifest; `Some(Err)`: it has a broken one.
    pub fn get(&self, agent: &str) -> Option<Result<&Manifest, &ClarifyError>> {
        self.by_agent.get(agent).map(Result::as_ref)
    }

    /// The readable manifests, by agent name.
    pub fn iter(&self) -> impl Iterator<Item = &Manifest> {
        self.by_agent.iter().filter_map(|(_, m)| m.as_ref().ok())
    }

    /// The agent best placed to take `capability`, other than `except`: the highest
    /// confidence, then the lowest latency weight, then the name (deterministic).
    pub fn best_for(&self, capability: &str, except: &str) -> Option<&str> {
        let mut best: Option<(&Manifest, &Capability)> = None;
        for m in self.iter().filter(|m| m.agent != except) {
            let Offer::Offered(c) = m.offers(capability) else {
                continue;
            };
            let better = best.is_none_or(|(bm, bc)| {
                c.confidence > bc.confidence
                    || (c.confidence == bc.confidence
                        && (c.latency_weight < bc.latency_weight
                            || (c.latency_weight == bc.latency_weight && m.agent < bm.agent)))
            });
            if better {
                best = Some((m, c));
            }
        }
        best.map(|(m, _)| m.agent.as_str())
    }

    /// The latency weight `agent` declares for `capability` (1 when unknown).
    pub fn latency_weight(&self, agent: &str, capability: &str) -> f64 {
        match self.get(agent) {
            Some(Ok(m)) => match m.offers(capability) {
                Offer::Offered(c) => c.latency_weight,
                _ => 1.0,
            },
            _ => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESEARCH: &str = r#"
version = "1.2.0"
role = "Research specialist"
interface = ["working-file"]
max_depth = "deep"
exclusions = ["content.script.drafting"]
notes = "Optimized for depth-first domain extraction."

[[capabilities]]
name = "research.context.acquire"
confidence = 0.95
constraints = ["Requires network fetch tools"]
latency_weight = 1.0

[[capabilities]]
name = "research.context.deepen"
confidence = 0.92
latency_weight = 1.2

[[capabilities]]
name = "content"
confidence = 0.5
"#;

    #[test]
    fn seed_003_manifest_parses() {
        // `content` is a single segment: refused before anything else is looked at.
        let e = Manifest::parse("research-agent.toml", "research-agent", RESEARCH).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string()
                .starts_with("research-agent.toml:21:8: capability 'content' has one segment"),
            "{e}"
        );
        let text = RESEARCH.replace("name = \"content\"", "name = \"content.script\"");
        let m = Manifest::parse("research-agent.toml", "research-agent", &text).unwrap();
        assert_eq!(m.version, "1.2.0");
        assert_eq!(m.capabilities.len(), 3);
        assert_eq!(m.capabilities[1].latency_weight, 1.2);
        assert_eq!(m.capabilities[1].constraints, Vec::<String>::new());
        assert_eq!(m.max_depth, Some(Depth::Deep));
        assert!(
            matches!(m.offers("research.context.deepen"), Offer::Offered(c) if c.confidence == 0.92)
        );
        // Exclusion wins over the broader `content.script` listing.
        assert_eq!(
            m.offers("content.script.drafting"),
            Offer::Excluded("content.script.drafting")
        );
        assert!(
            matches!(m.offers("content.script.editing"), Offer::Offered(c) if c.name == "content.script")
        );
        assert_eq!(m.offers("qa.verification.multi-claim"), Offer::Missing);
    }

    #[test]
    fn bad_values_name_file_line_and_column() {
        let cases = [
            ("role = \"r\"\ncapabilities = []\n", "a.toml:1:1: the manifest of 'a' is missing `version`"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = [{name = \"x.y\", confidence = 2}]\n", "a.toml:3:45: confidence must be a number from 0 to 1, found 2"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = [{name = \"x.y\"}]\n", "a.toml:3:17: capability 'x.y' is missing `confidence`"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = [{name = \"x.y\", confidence = 1, latency_weight = 0}]\n", "a.toml:3:65: latency_weight must be a number from 0.01 to 100"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = []\nexclusions = [\"X\"]\n", "a.toml:4:15: exclusions must hold dotted capability names"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = []\nmax_depth = \"deeper\"\n", "a.toml:4:13: max_depth must be one of quick, learning, deep"),
            ("agent = \"b\"\nversion = \"1\"\nrole = \"r\"\ncapabilities = []\n", "a.toml:1:9: agent is 'b' but the file is the manifest of 'a'"),
            ("version = \"1\"\nrole = \"r\"\ncapabilities = [{name = \"x.y\", confidence = 1}, {name = \"x.y\", confidence = 1}]\n", "a.toml:3:57: capability 'x.y' is listed twice"),
            ("version = \"1\"\nrole = \"\"\ncapabilities = []\n", "a.toml:2:8: role must not be empty"),
            ("version = = 1\n", "a.toml:1:"),
        ];
        let e = Manifest::parse("Bad Name.toml", "Bad Name", "").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string().starts_with(
                "Bad Name.toml: the file does not name an agent: invalid agent name 'Bad Name'"
            ),
            "{e}"
        );
        for (text, want) in cases {
            let e = Manifest::parse("a.toml", "a", text).unwrap_err();
            assert_eq!(e.code(), "CONFIG_INVALID");
            assert!(e.to_string().starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn best_agent_for_a_capability() {
        let mut ms = Manifests::new();
        let m = |conf: f64, w: f64| {
            format!("version = \"1\"\nrole = \"r\"\ncapabilities = [{{name = \"a.b\", confidence = {conf}, latency_weight = {w}}}]\n")
        };
        ms.insert_text("zed", "zed.toml", &m(0.9, 1.0));
        ms.insert_text("amy", "amy.toml", &m(0.9, 1.0));
        ms.insert_text("bob", "bob.toml", &m(0.9, 0.5));
        ms.insert_text("low", "low.toml", &m(0.2, 0.1));
        ms.insert_text("bad", "bad.toml", "version = ");
        assert_eq!(ms.best_for("a.b.c", "nobody"), Some("bob"));
        assert_eq!(ms.best_for("a.b", "bob"), Some("amy"));
        assert_eq!(ms.best_for("x.y", "bob"), None);
        assert!(ms.get("bad").unwrap().is_err());
        assert!(ms.get("nobody").is_none());
        assert_eq!(ms.latency_weight("bob", "a.b"), 0.5);
        assert_eq!(ms.latency_weight("nobody", "a.b"), 1.0);
    }
}
