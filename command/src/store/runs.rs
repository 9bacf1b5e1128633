//! What routing reads from and writes to a workspace besides ledgers: the runner tables
//! (`[agents.*]` of the settings), persona files, and the run logs
//! (`.agentx/state/runs/<id>.r<round>.<n>.json`, docs/protocol.md §14.2 step 4): the
//! [`Files`](crate::store::Files) side's `load_runner_config`, `read_persona` and `write_run_log`.

/// Where run logs live, relative to the workspace root.
pub const RUNS_DIR: &str = ".agentx/state/runs/";

/// The name of the `n`th run log of record `id` in round `round`.
pub fn run_log_name(id: &str, round: u32, n: u32) -> String {
    format!("{id}.r{round}.{n}.json")
}
