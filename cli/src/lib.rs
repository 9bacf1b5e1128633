//! # agentx-cli
//!
//! The imperative shell around `agentx-clarify-core`: it owns the clock and the files. Every
//! command follows one rhythm — resolve paths → lock → read → one clock read → pure decision →
//! atomic write → unlock → render → exit code — and no policy lives here.
//!
//! The library half ([`store`], [`commands`]) is shared with the Node binding, so the CLI and
//! Node scripts lock, write and report identically.
#![forbid(unsafe_code)]

pub mod clock;
pub mod commands;
pub mod json_api;
pub mod store;

pub use store::Workspace;
