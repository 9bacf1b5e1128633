//! The files side of the workspace directory (docs/protocol.md §21): settings, workflows,
//! capability manifests, signing keys, personas and run logs. Every read goes through the one
//! reader (`read.rs`) that refuses FIFOs, devices and links.

use std::io::Write;
use std::path::{Path, PathBuf};

use agentx_clarify_command::paths::{KEYS_DIR, KEYS_GITIGNORE, KEYS_GITIGNORE_TEXT};
use agentx_clarify_command::store::delegations::{add_manifest, manifest_agent};
use agentx_clarify_command::store::keys::{key_agent, key_path, KeyFile, KeyHalf};
use agentx_clarify_command::{paths, run_log_name, with_people, Files, RUNS_DIR};
use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::names::{is_workflow_name, ClarificationId};
use agentx_clarify_core::people::People;
use agentx_clarify_core::{ClarifyError, Config, Workflows};
use serde_json::Value;

use crate::{init, inside, io_error, read, DiskStore};

impl DiskStore {
    /// `config.toml` without the people (what `load_people` checks names against).
    fn config_alone(&self) -> Result<Config, ClarifyError> {
        let path = self.path(paths::CONFIG);
        let file = self.relative(&path);
        self.check_layout()?;
        let config = read::read_setting(&path, &file, |bytes| Config::parse_bytes(&file, bytes))?
            .unwrap_or_default();
        read::set_max_file_bytes(config.max_file_bytes);
        Ok(config)
    }

    fn runner_config_alone(&self) -> Result<Config, ClarifyError> {
        self.check_layout()?;
        let path = self.path(paths::CONFIG);
        let config = read::read_setting(&path, paths::CONFIG, |bytes| {
            Config::parse_bytes_with_runners(paths::CONFIG, bytes)
        })?
        .unwrap_or_default();
        read::set_max_file_bytes(config.max_file_bytes);
        Ok(config)
    }
}

impl Files for DiskStore {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        let config = self.config_alone()?;
        with_people(self, config)
    }

    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        let config = self.runner_config_alone()?;
        with_people(self, config)
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        let mut workflows = Workflows::new();
        let dir = self.path(paths::WORKFLOWS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(workflows),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let path = entry.path();
                let name = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".toml")?
                    .to_owned();
                is_workflow_name(&name).then_some((name, path))
            })
            .collect();
        files.sort();
        for (name, path) in files {
            let file = self.relative(&path);
            // A file that cannot be read (a FIFO, a directory) fails only the requests that
            // use it, like one that does not parse.
            let read = read::read_setting(&path, &file, |bytes| {
                workflows.insert_bytes_as(&name, &file, bytes);
                Ok(())
            });
            if let Err(e) = read {
                workflows.insert_error(&name, e);
            }
        }
        Ok(workflows)
    }

    fn load_people(&self) -> Result<People, ClarifyError> {
        let path = self.path(paths::PEOPLE);
        let file = self.relative(&path);
        let Some(bytes) = read::read_setting(&path, &file, |bytes| Ok(bytes.to_vec()))? else {
            return Ok(People::default());
        };
        // The agents no person may be: a broken config.toml names the defaults' (the
        // commands that read it report it themselves).
        let config = self
            .runner_config_alone()
            .or_else(|_| self.config_alone())
            .unwrap_or_default();
        People::from_settings(&file, Some(&bytes), &config, &self.load_workflows()?)
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        let mut manifests = Manifests::new();
        let dir = self.path(paths::AGENTS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(manifests),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_owned();
                let agent = manifest_agent(&name)?.to_owned();
                Some((agent, entry.path()))
            })
            .collect();
        files.sort();
        for (agent, path) in files {
            let file = self.relative(&path);
            let read = read::read_setting(&path, &file, |bytes| {
                add_manifest(&mut manifests, &agent, Ok(bytes));
                Ok(())
            });
            if let Err(e) = read {
                add_manifest(&mut manifests, &agent, Err(e));
            }
        }
        Ok(manifests)
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        let relative = Path::new(path);
        if !crate::runs::is_inside(relative) {
            return Err(ClarifyError::ConfigInvalid {
                file: paths::CONFIG.to_owned(),
                location: None,
                message: format!(
                    "the persona file '{path}' must be a relative path inside the workspace (no '..', not absolute)"
                ),
            });
        }
        let full = self.root().join(relative);
        // Every directory on the way is a real one: a linked `.github/agents/` leads out.
        if let Some(parent) = full.parent() {
            crate::runs::check_components(self.root(), parent)?;
        }
        read::read_setting(&full, path, |bytes| {
            Ok(String::from_utf8_lossy(bytes).into_owned())
        })
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        ClarificationId::parse(id)?;
        let dir = self.path(RUNS_DIR);
        inside::make_dir(&dir)?;
        crate::runs::state_gitignore(&self.path(crate::runs::STATE_GITIGNORE))?;
        let mut text = serde_json::to_vec_pretty(log).unwrap_or_default();
        text.push(b'\n');
        for n in 1..=u32::MAX {
            let name = run_log_name(id, round, n);
            let path = dir.join(&name);
            // create-new + O_NOFOLLOW, 0600: a regular file there is another run's log (take
            // the next name); a link or a FIFO there is refused by name.
            if let Some(mut file) = inside::create_new(&path, 0o600)? {
                file.write_all(&text)
                    .map_err(|e| io_error("write", &path, &e))?;
                return Ok(format!("{RUNS_DIR}{name}"));
            }
        }
        Err(ClarifyError::Internal {
            message: format!("no free run log name for {id} round {round}"),
        })
    }

    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        let dir = self.path(KEYS_DIR);
        // Keys read through a linked directory would be someone else's.
        if !crate::inside::check_dir(&dir)? {
            return Ok(Vec::new());
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("read", &dir, &e)),
        };
        let mut names: Vec<(String, std::path::PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_owned();
                let agent = key_agent(&name, half)?.to_owned();
                Some((agent, entry.path()))
            })
            .collect();
        names.sort();
        Ok(names
            .into_iter()
            .map(|(agent, path)| {
                let read = crate::keys::read_key(&path, &agent, half);
                (agent, read)
            })
            .collect())
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        // A linked keys directory (or .agentx/) is refused: a key pair is never written
        // outside the workspace (docs/protocol.md §31).
        crate::inside::make_dir(&self.path(KEYS_DIR))?;
        let (pub_path, secret_path) = (
            self.path(&key_path(agent, KeyHalf::Public)),
            self.path(&key_path(agent, KeyHalf::Secret)),
        );
        if let Some(existing) = [&pub_path, &secret_path]
            .into_iter()
            .find(|p| std::fs::symlink_metadata(p).is_ok())
        {
            return Err(ClarifyError::input(format!(
                "{} exists: keys are never replaced (remove both files of '{agent}' to make a new pair)",
                existing.display()
            )));
        }
        // An existing .gitignore is the user's (whether it ignores the key is for `keys new` to
        // check); a link there is refused, never written through.
        crate::inside::write_new(
            &self.path(KEYS_GITIGNORE),
            KEYS_GITIGNORE_TEXT.as_bytes(),
            0o644,
        )?;
        crate::keys::create_new(&secret_path, &format!("{secret}\n"), 0o600)?;
        if let Err(e) = crate::keys::create_new(&pub_path, &format!("{public}\n"), 0o644) {
            // Half a pair is no key: take the private half back.
            let _ = std::fs::remove_file(&secret_path);
            return Err(e);
        }
        Ok(())
    }

    fn init_files(&self) -> Result<Vec<String>, ClarifyError> {
        init::init(self)
    }
}
