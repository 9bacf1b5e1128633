//! The server's bounds on what one door could otherwise take without end (issue 48): the
//! turns of background routing every door shares, and the open event streams of each
//! credential. Held by `hub::App`; the doors take a turn or a stream slot from here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;

/// Event streams (`/events`, A2A subscriptions) one credential may hold open at once: a
/// person's tabs, an agent's subscriptions; past it the stream is refused (429).
pub const STREAMS_PER_CREDENTIAL: usize = 16;

/// The turns of background routing (agent runs the hub starts on its own: `/mcp`'s and
/// `/a2a`'s `route: true`, a person's "route again"): `[mcp] max_routes` at once, the rest
/// waiting in order (tokio's semaphore is fair). Read once at start, like the allowed origins.
pub fn routing_turns(ws: &agentx_clarify_workspace::Workspace) -> Arc<Semaphore> {
    let store = ws.current();
    let max = store
        .files
        .settings()
        .config()
        .map_or(agentx_clarify_core::config::DEFAULT_MCP_MAX_ROUTES, |c| {
            c.mcp_max_routes
        });
    let permits = usize::try_from(max.max(1)).unwrap_or(1);
    Arc::new(Semaphore::new(permits))
}

/// Open event streams by credential (a token's id, or a session opened by the one-time link).
#[derive(Default)]
pub struct Streams(Arc<Mutex<HashMap<String, usize>>>);

/// One open stream; its slot is given back when it is dropped (the stream ended).
pub struct StreamSlot {
    all: Arc<Mutex<HashMap<String, usize>>>,
    key: String,
}

impl Streams {
    /// A slot for one more stream of `key`, or `None` when it holds
    /// [`STREAMS_PER_CREDENTIAL`] already.
    pub fn open(&self, key: &str) -> Option<StreamSlot> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = all.entry(key.to_owned()).or_default();
        if *n >= STREAMS_PER_CREDENTIAL {
            return None;
        }
        *n += 1;
        Some(StreamSlot {
            all: Arc::clone(&self.0),
            key: key.to_owned(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut all = self.all.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = all.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                all.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_holds_at_most_its_streams_and_gets_them_back() {
        let streams = Streams::default();
        let held: Vec<StreamSlot> = (0..STREAMS_PER_CREDENTIAL)
            .map(|_| streams.open("tok_a").unwrap())
            .collect();
        assert!(streams.open("tok_a").is_none());
        assert!(
            streams.open("tok_b").is_some(),
            "another credential is not held back"
        );
        drop(held);
        assert!(streams.open("tok_a").is_some());
        assert!(streams.0.lock().unwrap().get("tok_b").is_none());
    }
}
