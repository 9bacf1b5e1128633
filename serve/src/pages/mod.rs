//! The inbox's pages, rendered on the server from the command layer's typed results and the
//! core's renderers. Every text from a ledger is escaped ([`crate::html::esc`]); threads go
//! out as the core's markdown *as text*, which `/assets/app.js` turns into HTML with the
//! playground's escaping converter. Which actions a page offers is the core's transition
//! table's answer for `human` — nothing here re-derives a protocol rule.

mod deliveries;
mod frame;
mod inbox;
mod thread;
mod views;

pub use inbox::inbox;
pub use thread::thread;
pub use views::{agents, audit, issue, stats};
