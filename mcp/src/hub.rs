//! The one seam between the server and the workspace. Tools reach the hub through typed calls
//! of the command layer ([`Hub::with_store`]: Rust values in and out on the workspace handle's
//! store, JSON only in the MCP payloads) or, for what runs an agent (routing, with the
//! handle's runner) and the reports, through [`Hub::call`]: an operation name and a JSON input
//! in, the CLI's `--json` envelope out (`{"ok":true,…}` or `{"ok":false,"error":{code,message}}`),
//! run by the workspace handle the server was built on ([`Workspace::call_routed`]).
//! `agentx mcp` (stdio) and `agentx serve`'s `/mcp` (HTTP) both build their hub here from
//! their workspace, so routing — a `preset = "a2a"` agent included — cannot differ between
//! them. What changed it learns from the store's change feed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use agentx_clarify_command::{Mutation, State};
use agentx_clarify_core::config::ElicitPolicy;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::{ClarifyError, Ledger};
use agentx_clarify_store_any::AnyCursor;
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde_json::Value;

/// A decision as a person gave it: the note, and the typed value for a question with an
/// answer kind (docs/protocol.md §22).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decided {
    pub message: Option<String>,
    pub value: Option<Value>,
}

/// How a ledger looked when checked: the feed's revision at which it last changed (0: not
/// since the server started looking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(u64);

/// The store's change feed as the server reads it: opened at the first look, then each
/// issue's latest change.
#[derive(Default)]
struct StoreFeed {
    open: Option<(Arc<WorkspaceStore>, AnyCursor)>,
    changed: BTreeMap<u32, u64>,
    /// The failure to open it was logged.
    logged: bool,
    /// The cursor's wake passed on to async waiters (a count bumped at every signal), once
    /// asked for; `None` inside when the store cannot signal.
    wake: Option<Option<tokio::sync::watch::Sender<u64>>>,
}

/// The issues whose ledgers changed, as a change feed announces them (`agentx serve`'s feed,
/// docs/protocol.md §23). With a feed, waits and resource subscriptions wake on its news instead of
/// looking at the ledgers on a timer. An empty list: anything may have changed (the feed
/// lost track), look again.
pub type Feed = tokio::sync::broadcast::Sender<Vec<u32>>;

/// A workspace, as the MCP server's tools reach it.
#[derive(Clone)]
pub struct Hub {
    ws: Arc<Workspace>,
    /// News pushed by the server around it (`agentx serve`'s feed), when there is one.
    feed: Option<Feed>,
    /// The store's own change feed, read when a wait or a subscription looks.
    cursor: Arc<Mutex<StoreFeed>>,
    /// The turns of background routing of the server around it, shared with its other doors
    /// (`agentx serve`: one `[mcp] max_routes` for `/mcp` and `/a2a`, docs/protocol.md §31).
    routes: Option<Arc<tokio::sync::Semaphore>>,
    /// The forms a 2026-07-28 client's person declined (agent, record, thread length): not
    /// offered again while the record stays as it was (`crate::mrtr`).
    declined: Arc<Mutex<std::collections::HashSet<(String, String, usize)>>>,
}

impl Hub {
    /// The hub of the workspace `ws`: every call runs on it, with its runner.
    pub fn new(ws: Arc<Workspace>) -> Self {
        Hub {
            ws,
            feed: None,
            cursor: Arc::default(),
            routes: None,
            declined: Arc::default(),
        }
    }

    /// The hub whose background routings take their turns from `turns` (the server's).
    pub fn with_routes(mut self, turns: Arc<tokio::sync::Semaphore>) -> Self {
        self.routes = Some(turns);
        self
    }

    /// Whether `agent`'s person declined the form of record `id` with `entries` entries.
    pub(crate) fn declined(&self, agent: &str, id: &str, entries: usize) -> bool {
        let key = (agent.to_owned(), id.to_owned(), entries);
        self.declined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&key)
    }

    /// Notes that `agent`'s person declined the form of record `id` as it is.
    pub(crate) fn decline(&self, agent: &str, id: &str, entries: usize) {
        let key = (agent.to_owned(), id.to_owned(), entries);
        self.declined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key);
    }

    /// The server's turns of background routing, when it shares them.
    pub(crate) fn routes(&self) -> Option<Arc<tokio::sync::Semaphore>> {
        self.routes.clone()
    }

    /// The hub woken by `feed` (every change of the store is announced on it).
    pub fn with_feed(mut self, feed: Feed) -> Self {
        self.feed = Some(feed);
        self
    }

    /// A receiver of the change feed, when there is one.
    pub fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<Vec<u32>>> {
        self.feed.as_ref().map(Feed::subscribe)
    }

    /// `[mcp] elicit` of the workspace's settings as last read (docs/protocol.md §24; default
    /// `requester`; unreadable settings: the default, as every other command would refuse them
    /// anyway). No look at the files: it is asked on the async threads, and every call brings
    /// the reading up to date, so an edit applies without restarting a session.
    pub fn elicit_setting(&self) -> ElicitPolicy {
        let store = self.ws.current();
        let elicit = store.files.settings().config().map(|c| c.mcp_elicit);
        elicit.unwrap_or_default()
    }

    /// Runs `f` on the workspace's store (files or PostgreSQL) off the async thread: the typed
    /// calls of the command layer, which take Rust values and give Rust values back (JSON is
    /// only the MCP payloads', docs/decisions.md "Typed calls inside MCP"). `what` names the
    /// call in the error of a call that did not finish.
    pub async fn with_store<T, F>(&self, what: &'static str, f: F) -> Result<T, ClarifyError>
    where
        T: Send + 'static,
        F: FnOnce(&WorkspaceStore, i64) -> Result<T, ClarifyError> + Send + 'static,
    {
        self.with_routing(what, move |store, _| {
            f(store, agentx_clarify_store::clock::system_now_ms())
        })
        .await
    }

    /// [`Hub::with_store`] with the workspace's runner, for the typed calls that run agents
    /// (`route`, the monitor's routing of what it retried), on the system clock.
    pub async fn with_routing<T, F>(&self, what: &'static str, f: F) -> Result<T, ClarifyError>
    where
        T: Send + 'static,
        F: FnOnce(
                &WorkspaceStore,
                &(dyn agentx_clarify_command::Runner + Sync),
            ) -> Result<T, ClarifyError>
            + Send
            + 'static,
    {
        let ws = Arc::clone(&self.ws);
        tokio::task::spawn_blocking(move || {
            let store = ws.store()?;
            f(&store, ws.runner())
        })
        .await
        .unwrap_or_else(|e| {
            Err(ClarifyError::Internal {
                message: format!("the store call '{what}' did not finish: {e}"),
            })
        })
    }

    /// One ledger as it is now (`None`: the issue has none).
    pub async fn ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        self.with_store("show", move |store, _| store.read_ledger(issue))
            .await
    }

    /// A person's decision through this server (docs/protocol.md §24: an elicitation's answer):
    /// the command layer's `decide` with `by`/`via` on the workspace's store.
    pub async fn decide_as(
        &self,
        id: String,
        decided: Decided,
        by: Attribution,
    ) -> Result<Mutation, ClarifyError> {
        self.with_store("decide", move |store, now| {
            agentx_clarify_command::decide(store, now, &id, decided.message, decided.value, &by)
        })
        .await
    }

    /// How ledger `issue` looks now, to compare with a later look: what the store's change
    /// feed has said of it (a look is a few `stat`s for files; for PostgreSQL a query only
    /// after a write was signalled).
    pub async fn version(&self, issue: u32) -> Version {
        let hub = self.clone();
        tokio::task::spawn_blocking(move || hub.look(issue))
            .await
            .unwrap_or(Version(0))
    }

    /// A receiver that changes at every signal of the store's change feed (file events,
    /// `NOTIFY`: docs/protocol.md §21), so a wait looks when something may have changed
    /// instead of on a timer. `None`: the server around it pushes news ([`Hub::with_feed`]),
    /// or the store cannot signal here (then the caller looks on its own timer).
    pub async fn wake(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        if self.feed.is_some() {
            return None;
        }
        let hub = self.clone();
        tokio::task::spawn_blocking(move || hub.open_wake())
            .await
            .ok()
            .flatten()
    }

    /// [`Hub::version`] of `issue`; of every ledger together for `None` (changes at any write).
    pub async fn version_of(&self, issue: Option<u32>) -> Version {
        match issue {
            Some(n) => self.version(n).await,
            None => {
                let hub = self.clone();
                tokio::task::spawn_blocking(move || {
                    hub.look(0);
                    let feed = hub.cursor.lock().unwrap_or_else(PoisonError::into_inner);
                    Version(feed.changed.values().copied().max().unwrap_or(0))
                })
                .await
                .unwrap_or(Version(0))
            }
        }
    }

    fn open_wake(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        let mut feed = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        if feed.wake.is_none() {
            self.open_feed(&mut feed);
            let wake = feed.open.as_mut().and_then(|(s, c)| s.wake(c));
            feed.wake = Some(wake.map(|wake| {
                let (tx, _) = tokio::sync::watch::channel(0u64);
                let bump = tx.clone();
                wake.on_fire(move || bump.send_modify(|n| *n = n.wrapping_add(1)));
                tx
            }));
        }
        feed.wake.as_ref()?.as_ref().map(|tx| tx.subscribe())
    }

    fn look(&self, issue: u32) -> Version {
        let mut feed = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        self.open_feed(&mut feed);
        let mut changed = None;
        if let Some((store, cursor)) = &mut feed.open {
            match store.changes(cursor) {
                Ok(c) => changed = c,
                Err(e) => tracing::warn!("the store's change feed: {e}"),
            }
        }
        if let Some(c) = changed {
            for n in c.issues {
                feed.changed.insert(n, c.revision);
            }
        }
        Version(feed.changed.get(&issue).copied().unwrap_or(0))
    }

    /// Opens the store's change feed at the first look (a failure is logged once).
    fn open_feed(&self, feed: &mut StoreFeed) {
        if feed.open.is_some() {
            return;
        }
        let opened = self
            .ws
            .store()
            .and_then(|store| store.feed().map(|cursor| (store, cursor)));
        match opened {
            Ok(open) => feed.open = Some(open),
            Err(e) if !feed.logged => {
                feed.logged = true;
                tracing::warn!("the store's change feed did not start: {e}");
            }
            Err(_) => {}
        }
    }

    /// [`Hub::call`] as `viewer` may see it (`None`: as it is). Over HTTP a read is narrowed
    /// to the records of the issues the token's agent takes part in: the one rule of every
    /// network door, `agentx_clarify_command::seen` (docs/protocol.md §23, issue 48).
    pub async fn call_seen_by(
        &self,
        viewer: Option<Arc<str>>,
        op: &'static str,
        input: Value,
    ) -> Value {
        use agentx_clarify_command::seen;
        let Some(agent) = viewer.filter(|_| seen::scoped(op)) else {
            return self.call(op, input).await;
        };
        let hub = self.clone();
        tokio::task::spawn_blocking(move || {
            let reply = hub.ws.call_routed(op, &input);
            if reply.get("ok") != Some(&Value::Bool(true)) {
                return reply;
            }
            let all = hub.ws.call_routed("list", &seen::all_records());
            if all.get("ok") != Some(&Value::Bool(true)) {
                // Whom the agent may see is unknown: nothing is shown.
                return all;
            }
            seen::scope(op, &input, reply, &seen::issues_of(&agent, &all))
        })
        .await
        .unwrap_or_else(|e| {
            agentx_clarify_core::envelope::refusal(
                "INTERNAL",
                &format!("the store call '{op}' did not finish: {e}"),
            )
        })
    }

    /// `reply` (a read's envelope, made by a typed call of `op` on `input`) as `viewer` may
    /// see it (`None`: as it is): the rule of [`Hub::call_seen_by`] for the typed reads.
    pub async fn seen_by(
        &self,
        viewer: Option<Arc<str>>,
        op: &'static str,
        input: Value,
        reply: Value,
    ) -> Value {
        use agentx_clarify_command::seen;
        let Some(agent) = viewer.filter(|_| seen::scoped(op)) else {
            return reply;
        };
        if reply.get("ok") != Some(&Value::Bool(true)) {
            return reply;
        }
        let all = self.call("list", seen::all_records()).await;
        if all.get("ok") != Some(&Value::Bool(true)) {
            // Whom the agent may see is unknown: nothing is shown.
            return all;
        }
        seen::scope(op, &input, reply, &seen::issues_of(&agent, &all))
    }

    /// Runs `op` off the async thread: a store call may wait for another process's lock.
    pub async fn call(&self, op: &'static str, input: Value) -> Value {
        let ws = Arc::clone(&self.ws);
        tokio::task::spawn_blocking(move || ws.call_routed(op, &input))
            .await
            .unwrap_or_else(|e| {
                agentx_clarify_core::envelope::refusal(
                    "INTERNAL",
                    &format!("the store call '{op}' did not finish: {e}"),
                )
            })
    }
}
