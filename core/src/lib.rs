#![doc = include_str!("../README.md")]
#![deny(clippy::indexing_slicing)]
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

// The core in wings: each section is one concern, its modules listed in core/README.md's map.

// --- The protocol: records, who may ask whom, the state machine and its events.
pub mod agents;
pub mod events;
pub mod kinds;
pub mod ledger;
pub mod names;
pub mod ops;
pub mod people;
pub mod replies;
pub mod scope;
pub mod workflow;

// --- The monitor: stale, stuck, deadlocked, abandoned; the next wake-up.
pub mod monitor;

// --- Reading ledgers back: checks, listings, statistics, migrations, decisions.
pub mod decided;
pub mod decisions;
pub mod encoding;
pub mod listing;
pub mod migrate;
pub mod search;
pub mod stats;
pub mod verify;

// --- Layer 4 (seed 001): plans of gaps, the gate, the audit.
pub mod layer4;

// --- Signals in agent output and delegation (seeds 002 and 003).
pub mod delegation;
pub mod signals;

// --- Routing a record to its agent: invocations, runners, replies read back.
pub mod routing;
pub mod runners;

// --- Delivery policies: the notification outbox and GitHub Mode.
pub mod github;
pub mod notify;

// --- Settings: config.toml, the default workflows, typos and the nearest known key.
pub mod config;
mod config_strict;
pub mod defaults;
pub mod nearest;
mod toml_read;
pub mod typos;

// --- Rendering and what a network door compares or hides.
pub mod origin;
pub mod render;

// --- The wire: the envelope, errors, one typed input per operation, the JSON facade.
pub mod api;
pub mod call;
pub mod envelope;
pub mod error;
pub mod input;

// --- Support: hashing, signing, folding, time, small containers.
mod digest;
pub mod fold;
mod keep_unknown;
pub mod signing;
pub mod sorted_map;
pub mod stable_sort;
#[cfg(test)]
mod testkit;
pub mod time;

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
