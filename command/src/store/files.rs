//! The **files** side of a workspace (docs/protocol.md §21): what its owner edits or the hub
//! writes beside the state and never shares through a database — settings, workflows,
//! capability manifests, signing keys, personas and run logs. Always the workspace directory
//! (`DiskStore`), or memory (`MemStore`); a database store never implements it.

use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::people::People;
use agentx_clarify_core::{ClarifyError, Config, Workflows};
use serde_json::Value;

use crate::store::keys::{KeyFile, KeyHalf};

/// `config` carrying the workspace's people (docs/protocol.md §37), for the writes that
/// escalate and the decisions that check who decides; unchanged when no person is defined,
/// so a workspace without `people.toml` writes exactly what it wrote before.
pub fn with_people<F: Files + ?Sized>(
    files: &F,
    mut config: Config,
) -> Result<Config, ClarifyError> {
    let people = files.load_people()?;
    if people.is_defined() {
        let workflows = files.load_workflows()?;
        config.people = agentx_clarify_core::people::PeopleSettings::shared(people, &workflows);
    }
    Ok(config)
}

/// A workspace's files. Reads never lock: a setting is read as it is when the command starts.
pub trait Files {
    /// `.agentx/config.toml`; defaults when absent. It carries the people of `people.toml`
    /// ([`with_people`]): a `people.toml` that does not parse fails it as a bad
    /// `config.toml` does (who decides is part of every write that can escalate).
    fn load_config(&self) -> Result<Config, ClarifyError>;

    /// Every workflow (parsed lazily, when a request uses it).
    fn load_workflows(&self) -> Result<Workflows, ClarifyError>;

    /// `.agentx/people.toml` (docs/protocol.md §37), checked against the workspace's agents;
    /// no people when absent (then every command behaves as before people existed).
    fn load_people(&self) -> Result<People, ClarifyError>;

    /// Every capability manifest, by agent. A manifest that cannot be read or parsed is kept
    /// as its error (it fails only what needs that agent's manifest); only a directory that
    /// cannot be listed fails.
    fn load_manifests(&self) -> Result<Manifests, ClarifyError>;

    /// The settings with their runner tables (`Config::parse_with_runners`): a bad runner
    /// table is `CONFIG_INVALID` here.
    fn load_runner_config(&self) -> Result<Config, ClarifyError>;

    /// A persona file's text (path relative to the workspace root, as configured: the
    /// settings are the workspace owner's, like the commands they run); `None` when it does
    /// not exist.
    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError>;

    /// Writes one run log under the first free number `n` (from 1) and returns its path
    /// relative to the workspace root.
    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError>;

    /// Every `<agent><ext>` file of `.agentx/keys/` for `half`, in name order (none when the
    /// directory is missing). Names that are not `<name><ext>` are skipped.
    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError>;

    /// Writes a new key pair of `agent` (the private file readable by its owner only) and the
    /// directory's `.gitignore` when missing. Never replaces a key: an existing file of
    /// either half is `INVALID_INPUT` and nothing is written.
    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError>;

    /// Creates what a new workspace needs (the default workflows and settings, the state
    /// area) without touching anything that exists; returns what it created.
    fn init_files(&self) -> Result<Vec<String>, ClarifyError>;
}
