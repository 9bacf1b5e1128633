//! What routing reads from and writes to a workspace besides ledgers: the runner tables
//! (`[agents.*]` of the settings), persona files, and the run logs
//! (`.agentx/state/runs/<id>.r<round>.<n>.json`, docs/protocol.md §14.2 step 4).

use agentx_clarify_core::{ClarifyError, Config};
use serde_json::Value;

use crate::store::Store;

/// Where run logs live, relative to the workspace root.
pub const RUNS_DIR: &str = ".agentx/state/runs/";

/// The name of the `n`th run log of record `id` in round `round`.
pub fn run_log_name(id: &str, round: u32, n: u32) -> String {
    format!("{id}.r{round}.{n}.json")
}

/// A store that routing can run on.
pub trait RunStore: Store {
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
}
