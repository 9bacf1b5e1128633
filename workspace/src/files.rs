//! The files side of the workspace handle: the workspace directory's files (`DiskStore`), with
//! the settings — `config.toml`, `people.toml`, the workflows, the capability manifests — read once through
//! the store's careful reader and then answered from memory. Everything else (keys, personas,
//! run logs, `init`) goes to the directory as it is.

use std::path::Path;
use std::sync::OnceLock;

use agentx_clarify_command::store::keys::{KeyFile, KeyHalf};
use agentx_clarify_command::{paths, Files};
use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::people::{People, PeopleSettings};
use agentx_clarify_core::{ClarifyError, Config, Workflows};
use agentx_clarify_store::{DiskStore, SettingsStamp, DEFAULT_MAX_FILE_BYTES};
use agentx_clarify_store_any::Location;
use serde_json::Value;
use std::sync::Arc;

use crate::settings::Settings;

/// A workspace directory's files, its settings read once.
#[derive(Debug)]
pub struct WorkspaceFiles {
    disk: DiskStore,
    settings: Settings,
    /// How the settings files looked just before they were read (taken by a handle that
    /// looks again, [`crate::Workspace::open_watching`]).
    stamp: Option<SettingsStamp>,
    workflows: OnceLock<Result<Workflows, ClarifyError>>,
    manifests: OnceLock<Result<Manifests, ClarifyError>>,
    /// `people.toml`, read when first needed, once (stamped with the others).
    people: OnceLock<Result<People, ClarifyError>>,
    /// The people as every config carries them, built once from `people`.
    people_settings: OnceLock<Result<Option<Arc<PeopleSettings>>, ClarifyError>>,
}

impl WorkspaceFiles {
    /// Reads the settings of the workspace at `root`: its layout checked (docs/protocol.md
    /// §31), `config.toml` read once (absent: defaults), the ledgers' cap set from it.
    /// Workflows and manifests are read when first needed, once. `stamped`: the settings'
    /// stamp is taken first, for a later look.
    pub fn read(root: &Path, stamped: bool) -> Result<WorkspaceFiles, ClarifyError> {
        let disk = DiskStore::new(root);
        let stamp = stamped.then(|| disk.settings_stamp());
        disk.check_layout()?;
        let path = disk.path(paths::CONFIG);
        let bytes = agentx_clarify_store::read_settings(&path)?;
        let settings = Settings::new(paths::CONFIG, path.display().to_string(), bytes);
        agentx_clarify_store::set_max_file_bytes(
            settings.max_file_bytes().unwrap_or(DEFAULT_MAX_FILE_BYTES),
        );
        Ok(WorkspaceFiles {
            disk,
            settings,
            stamp,
            workflows: OnceLock::new(),
            manifests: OnceLock::new(),
            people: OnceLock::new(),
            people_settings: OnceLock::new(),
        })
    }

    pub fn root(&self) -> &Path {
        self.disk.root()
    }

    /// The directory's own files side (for what reads the directory itself, as `init`).
    pub fn disk(&self) -> &DiskStore {
        &self.disk
    }

    /// `config.toml`'s parts, as read.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Where the state lives: `AGENTX_STORE` (`env`, as read by the caller), else the
    /// settings' `[store] url`, else the files.
    pub fn location(&self, env: Option<&str>) -> Result<Location, ClarifyError> {
        let location = agentx_clarify_store_any::location_with(env, self.settings.store_url()?)?;
        if matches!(location, Location::Postgres(_)) {
            // `[store] timeout_ms` bounds this process's waits on the database (docs/protocol.md
            // §32): connecting, a write's statements, a server request.
            agentx_clarify_store_any::set_pg_timeout_ms(self.settings.store_timeout_ms()?);
        }
        Ok(location)
    }

    /// Whether the settings files look as they did when read (always, for a reading without
    /// a stamp: it is never looked at again).
    pub fn unchanged(&self) -> bool {
        self.stamp
            .as_ref()
            .is_none_or(|s| self.disk.settings_unchanged(s))
    }

    /// What every config this reading gives carries (docs/protocol.md §37).
    fn people_settings(&self) -> Result<Option<Arc<PeopleSettings>>, ClarifyError> {
        self.people_settings
            .get_or_init(|| {
                let workflows = self.workflows().as_ref().map_err(Clone::clone)?;
                Ok(PeopleSettings::shared(self.load_people()?, workflows))
            })
            .clone()
    }

    fn workflows(&self) -> &Result<Workflows, ClarifyError> {
        self.workflows.get_or_init(|| self.disk.load_workflows())
    }

    /// Typos in the settings: unknown `[clarify]` keys of `config.toml` and `clarify_*` step
    /// keys of the workflows, as `file:line:col: …; did you mean …?` (paths under the root
    /// given). Unreadable files say nothing here: the command that needs them reports them.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.settings.warnings();
        if let Ok(workflows) = self.workflows() {
            for (file, text) in workflows.texts() {
                let shown = self.disk.path(file).display().to_string();
                out.extend(agentx_clarify_core::typos::workflow_warnings(&shown, text));
            }
        }
        out
    }
}

impl Files for WorkspaceFiles {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        let mut config = self.settings.config()?.clone();
        config.people = self.people_settings()?;
        Ok(config)
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        self.workflows().clone()
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        self.manifests
            .get_or_init(|| self.disk.load_manifests())
            .clone()
    }

    fn load_people(&self) -> Result<People, ClarifyError> {
        self.people
            .get_or_init(|| {
                let path = self.disk.path(paths::PEOPLE);
                let Some(bytes) = agentx_clarify_store::read_settings(&path)? else {
                    return Ok(People::default());
                };
                // The agents no person may be: a broken config.toml names the defaults'
                // (the commands that read it report it themselves).
                let settings = &self.settings;
                let config = settings.runner_config().or_else(|_| settings.config());
                let workflows = self.workflows().as_ref().map_err(Clone::clone)?;
                People::from_settings(
                    paths::PEOPLE,
                    Some(&bytes),
                    config.unwrap_or(&Config::default()),
                    workflows,
                )
            })
            .clone()
    }

    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        let mut config = self.settings.runner_config()?.clone();
        config.people = self.people_settings()?;
        Ok(config)
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        self.disk.read_persona(path)
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        self.disk.write_run_log(id, round, log)
    }

    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        self.disk.key_files(half)
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        self.disk.create_key_pair(agent, public, secret)
    }

    fn init_files(&self) -> Result<Vec<String>, ClarifyError> {
        self.disk.init_files()
    }
}
