//! # agentx-clarify-core
//!
//! The pure decision core of AgentX Clarify. **It reads no clock, no file, no environment
//! variable, spawns no thread and opens no connection**: time enters as `now` (Unix epoch
//! milliseconds), ledgers, statuses, workflows and settings enter as data, and every decision
//! comes back as data — new ledgers, events, reports, or a typed error with a stable code.
//! `core/clippy.toml` forbids clocks, files, env, threads and hash-order iteration, and CI
//! builds this crate for `wasm32-unknown-unknown`. The CLI and the Node store own the clock
//! and the files; the bindings only convert.
//!
//! Map of the crate:
//! - [`ledger`]: the per-issue ledger, the fold of a thread, the hash chain;
//! - [`ops`]: the clarification state machine (request, answer, follow-up, resolve, …);
//! - [`scope`], [`workflow`], [`config`]: who may ask whom, round limits, SLAs;
//! - [`agents`]: agent statuses and how operations change them;
//! - [`monitor`]: stale → retry → escalate, stuck, deadlock, abandoned;
//! - [`verify`], [`views`], [`stats`], [`render`]: reading, checking and showing;
//! - [`api`]: the JSON facade every surface calls, so all share one spelling.
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

pub mod agents;
pub mod api;
pub mod config;
pub mod defaults;
pub mod error;
pub mod events;
mod extensible;
pub mod ledger;
pub mod monitor;
pub mod names;
pub mod ops;
mod order;
pub mod render;
pub mod scope;
pub mod stats;
pub mod time;
mod toml_value;
pub mod verify;
pub mod views;
pub mod workflow;

pub use agents::{AgentStatus, Statuses};
pub use config::Config;
pub use error::ClarifyError;
pub use events::{Event, EventType};
pub use ledger::{Entry, EntryKind, Ledger, Record, Status};
pub use monitor::Report;
pub use ops::{act, request, Action, Applied, NewRequest};
pub use workflow::{Workflow, Workflows};

/// The crate version, reported by `version()` on every surface.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
