//! Global settings from `.agentx/config.toml` (docs/protocol.md §6.3); every key optional.

use serde::{Deserialize, Serialize};

use crate::error::ClarifyError;
use crate::names::is_workflow_name;
use toml::de::DeTable;

use crate::toml_read::{get, Source};

/// The `[clarify]` settings, defaults filled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// Deadlock breaking: earlier = higher priority; unknown agents rank lowest.
    pub priority: Vec<String>,
    /// Jaccard similarity strictly above this counts as repetition.
    pub stuck_similarity: f64,
    /// Automatic retries of a stale clarification before escalation.
    pub max_retries: u32,
    pub max_topic_chars: u32,
    pub max_body_chars: u32,
    pub lock_timeout_ms: u64,
    pub stale_lock_ms: u64,
    pub default_workflow: String,
    /// The `[audit]` settings.
    pub audit: AuditConfig,
    /// `[clarify] related`: whether every ask returns the records decided before in other
    /// issues (docs/protocol.md §36).
    pub related: RelatedMode,
    /// `[clarify] related_min_score`: the text score (0–100) a record of another issue needs
    /// to be `related` (one of the asked field is, whatever its score).
    pub related_min_score: u8,
    /// Runners from the `[agents.*]` tables (docs/protocol.md §14.1), read by
    /// [`Config::parse_with_runners`]. Not part of the JSON form: only the shells that start
    /// processes use them.
    #[serde(skip)]
    pub agents: crate::runners::Runners,
    /// `[clarify] route_on_retry`: `monitor` routes every record it retried, as `monitor
    /// --route` does (docs/protocol.md §14.2). Read with the runners, by [`Config::parse_with_runners`].
    #[serde(skip)]
    pub route_on_retry: bool,
    /// `[clarify] max_file_bytes` (docs/protocol.md §31): the most a ledger or the status file may hold
    /// before a read refuses it. Settings, workflows and personas are capped at 1 MiB.
    #[serde(skip)]
    pub max_file_bytes: u64,
    /// `[mcp] max_routes` (docs/protocol.md §31): background routings an MCP server runs at once.
    #[serde(skip)]
    pub mcp_max_routes: u32,
    /// `[mcp] elicit` (docs/protocol.md §24): whom a wait on one's own escalated record may ask.
    #[serde(skip)]
    pub mcp_elicit: ElicitPolicy,
    /// `[serve] allowed_origins` (docs/protocol.md §24): browser origins besides the server's own.
    #[serde(skip)]
    pub serve_allowed_origins: Vec<String>,
    /// `[people] default_deciders` (docs/protocol.md §37): who decides a record whose step
    /// names no deciders; `None` = every defined person.
    #[serde(skip)]
    pub default_deciders: Option<Vec<String>>,
    /// `[people] claim_timeout_minutes` (docs/protocol.md §37): how long a claim or handoff
    /// holds an escalated record before the monitor assigns it again.
    #[serde(skip)]
    pub claim_timeout_minutes: u32,
    /// The people of `people.toml` and the workflows their deciders are read from, handed
    /// in by the shell that read them (docs/protocol.md §37); `None`: no people defined.
    #[serde(skip)]
    pub people: Option<std::sync::Arc<crate::people::PeopleSettings>>,
}

/// `[clarify] related` (docs/protocol.md §36): `suggest` (the default) returns up to three
/// resolved records of other issues with every ask; `off` returns none. Never resolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelatedMode {
    #[default]
    Suggest,
    Off,
}

/// The default of `[clarify] related_min_score`.
pub const DEFAULT_RELATED_MIN_SCORE: u8 = 60;

/// `[mcp] elicit` (docs/protocol.md §24): who is asked, through MCP elicitation, to decide an
/// escalated record its requester waits on. An escalation a person made is never put back to
/// the requester's client, whatever the policy (the person escalated it to have someone else
/// decide).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitPolicy {
    /// The person at the requester's own client (`true` in earlier versions): the default
    /// while a workspace defines no people.
    #[default]
    Requester,
    /// Nobody (`false` in earlier versions).
    Never,
}

impl ElicitPolicy {
    /// `"requester"` or `"never"`, and the booleans of earlier versions (`true`, `false`).
    pub fn parse(text: &str) -> Option<ElicitPolicy> {
        match text {
            "requester" => Some(ElicitPolicy::Requester),
            "never" => Some(ElicitPolicy::Never),
            _ => None,
        }
    }

    pub fn from_bool(on: bool) -> ElicitPolicy {
        if on {
            ElicitPolicy::Requester
        } else {
            ElicitPolicy::Never
        }
    }
}

/// Default of `[clarify] max_file_bytes`: 64 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;
/// `[store] timeout_ms` when the settings do not say (docs/protocol.md §32).
pub const DEFAULT_STORE_TIMEOUT_MS: u64 = 5_000;
/// Default of `[mcp] max_routes`.
pub const DEFAULT_MCP_MAX_ROUTES: u32 = 4;
const MAX_FILE_BYTES: (i64, i64) = (1 << 16, 1 << 32);
const MCP_MAX_ROUTES: (i64, i64) = (1, 64);

/// The `[audit]` settings (docs/protocol.md §16).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuditConfig {
    /// `verify` reports every unsigned entry as a problem.
    pub require_signatures: bool,
}

pub const DEFAULT_PRIORITY: &[&str] = &[
    "product-manager",
    "architect",
    "ux-designer",
    "engineer",
    "reviewer",
    "devops",
    "devops-engineer",
    "data-scientist",
    "tester",
    "customer-coach",
];

/// Suggestions: at most this many, each at most `MAX_SHORT_TEXT` characters.
pub const MAX_SUGGESTIONS: usize = 10;
/// Limit of `field`, each suggestion and `idempotencyKey`.
pub const MAX_SHORT_TEXT: usize = 200;

impl Default for Config {
    fn default() -> Self {
        Config {
            priority: DEFAULT_PRIORITY.iter().map(|s| (*s).to_owned()).collect(),
            stuck_similarity: 0.8,
            max_retries: 1,
            max_topic_chars: 200,
            max_body_chars: 2000,
            lock_timeout_ms: 5000,
            stale_lock_ms: 30_000,
            default_workflow: String::from("feature"),
            audit: AuditConfig::default(),
            related: RelatedMode::Suggest,
            related_min_score: DEFAULT_RELATED_MIN_SCORE,
            agents: crate::runners::Runners::default(),
            route_on_retry: false,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            mcp_max_routes: DEFAULT_MCP_MAX_ROUTES,
            mcp_elicit: ElicitPolicy::Requester,
            serve_allowed_origins: Vec::new(),
            default_deciders: None,
            claim_timeout_minutes: crate::people::DEFAULT_CLAIM_TIMEOUT_MINUTES,
            people: None,
        }
    }
}

/// `[mcp] elicit`: `"requester"`, `"never"`, or the `true`/`false` of earlier versions.
fn elicit_policy(
    src: &Source<'_>,
    v: &crate::toml_read::Value<'_>,
) -> Result<ElicitPolicy, ClarifyError> {
    if let toml::de::DeValue::Boolean(b) = v.get_ref() {
        return Ok(ElicitPolicy::from_bool(*b));
    }
    let refused = || {
        src.error_at(
            &v.span(),
            "elicit must be \"requester\" or \"never\" (or true or false, as before)",
        )
    };
    match v.get_ref() {
        toml::de::DeValue::String(s) => ElicitPolicy::parse(s).ok_or_else(refused),
        _ => Err(refused()),
    }
}

/// Whether `url` names a PostgreSQL database in libpq's URL form.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

fn to_u32(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The allowed ranges (inclusive) of the integer settings, for TOML and JSON alike.
const MAX_RETRIES: (i64, i64) = (0, 10);
const MAX_TOPIC_CHARS: (i64, i64) = (1, 10_000);
const MAX_BODY_CHARS: (i64, i64) = (1, 100_000);
const LOCK_TIMEOUT_MS: (i64, i64) = (1, 600_000);
const STALE_LOCK_MS: (i64, i64) = (1000, 3_600_000);

impl Config {
    /// Parses `config.toml`. Unknown keys and other tables are ignored (the file may hold
    /// other tools' settings); a wrongly typed or out-of-range value is `CONFIG_INVALID`.
    /// The runner tables are not read: see [`Config::parse_with_runners`].
    pub fn parse(file: &str, text: &str) -> Result<Config, ClarifyError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        Config::from_document(&src, root.get_ref())
    }

    /// [`Config::parse`] plus the `[agents.*]` runner tables (docs/protocol.md §14.1), which must be valid
    /// too. For the shells that start agents; the wasm package, which cannot, calls `parse`
    /// and so does not carry the runner reader (about 30 KB of the module).
    pub fn parse_with_runners(file: &str, text: &str) -> Result<Config, ClarifyError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        let mut config = Config::from_document(&src, root.get_ref())?;
        config.agents = crate::runners::Runners::parse(&src, root.get_ref())?;
        if let Some(section) = get(root.get_ref(), "clarify") {
            let c = src.table("clarify", section)?;
            if let Some(v) = get(c, "route_on_retry") {
                config.route_on_retry = src.boolean("route_on_retry", v)?;
            }
        }
        Ok(config)
    }

    fn from_document(src: &Source<'_>, root: &DeTable<'_>) -> Result<Config, ClarifyError> {
        let mut config = Config::default();
        crate::config_strict::check(src, root)?;
        if let Some(section) = get(root, "mcp") {
            let m = src.table("mcp", section)?;
            if let Some(v) = get(m, "max_routes") {
                let (min, max) = MCP_MAX_ROUTES;
                config.mcp_max_routes = to_u32(src.int("max_routes", v, min, max)?);
            }
            if let Some(v) = get(m, "elicit") {
                config.mcp_elicit = elicit_policy(src, v)?;
            }
        }
        if let Some(section) = get(root, "serve") {
            let s = src.table("serve", section)?;
            if let Some(v) = get(s, "allowed_origins") {
                config.serve_allowed_origins = src.strings(
                    "allowed_origins",
                    v,
                    ("origins", "origins like \"https://app.example.com\""),
                    |o| o.starts_with("https://") || o.starts_with("http://"),
                )?;
            }
        }
        if let Some(section) = get(root, "people") {
            people_section(src, src.table("people", section)?, &mut config)?;
        }
        if let Some(section) = get(root, "audit") {
            let a = src.table("audit", section)?;
            if let Some(v) = get(a, "require_signatures") {
                config.audit.require_signatures = src.boolean("require_signatures", v)?;
            }
        }
        let Some(section) = get(root, "clarify") else {
            return Ok(config);
        };
        let c = src.table("clarify", section)?;
        let key = |name: &str| get(c, name);
        if let Some(v) = key("priority") {
            config.priority = src.agents("priority", v)?;
        }
        if let Some(v) = key("stuck_similarity") {
            config.stuck_similarity = src.float("stuck_similarity", v, 0.0, 1.0, "0 to 1")?;
        }
        if let Some(v) = key("max_retries") {
            config.max_retries = to_u32(src.int("max_retries", v, MAX_RETRIES.0, MAX_RETRIES.1)?);
        }
        if let Some(v) = key("max_topic_chars") {
            let (min, max) = MAX_TOPIC_CHARS;
            config.max_topic_chars = to_u32(src.int("max_topic_chars", v, min, max)?);
        }
        if let Some(v) = key("max_body_chars") {
            let (min, max) = MAX_BODY_CHARS;
            config.max_body_chars = to_u32(src.int("max_body_chars", v, min, max)?);
        }
        if let Some(v) = key("lock_timeout_ms") {
            let (min, max) = LOCK_TIMEOUT_MS;
            config.lock_timeout_ms = to_u64(src.int("lock_timeout_ms", v, min, max)?);
        }
        if let Some(v) = key("stale_lock_ms") {
            let (min, max) = STALE_LOCK_MS;
            config.stale_lock_ms = to_u64(src.int("stale_lock_ms", v, min, max)?);
        }
        if let Some(v) = key("max_file_bytes") {
            let (min, max) = MAX_FILE_BYTES;
            config.max_file_bytes = to_u64(src.int("max_file_bytes", v, min, max)?);
        }
        if let Some(v) = key("related") {
            config.related = match src.string("related", v)?.as_str() {
                "suggest" => RelatedMode::Suggest,
                "off" => RelatedMode::Off,
                other => {
                    return Err(src.error_at(
                        &v.span(),
                        format!(
                            "related '{}' must be \"suggest\" or \"off\"",
                            crate::error::shown(other)
                        ),
                    ))
                }
            };
        }
        if let Some(v) = key("related_min_score") {
            let n = src.int("related_min_score", v, 0, 100)?;
            config.related_min_score = u8::try_from(n).unwrap_or(DEFAULT_RELATED_MIN_SCORE);
        }
        if let Some(v) = key("default_workflow") {
            let name = src.string("default_workflow", v)?;
            if !is_workflow_name(&name) {
                return Err(src.error_at(
                    &v.span(),
                    format!("default_workflow '{name}' must match ^[a-z0-9][a-z0-9_-]{{0,63}}$"),
                ));
            }
            config.default_workflow = name;
        }
        Ok(config)
    }

    /// Parses the bytes of `config.toml` as read from disk: a UTF-8 BOM is skipped, invalid
    /// UTF-8 is `CONFIG_INVALID` with the file and byte offset (never an I/O error).
    pub fn parse_bytes(file: &str, bytes: &[u8]) -> Result<Config, ClarifyError> {
        Config::parse(file, crate::toml_read::toml_text(file, bytes)?)
    }

    /// The `[store] url` of `config.toml` (docs/protocol.md §19): where the workspace's state lives when it
    /// is not in the files. `None` without one (or with an empty one); anything but a
    /// `postgres://` or `postgresql://` URL is `CONFIG_INVALID` at its position.
    pub fn store_url(file: &str, bytes: &[u8]) -> Result<Option<String>, ClarifyError> {
        let text = crate::toml_read::toml_text(file, bytes)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        crate::config_strict::check(&src, root.get_ref())?;
        let Some(section) = get(root.get_ref(), "store") else {
            return Ok(None);
        };
        let Some(v) = get(src.table("store", section)?, "url") else {
            return Ok(None);
        };
        let url = src.string("url", v)?;
        if url.is_empty() {
            return Ok(None);
        }
        if !is_postgres_url(&url) {
            return Err(src.error_at(
                &v.span(),
                "[store] url must be a postgres:// or postgresql:// URL",
            ));
        }
        Ok(Some(url))
    }

    /// The `[store] timeout_ms` of `config.toml` (docs/protocol.md §32): how long connecting
    /// to PostgreSQL and a write's statement may take, and how long `agentx serve` waits for
    /// the database to show progress before a request answers 503 (default 5000; 100 to
    /// 600000, else `CONFIG_INVALID` at its position).
    pub fn store_timeout_ms(file: &str, bytes: &[u8]) -> Result<u64, ClarifyError> {
        let text = crate::toml_read::toml_text(file, bytes)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        let Some(section) = get(root.get_ref(), "store") else {
            return Ok(DEFAULT_STORE_TIMEOUT_MS);
        };
        match get(src.table("store", section)?, "timeout_ms") {
            None => Ok(DEFAULT_STORE_TIMEOUT_MS),
            Some(v) => src.int("timeout_ms", v, 100, 600_000).map(to_u64),
        }
    }

    /// `[clarify] max_file_bytes` of a config file's bytes, when it holds a valid one (errors
    /// are for the settings' own reading to report); for the store, which needs the cap before
    /// it reads any ledger.
    pub fn max_file_bytes_in(bytes: &[u8]) -> Option<u64> {
        let text = crate::toml_read::toml_text("config.toml", bytes).ok()?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if !text.contains("max_file_bytes") {
            return None;
        }
        let src = Source {
            file: "config.toml",
            text,
        };
        let root = src.parse().ok()?;
        let c = src.table("clarify", get(root.get_ref(), "clarify")?).ok()?;
        let (min, max) = MAX_FILE_BYTES;
        src.int("max_file_bytes", get(c, "max_file_bytes")?, min, max)
            .ok()
            .map(to_u64)
    }

    /// [`Config::parse_bytes`] with the runner tables ([`Config::parse_with_runners`]).
    pub fn parse_bytes_with_runners(file: &str, bytes: &[u8]) -> Result<Config, ClarifyError> {
        Config::parse_with_runners(file, crate::toml_read::toml_text(file, bytes)?)
    }

    /// Checks a config given as JSON (API input) against the same ranges as the TOML form.
    pub fn validate(&self, file: &str) -> Result<(), ClarifyError> {
        let bad = |message: String| ClarifyError::ConfigInvalid {
            file: file.to_owned(),
            location: None,
            message,
        };
        if !(0.0..=1.0).contains(&self.stuck_similarity) {
            return Err(bad(format!(
                "stuckSimilarity must be from 0 to 1, found {}",
                self.stuck_similarity
            )));
        }
        let ranges = [
            ("maxRetries", u64::from(self.max_retries), MAX_RETRIES),
            (
                "maxTopicChars",
                u64::from(self.max_topic_chars),
                MAX_TOPIC_CHARS,
            ),
            (
                "maxBodyChars",
                u64::from(self.max_body_chars),
                MAX_BODY_CHARS,
            ),
            ("lockTimeoutMs", self.lock_timeout_ms, LOCK_TIMEOUT_MS),
            ("staleLockMs", self.stale_lock_ms, STALE_LOCK_MS),
        ];
        for (key, value, (min, max)) in ranges {
            // The ranges are positive: the casts cannot wrap.
            let (min, max) = (min.unsigned_abs(), max.unsigned_abs());
            if !(min..=max).contains(&value) {
                return Err(bad(format!(
                    "{key} must be an integer from {min} to {max}, found {value}"
                )));
            }
        }
        if self.related_min_score > 100 {
            return Err(bad(format!(
                "relatedMinScore must be an integer from 0 to 100, found {}",
                self.related_min_score
            )));
        }
        if let Some(p) = self
            .priority
            .iter()
            .find(|p| crate::names::check_agent(p).is_err())
        {
            return Err(bad(format!("priority holds an invalid agent name '{p}'")));
        }
        if !is_workflow_name(&self.default_workflow) {
            return Err(bad(format!(
                "defaultWorkflow '{}' is not a valid workflow name",
                self.default_workflow
            )));
        }
        Ok(())
    }

    /// Rank in `priority` (0 = highest); unknown agents rank below every known one.
    pub fn rank(&self, agent: &str) -> usize {
        self.priority
            .iter()
            .position(|p| p == agent)
            .unwrap_or(usize::MAX)
    }
}

/// `[people]` (docs/protocol.md §37): who decides by default, how long a claim holds.
fn people_section(
    src: &Source<'_>,
    p: &DeTable<'_>,
    config: &mut Config,
) -> Result<(), ClarifyError> {
    if let Some(v) = get(p, "default_deciders") {
        config.default_deciders = Some(crate::people::read_deciders(src, "default_deciders", v)?);
    }
    if let Some(v) = get(p, "claim_timeout_minutes") {
        // At least a minute, at most a week: a claim outlives a shift, not a holiday.
        let minutes = src.int("claim_timeout_minutes", v, 1, 7 * 24 * 60)?;
        config.claim_timeout_minutes = to_u32(minutes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Config::parse("config.toml", "").unwrap(), Config::default());
        assert_eq!(
            Config::parse("config.toml", "[other]\nx = 1\n").unwrap(),
            Config::default()
        );
    }

    #[test]
    fn reads_every_key() {
        let c = Config::parse(
            "config.toml",
            "[clarify]\npriority = [\n  \"architect\", # comment\n  \"engineer\",\n]\nstuck_similarity = 1\nmax_retries = 0\ndefault_workflow = \"bug\"\n",
        )
        .unwrap();
        assert_eq!(c.priority, vec!["architect", "engineer"]);
        assert!((c.stuck_similarity - 1.0).abs() < f64::EPSILON);
        assert_eq!(c.max_retries, 0);
        assert_eq!(c.default_workflow, "bug");
    }

    #[test]
    fn wrong_types_and_ranges_are_located() {
        let e = Config::parse("config.toml", "[clarify]\nmax_retries = \"two\"\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string()
                .starts_with("config.toml:2:15: max_retries must be an integer"),
            "{e}"
        );
        let e = Config::parse("config.toml", "[clarify]\n\nstuck_similarity = 1.5").unwrap_err();
        assert!(e.to_string().starts_with("config.toml:3:20:"), "{e}");
        let e = Config::parse("config.toml", "[clarify\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(e.to_string().starts_with("config.toml:1:"), "{e}");
    }

    #[test]
    fn floats_in_every_toml_spelling() {
        let similarity = |text: &str| {
            Config::parse(
                "config.toml",
                &format!("[clarify]\nstuck_similarity = {text}\n"),
            )
            .map(|c| c.stuck_similarity)
        };
        for (text, want) in [
            ("0.5", 0.5),
            ("+0.5", 0.5),
            ("5e-1", 0.5),
            ("5E-1", 0.5),
            ("0.000_5", 0.0005),
            ("1", 1.0),
            ("-0.0", 0.0),
            ("0.30000000000000004", 0.300_000_000_000_000_04),
        ] {
            let got = similarity(text).unwrap();
            assert!((got - want).abs() < f64::EPSILON, "{text}: {got}");
        }
        for text in ["inf", "+inf", "nan", "-0.5", "1.000_1"] {
            let e = similarity(text).unwrap_err();
            assert!(
                e.to_string()
                    .contains("stuck_similarity must be a number from 0 to 1"),
                "{text}: {e}"
            );
        }
        let c = Config {
            stuck_similarity: 1.5,
            ..Config::default()
        };
        let e = c.validate("config").unwrap_err();
        assert!(e.to_string().contains("found 1.5"), "{e}");
    }

    #[test]
    fn store_url_is_read_from_its_table() {
        let url = |t: &str| Config::store_url("config.toml", t.as_bytes());
        assert_eq!(url("").unwrap(), None);
        assert_eq!(url("[clarify]\nmax_retries = 2\n").unwrap(), None);
        assert_eq!(url("[store]\nurl = \"\"\n").unwrap(), None);
        assert_eq!(
            url("[store]\nurl = \"postgres://agentx@/hub?host=/tmp/s&port=5433\"\n").unwrap(),
            Some("postgres://agentx@/hub?host=/tmp/s&port=5433".to_owned())
        );
        let e = url("[store]\nurl = \"mysql://x\"\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(e.to_string().contains("config.toml:2:7"), "{e}");
        assert_eq!(
            url("[store]\nurl = 5\n").unwrap_err().code(),
            "CONFIG_INVALID"
        );
        assert_eq!(url("store = 1\n").unwrap_err().code(), "CONFIG_INVALID");
    }

    #[test]
    fn store_timeout_is_read_from_its_table_with_a_default() {
        let ms = |t: &str| Config::store_timeout_ms("config.toml", t.as_bytes());
        assert_eq!(ms("").unwrap(), DEFAULT_STORE_TIMEOUT_MS);
        assert_eq!(ms("[store]\nurl = \"\"\n").unwrap(), 5_000);
        assert_eq!(ms("[store]\ntimeout_ms = 2000\n").unwrap(), 2_000);
        let e = ms("[store]\ntimeout_ms = 10\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(e.to_string().contains("config.toml:2:"), "{e}");
        // A key of the strict table, so a typo of it is refused, not ignored.
        let typo = Config::store_url("config.toml", b"[store]\ntimeout = 2000\n").unwrap_err();
        assert!(typo.to_string().contains("timeout_ms"), "{typo}");
    }

    #[test]
    fn audit_section() {
        let c = Config::parse("config.toml", "[audit]\nrequire_signatures = true\n").unwrap();
        assert!(c.audit.require_signatures);
        assert_eq!(c.max_body_chars, Config::default().max_body_chars);
        let e = Config::parse("config.toml", "[audit]\nrequire_signatures = 1\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string()
                .starts_with("config.toml:2:22: require_signatures must be true or false"),
            "{e}"
        );
        let json: Config =
            serde_json::from_str(r#"{"audit": {"requireSignatures": true}}"#).unwrap();
        assert!(json.audit.require_signatures);
        assert!(
            !Config::parse("config.toml", crate::defaults::CONFIG_TOML)
                .unwrap()
                .audit
                .require_signatures
        );
    }

    #[test]
    fn people_default_deciders() {
        let c = Config::parse(
            "config.toml",
            "[people]\ndefault_deciders = [\"role:lead\", \"alice\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.default_deciders.as_deref(),
            Some(&["role:lead".to_owned(), "alice".to_owned()][..])
        );
        assert_eq!(
            Config::parse("config.toml", "").unwrap().default_deciders,
            None
        );
        let e = Config::parse("config.toml", "[people]\ndefault_deciders = [\"Role:x\"]\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("config.toml:2:21:"), "{e}");
        let typo = Config::parse("config.toml", "[people]\ndefault_decider = []\n").unwrap_err();
        assert!(
            typo.to_string()
                .contains("did you mean 'default_deciders'?"),
            "{typo}"
        );
    }

    #[test]
    fn ranks_unknown_agents_last() {
        let c = Config::default();
        assert!(c.rank("product-manager") < c.rank("engineer"));
        assert_eq!(c.rank("stranger"), usize::MAX);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_config_invalid_with_the_offset() {
        let e =
            Config::parse_bytes("config.toml", b"[clarify]\nmax_retries = 2 # \xff\n").unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert_eq!(
            e.to_string(),
            "config.toml:2:19: invalid UTF-8 (byte 0xff) at byte offset 28; the file must be UTF-8 text"
        );
        let bom = Config::parse_bytes("config.toml", b"\xEF\xBB\xBF[clarify]\nmax_retries = 2\n")
            .unwrap();
        assert_eq!(bom.max_retries, 2);
        assert_eq!(
            Config::parse("config.toml", "\u{feff}[clarify]\nmax_retries = 3\n")
                .unwrap()
                .max_retries,
            3
        );
    }
}
