//! The inbox's pages, rendered on the server from the command layer's typed results. Every
//! text from a ledger is escaped ([`crate::html::esc`]) and shown as text. Which actions a
//! page offers is the core's transition table's answer for `human`, and what a decision
//! records is the core's `AnswerSpec::decision` — nothing here re-derives a protocol rule.

mod audit;
mod cards;
mod charts;
mod decide;
mod decisions;
mod deliveries;
mod frame;
mod history;
mod holding;
mod inbox;
mod stats;
mod thread;
mod views;

pub use audit::audit;
pub use decisions::decisions;
pub use inbox::inbox;
pub use stats::stats;
pub use thread::thread;
pub use views::{agents, issue};
