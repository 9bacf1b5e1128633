//! The files side of a [`MemStore`]: settings, workflows, manifests, keys, personas and run
//! logs, kept as the bytes a `DiskStore` would hold under the same paths, so parse errors and
//! pretty-printing are the disk's. Memory has no file modes: a private key is private to the
//! process that holds the store.

use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::names::is_workflow_name;
use agentx_clarify_core::people::People;
use agentx_clarify_core::{ClarifyError, Config, Workflows};
use serde_json::Value;

use crate::mem::MemStore;
use crate::store::delegations::{add_manifest, manifest_agent};
use crate::store::keys::{key_agent, key_path, KeyFile, KeyHalf};
use crate::store::paths::{self, KEYS_DIR, KEYS_GITIGNORE, KEYS_GITIGNORE_TEXT};
use crate::store::runs::{run_log_name, RUNS_DIR};
use crate::store::{with_people, Files};

impl Files for MemStore {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        let config = self.config_alone()?;
        with_people(self, config)
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        let mut workflows = Workflows::new();
        let files = self.files.borrow();
        for (path, bytes) in files.iter() {
            let Some(name) = path
                .strip_prefix(paths::WORKFLOWS_DIR)
                .and_then(|f| f.strip_suffix(".toml"))
            else {
                continue;
            };
            if is_workflow_name(name) {
                workflows.insert_bytes_as(name, path, bytes);
            }
        }
        Ok(workflows)
    }

    fn load_people(&self) -> Result<People, ClarifyError> {
        let bytes = self.file(paths::PEOPLE);
        if bytes.is_none() {
            return Ok(People::default());
        }
        // The agents no person may be: a broken config.toml names the defaults' (the
        // commands that read it report it themselves).
        let config = self
            .runner_config_alone()
            .or_else(|_| self.config_alone())
            .unwrap_or_default();
        People::from_settings(
            paths::PEOPLE,
            bytes.as_deref(),
            &config,
            &self.load_workflows()?,
        )
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        let mut manifests = Manifests::new();
        for (name, bytes) in self.files_in(paths::AGENTS_DIR) {
            if let Some(agent) = manifest_agent(&name) {
                add_manifest(&mut manifests, agent, Ok(&bytes));
            }
        }
        Ok(manifests)
    }

    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        let config = self.runner_config_alone()?;
        with_people(self, config)
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        let path = path.trim_start_matches("./");
        Ok(self
            .file(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        let text = serde_json::to_string_pretty(log).unwrap_or_default() + "\n";
        let mut n = 1;
        loop {
            let path = format!("{RUNS_DIR}{}", run_log_name(id, round, n));
            if self.file(&path).is_none() {
                self.put(&path, Some(text.into_bytes()));
                return Ok(path);
            }
            n += 1;
        }
    }

    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        Ok(self
            .files_in(KEYS_DIR)
            .into_iter()
            .filter_map(|(name, bytes)| Some((key_agent(&name, half)?.to_owned(), Ok(bytes))))
            .collect())
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        let (pub_path, secret_path) = (
            key_path(agent, KeyHalf::Public),
            key_path(agent, KeyHalf::Secret),
        );
        if let Some(existing) = [&pub_path, &secret_path]
            .into_iter()
            .find(|p| self.file(p).is_some())
        {
            return Err(ClarifyError::input(format!(
                "{existing} exists: keys are never replaced (remove both files of '{agent}' to make a new pair)"
            )));
        }
        if self.file(KEYS_GITIGNORE).is_none() {
            self.put(
                KEYS_GITIGNORE,
                Some(KEYS_GITIGNORE_TEXT.as_bytes().to_vec()),
            );
        }
        self.put(&secret_path, Some(format!("{secret}\n").into_bytes()));
        self.put(&pub_path, Some(format!("{public}\n").into_bytes()));
        Ok(())
    }

    fn init_files(&self) -> Result<Vec<String>, ClarifyError> {
        let mut created = self.add_dirs(&paths::INIT_DIRS);
        let mut files = self.files.borrow_mut();
        for (path, text) in paths::init_files() {
            if !files.contains_key(&path) {
                files.insert(path.clone(), text.as_bytes().to_vec());
                created.push(path);
            }
        }
        Ok(created)
    }
}

impl MemStore {
    /// `config.toml` without the people (what `load_people` checks names against).
    fn config_alone(&self) -> Result<Config, ClarifyError> {
        match self.text(paths::CONFIG) {
            None => Ok(Config::default()),
            Some(bytes) => Config::parse_bytes(paths::CONFIG, &bytes),
        }
    }

    fn runner_config_alone(&self) -> Result<Config, ClarifyError> {
        match self.file(paths::CONFIG) {
            None => Ok(Config::default()),
            Some(bytes) => Config::parse_bytes_with_runners(paths::CONFIG, &bytes),
        }
    }
}
