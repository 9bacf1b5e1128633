//! What routing needs besides ledgers, with the state in PostgreSQL: the runner settings and
//! persona files are the workspace's files (shared through git, like every setting), and run
//! logs are written as files on the machine that ran the agent — a log is that machine's
//! diagnostics (the agent's output, its exit, its timing), the ledger written after the run
//! is what the hub shares (docs/decisions.md "Scale").

use agentx_clarify_command::RunStore;
use agentx_clarify_core::{ClarifyError, Config};
use serde_json::Value;

use crate::PgStore;

impl RunStore for PgStore {
    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        self.files.load_runner_config()
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        self.files.read_persona(path)
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        self.files.write_run_log(id, round, log)
    }
}
