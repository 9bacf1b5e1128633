#![doc = include_str!("../README.md")]
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
pub mod call;
pub mod config;
mod config_strict;
pub mod decided;
pub mod defaults;
pub mod delegation;
mod digest;
pub mod encoding;
pub mod envelope;
pub mod error;
pub mod events;
pub mod fold;
pub mod github;
pub mod input;
mod keep_unknown;
pub mod kinds;
pub mod layer4;
pub mod ledger;
pub mod listing;
pub mod migrate;
pub mod monitor;
pub mod names;
pub mod nearest;
pub mod notify;
pub mod ops;
pub mod origin;
pub mod render;
pub mod replies;
pub mod routing;
pub mod runners;
pub mod scope;
pub mod signals;
pub mod signing;
pub mod sorted_map;
pub mod stable_sort;
pub mod stats;
#[cfg(test)]
mod testkit;
pub mod time;
pub mod typos;

mod toml_read;
pub mod verify;
pub mod workflow;

pub use agents::{AgentStatus, Statuses};
pub use config::Config;
pub use error::ClarifyError;
pub use events::{Event, EventType};
pub use ledger::{Entry, EntryKind, Ledger, Record, Severity, Status};
pub use monitor::Report;
pub use ops::{act, request, Action, Applied, NewRequest};
pub use workflow::{Workflow, Workflows};

/// The crate version, reported by `version()` on every surface.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
