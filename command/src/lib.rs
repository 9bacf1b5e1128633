//! # agentx-clarify-command
//!
//! The command layer of AgentX Clarify: every command's flow — validate → read → decide →
//! write → follow-up monitor → JSON shape — written **once**, generic over a [`Store`]. The
//! core decides; a store reads and writes; this crate puts the steps in order. It touches no
//! file, reads no clock (`now` is an argument) and builds for `wasm32-unknown-unknown`.
//!
//! A store has two sides (docs/protocol.md §21): [`Files`] (settings, workflows, manifests,
//! keys, personas, run logs) and [`State`] (ledgers, statuses, leases, the change feed); a
//! [`Store`] is both, and [`Sides`] joins any files side to any state side.
//! Stores: `DiskStore` (crate `agentx-clarify-store`: lock files, atomic renames) and
//! [`MemStore`] (here: tests, the wasm package, the playground). The CLI builds typed
//! commands from its arguments and calls the functions below; the Node store, the wasm
//! workspace, the MCP server and the vector runners call [`call`] with JSON.
//!
//! | module | the commands |
//! |---|---|
//! | [`mutation`] | `ask`, `answer`, `follow-up`, `resolve`, `escalate`, `abandon` |
//! | [`monitor`] | the monitor, alone (`monitor`) and after every command |
//! | [`query`] | `list`, `show`, `stats`, `verify`, `ready` |
//! | [`search`] | `search`; the `related` records of an ask |
//! | [`status`] | `hook start|finish`, `state` |
//! | [`migrate`] | `migrate` |
//! | [`route`] | `route`, `route --all`, `monitor --route`; the prompt and outcome views |
//! | [`layer4`] | `clarify check`, `gate`, `clarify audit` (docs/protocol.md §16) |
//! | [`keys`] | `keys new`, `keys list` |
//! | [`signals`] | `signals parse`, `signals ingest`, `signals resume-prompt` |
//! | [`delegate`] | `delegate request|accept|complete|reject|fail|show|list`; delegation timeouts, metrics and checks for the monitor, `stats` and `verify` |
//! | [`json`] | the JSON skin: [`call`] decodes an operation's typed input (the core's table) and runs it |
#![deny(clippy::indexing_slicing)]
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod claim;
pub mod decisions;
pub mod delegate;
pub mod file_map;
pub mod guard;
pub mod json;
pub mod keys;
pub mod layer4;
pub mod mem;
pub mod migrate;
pub mod monitor;
pub mod mutation;
pub mod query;
pub mod reopen;
pub mod route;
pub mod search;
pub mod seen;
pub mod signals;
pub mod status;
pub mod store;
pub use monitor::timeouts;

pub use guard::guarded;
pub use json::vector;
pub use json::{
    call, call_as, call_routed, check_network, run, OPERATIONS, OPERATION_NAMES, ROUTE_OPERATIONS,
};
pub use mem::{FileMap, MemStore};
pub use migrate::{migrate, MigrateOutcome};
pub use monitor::{monitor_after, run_monitor, MonitorRun};
pub use mutation::{act, act_as, ask, decide, decide_abandon, Mutation};
pub use query::{
    list, ready, show_id, show_issue, stats, stats_people, verify, Listed, ReadyOutcome,
    StatsOutcome, VerifyOutcome,
};
pub use reopen::reopen;
pub use route::{route, route_all, route_ids, Clock, Routed, RoutedAll, RunFor, Runner};
pub use status::{hook, state_get, state_set, HookEvent, HookOutcome, StateOutcome};
pub use store::feed::{Changed, Wake};
pub use store::leases::{LeaseGuard, LeaseTake};
pub use store::paths;
pub use store::runs::{run_log_name, RUNS_DIR};
pub use store::{with_people, Files, LedgerRead, RawLedger, Scope, Sides, State, Store};
