//! Notifications (the `[[notify]]` sinks): which sink is told of what, and what each kind of
//! sink sends. Pure, like the rest of the core: the shells read secrets, sign, send, retry.
//! Not reachable from the wasm package's exports, so it costs that module nothing.

pub mod config;
pub mod event;
pub mod outbox;
pub mod slack_app;
pub mod slack_interaction;

pub use config::{address, display_url, parse_sinks, EventName, SecretFrom, Sink, SinkKind};
pub use event::{Event, Outgoing};
pub use outbox::{Delivery, Outbox};
