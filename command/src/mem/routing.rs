//! Routing's store needs for [`MemStore`]: runner settings and personas read from its files,
//! run logs written among them, and leases as files next to the ledgers as on disk (one
//! owner at a time, so a lease only guards against re-entry; it never expires by itself).

use agentx_clarify_core::{ClarifyError, Config};
use serde_json::{json, Value};

use crate::mem::MemStore;
use crate::paths;
use crate::store_leases::{LeaseStore, LeaseTake};
use crate::store_runs::{run_log_name, RunStore, RUNS_DIR};

/// A lease's file, next to the ledgers (the file store's name too).
pub fn lease_path(id: &str) -> String {
    format!("{}{id}.lease", paths::CLARIFICATIONS_DIR)
}

impl RunStore for MemStore {
    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        match self.file(paths::CONFIG) {
            None => Ok(Config::default()),
            Some(bytes) => Config::parse_bytes_with_runners(paths::CONFIG, &bytes),
        }
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
}

impl LeaseStore for MemStore {
    type Lease = String;

    fn take_lease(&self, id: &str, _ttl_ms: u64) -> Result<LeaseTake<String>, ClarifyError> {
        let path = lease_path(id);
        if self.file(&path).is_some() {
            return Ok(LeaseTake::Held {
                holder: String::from("another routing in this workspace"),
            });
        }
        self.put(
            &path,
            Some(json!({"holder": "memory"}).to_string().into_bytes()),
        );
        Ok(LeaseTake::Taken(path))
    }

    fn release_lease(&self, lease: String) {
        self.put(&lease, None);
    }

    fn lease_held(&self, id: &str) -> bool {
        self.file(&lease_path(id)).is_some()
    }
}
