//! What routing reads and writes on disk besides ledgers: the runner settings, persona files
//! and run logs (`.agentx/state/runs/<id>.r<round>.<n>.json`, each name claimed with
//! create-new so two logs never share one).

use std::fs::OpenOptions;
use std::io::Write;

use agentx_clarify_command::paths;
use agentx_clarify_command::{run_log_name, RunStore, RUNS_DIR};
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::{ClarifyError, Config};
use serde_json::Value;

use crate::{io_error, DiskStore};

impl RunStore for DiskStore {
    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        let path = self.path(paths::CONFIG);
        match std::fs::read(&path) {
            Ok(bytes) => Config::parse_bytes_with_runners(paths::CONFIG, &bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(io_error("read", &path, &e)),
        }
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        let full = self.root().join(path);
        match std::fs::read(&full) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("read", &full, &e)),
        }
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        ClarificationId::parse(id)?;
        let dir = self.path(RUNS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, &e))?;
        let mut text = serde_json::to_vec_pretty(log).unwrap_or_default();
        text.push(b'\n');
        for n in 1..=u32::MAX {
            let name = run_log_name(id, round, n);
            let path = dir.join(&name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    file.write_all(&text)
                        .map_err(|e| io_error("write", &path, &e))?;
                    return Ok(format!("{RUNS_DIR}{name}"));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_error("create", &path, &e)),
            }
        }
        Err(ClarifyError::Internal {
            message: format!("no free run log name for {id} round {round}"),
        })
    }
}
