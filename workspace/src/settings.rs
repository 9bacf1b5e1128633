//! `config.toml` as one process knows it: its bytes, read once, and each part the shells
//! need — the `[clarify]`/`[audit]`/`[mcp]`/`[serve]` settings, the runner tables, `[store]
//! url`, the `[[notify]]` sinks, `[github]` — parsed from those bytes when first asked for
//! and kept. A part that does not parse fails only what needs it, as when each was read from
//! the file by itself: a broken `[github]` stops GitHub Mode, not `clarify ask`.

use std::sync::OnceLock;

use agentx_clarify_core::github::GithubConfig;
use agentx_clarify_core::notify::Sink;
use agentx_clarify_core::{ClarifyError, Config};

/// The parsed parts of one reading of `config.toml`.
#[derive(Debug)]
pub struct Settings {
    /// The file as errors name it (`.agentx/config.toml`).
    file: String,
    /// The file as warnings name it (its path under the root given).
    shown: String,
    /// Its bytes; `None` when there is no settings file (every part has its default).
    bytes: Option<Vec<u8>>,
    config: OnceLock<Result<Config, ClarifyError>>,
    runner_config: OnceLock<Result<Config, ClarifyError>>,
    store_url: OnceLock<Result<Option<String>, ClarifyError>>,
    store_timeout_ms: OnceLock<Result<u64, ClarifyError>>,
    sinks: OnceLock<Result<Vec<Sink>, ClarifyError>>,
    github: OnceLock<Result<Option<GithubConfig>, ClarifyError>>,
}

impl Settings {
    /// The settings of these bytes of `file` (`None`: no such file); `shown` names it in
    /// warnings.
    pub fn new(file: &str, shown: String, bytes: Option<Vec<u8>>) -> Settings {
        Settings {
            file: file.to_owned(),
            shown,
            bytes,
            config: OnceLock::new(),
            runner_config: OnceLock::new(),
            store_url: OnceLock::new(),
            store_timeout_ms: OnceLock::new(),
            sinks: OnceLock::new(),
            github: OnceLock::new(),
        }
    }

    /// `part`, parsed from the bytes once; `absent` when there is no file.
    fn part<'s, T>(
        &'s self,
        cell: &'s OnceLock<Result<T, ClarifyError>>,
        absent: impl FnOnce() -> T,
        parse: impl FnOnce(&str, &[u8]) -> Result<T, ClarifyError>,
    ) -> Result<&'s T, ClarifyError> {
        cell.get_or_init(|| match &self.bytes {
            None => Ok(absent()),
            Some(bytes) => parse(&self.file, bytes),
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// The file's bytes as read (`None`: no settings file), for a shell's own tables
    /// (`agentx serve`'s `[serve] metrics*`) without reading the file again.
    pub fn bytes(&self) -> Option<&[u8]> {
        self.bytes.as_deref()
    }

    /// The settings every command reads (`[clarify]`, `[audit]`, `[mcp]`, `[serve]`; every
    /// strict table's keys checked), without the runner tables.
    pub fn config(&self) -> Result<&Config, ClarifyError> {
        self.part(&self.config, Config::default, Config::parse_bytes)
    }

    /// [`Settings::config`] with the runner tables (`[agents.*]`), which must be valid too.
    pub fn runner_config(&self) -> Result<&Config, ClarifyError> {
        self.part(
            &self.runner_config,
            Config::default,
            Config::parse_bytes_with_runners,
        )
    }

    /// `[store] url`: where the state lives when it is not in the files.
    pub fn store_url(&self) -> Result<Option<&str>, ClarifyError> {
        self.part(&self.store_url, || None, Config::store_url)
            .map(Option::as_deref)
    }

    /// `[store] timeout_ms`: how long a wait on the database may show no progress
    /// (docs/protocol.md §32; 5000 without a settings file or the key).
    pub fn store_timeout_ms(&self) -> Result<u64, ClarifyError> {
        self.part(
            &self.store_timeout_ms,
            || agentx_clarify_core::config::DEFAULT_STORE_TIMEOUT_MS,
            Config::store_timeout_ms,
        )
        .copied()
    }

    /// The `[[notify]]` sinks (none without one).
    pub fn sinks(&self) -> Result<&[Sink], ClarifyError> {
        self.part(
            &self.sinks,
            Vec::new,
            agentx_clarify_core::notify::parse_sinks,
        )
        .map(Vec::as_slice)
    }

    /// The `[github]` table (GitHub Mode), `None` without one.
    pub fn github(&self) -> Result<Option<&GithubConfig>, ClarifyError> {
        self.part(
            &self.github,
            || None,
            agentx_clarify_core::github::parse_github,
        )
        .map(Option::as_ref)
    }

    /// `[clarify] max_file_bytes` when the file sets a valid one: the ledgers' cap, needed
    /// before any ledger is read (even by a command that never loads the settings).
    pub fn max_file_bytes(&self) -> Option<u64> {
        self.bytes.as_deref().and_then(Config::max_file_bytes_in)
    }

    /// Typos in `[clarify]`: `file:line:col: unknown …; did you mean …?` (the file as given).
    pub fn warnings(&self) -> Vec<String> {
        let Some(text) = self
            .bytes
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
        else {
            return Vec::new();
        };
        agentx_clarify_core::typos::config_warnings(&self.shown, text)
    }
}
