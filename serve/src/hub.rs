//! The server's shared state: what every request and every background task may need (the
//! workspace handle — its store, settings and runner, opened once —, the tokens, the
//! sessions, the change feed's channel, the open records), and the one way they call the
//! command layer. It sits below every route and task: the
//! route modules, the router (`router.rs`) and the tasks (`feed.rs`, `open_follow.rs`,
//! `worker.rs`) take [`App`] from here, and nothing here names a route or a task.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_clarify_core::ClarifyError;
use agentx_clarify_store_any::watch::{Abandoned, Watch};
use agentx_clarify_store_any::Location;
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use crate::open::OpenRecords;
use crate::sessions::{Logins, Sessions};
use crate::tokens::Tokens;

/// What changed, as the change feed (`feed.rs`) broadcasts it on [`App::changes`]: a new
/// revision and the issues whose ledgers (of either kind) changed. The statuses file has no
/// issue; a change to it alone names none.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Change {
    pub revision: u64,
    pub issues: Vec<u32>,
}

/// Everything a request may need.
pub struct App {
    /// The workspace, opened once at start: every request, page, task and door calls the
    /// command layer on its store (the settings are read again when they change).
    pub ws: Arc<Workspace>,
    /// Whether people reach the server over https (TLS here, or a proxy in front).
    pub https: bool,
    /// `scheme://host[:port]` people open (the public URL, else the listen address).
    pub origin: String,
    /// `Host` values accepted (DNS rebinding).
    pub hosts: Vec<String>,
    /// The inbox's own host name, `<label>.localhost:<port>`, on loopback without TLS or a
    /// public URL: the only name its cookie is set and honoured for (`auth.rs`).
    pub inbox_host: Option<String>,
    pub tokens: Tokens,
    pub sessions: Sessions,
    pub login: Logins,
    /// Unknown answer links tried, counted as failed sign-ins are (their own counts: a burst
    /// of them never slows a sign-in).
    pub link_failures: Logins,
    /// Slack interactions taken in the last minutes, by signature (`slack.rs`).
    pub slack_seen: crate::slack::Seen,
    /// Changes seen by the feed, to the live pages and the worker.
    pub changes: broadcast::Sender<Change>,
    /// Set once on SIGINT/SIGTERM.
    pub shutdown: watch::Sender<bool>,
    /// Where notification events link to a thread's page: `--public-url`, else the address
    /// this server listens on (so a link in a push always opens somewhere; docs/protocol.md
    /// §23 "Deep links").
    pub public_url: Option<String>,
    /// The change feed's latest revision (0 until its first change).
    pub revision: std::sync::atomic::AtomicU64,
    /// Set once the change feed has taken its baseline: a write after it is reported.
    pub feed_ready: watch::Sender<bool>,
    /// The open records for the inbox (`open.rs`), kept current by the feed
    /// (`open_follow.rs`).
    pub open: OpenRecords,
    /// The turns of background routing, one bound for every door (`limits.rs`).
    pub routes: std::sync::Arc<tokio::sync::Semaphore>,
    /// The open event streams of each credential (`limits.rs`).
    pub streams: crate::limits::Streams,
    /// The series `/metrics` shows (kept whether or not it is served: counting is cheap).
    pub metrics: crate::metrics::Metrics,
    /// The worker duties this replica holds right now (docs/protocol.md §23.5).
    pub duties: crate::duty::Held,
}

impl App {
    /// The state of a server on the workspace `ws`, listening on `bound`; `public_url` is
    /// `--public-url` (the address people open, when it is not the listen address).
    pub fn new(
        ws: Arc<Workspace>,
        public_url: Option<&str>,
        bound: SocketAddr,
        https: bool,
    ) -> Result<App, ClarifyError> {
        let tokens = crate::tokens::Tokens::new(Arc::clone(&ws));
        let sessions = Sessions::new(Arc::clone(&ws));
        let routes = crate::limits::routing_turns(&ws);
        let port = bound.port();
        let mut hosts = vec![bound.to_string()];
        // On a wildcard address the machine's own names work too (the public URL's host is
        // added below).
        if bound.ip().is_loopback() || bound.ip().is_unspecified() {
            hosts.push(format!("localhost:{port}"));
            hosts.push(format!("127.0.0.1:{port}"));
            hosts.push(format!("[::1]:{port}"));
        }
        let scheme = if https { "https" } else { "http" };
        let origin = match public_url {
            Some(url) => {
                let url = url.trim_end_matches('/');
                let host = url
                    .split_once("://")
                    .map_or(url, |(_, rest)| rest)
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                hosts.push(host.clone());
                // A default port may be left out of Host.
                if let Some(bare) = host
                    .strip_suffix(":443")
                    .or_else(|| host.strip_suffix(":80"))
                {
                    hosts.push(bare.to_owned());
                }
                let scheme = url.split_once("://").map_or(scheme, |(s, _)| s);
                format!("{scheme}://{host}")
            }
            None => format!("{scheme}://{bound}"),
        };
        // Browsers resolve `*.localhost` to loopback and keep its cookies from the other
        // ports of 127.0.0.1 (issue 48). Behind TLS or a public URL the name is given.
        let inbox_host = if public_url.is_none() && !https && bound.ip().is_loopback() {
            let host = format!("{}.localhost:{port}", sessions.host_label()?);
            hosts.push(host.clone());
            Some(host)
        } else {
            None
        };
        // A push links where a browser opens the inbox: the public URL, else its own name.
        let links_to = public_url.map_or_else(
            || {
                inbox_host
                    .as_ref()
                    .map_or_else(|| origin.clone(), |h| format!("http://{h}"))
            },
            str::to_owned,
        );
        let (changes, _) = broadcast::channel(256);
        let (shutdown, _) = watch::channel(false);
        Ok(App {
            ws,
            https,
            origin,
            hosts,
            inbox_host,
            tokens,
            sessions,
            login: Logins::default(),
            link_failures: Logins::default(),
            slack_seen: crate::slack::Seen::default(),
            changes,
            shutdown,
            public_url: Some(links_to),
            revision: std::sync::atomic::AtomicU64::new(0),
            feed_ready: watch::channel(false).0,
            open: OpenRecords::default(),
            routes,
            streams: crate::limits::Streams::default(),
            metrics: crate::metrics::Metrics::default(),
            duties: crate::duty::Held::default(),
        })
    }

    pub fn base_url(&self) -> String {
        self.origin.clone()
    }

    /// Where people open the inbox: its own host name when it has one, else [`App::base_url`].
    pub fn inbox_url(&self) -> String {
        match &self.inbox_host {
            Some(host) => format!("http://{host}"),
            None => self.base_url(),
        }
    }

    /// Runs one operation of the command layer on the workspace's store, off the async
    /// threads (it takes locks and reads files or the database), bounded as every request's
    /// store call is ([`App::bounded`]). `by` makes the entries a person's (`human`, `by`,
    /// `via: "web"`).
    pub async fn call(&self, op: String, input: Value, by: Option<String>) -> Value {
        match by {
            Some(name) => {
                let by = agentx_clarify_core::ops::Attribution {
                    by: name,
                    via: "web".into(),
                    reference: None,
                };
                self.call_by(op, input, by).await
            }
            None => {
                let ws = Arc::clone(&self.ws);
                let done = self
                    .bounded(move || {
                        let now = agentx_clarify_store::clock::system_now_ms();
                        Ok(ws.call(&op, &input, now))
                    })
                    .await;
                done.unwrap_or_else(|e| agentx_clarify_core::envelope::failure(&e))
            }
        }
    }

    /// [`App::call`] as a person's entry with its attribution as given (an answer link's
    /// `by`, `via` and `ref`).
    pub async fn call_by(
        &self,
        op: String,
        input: Value,
        by: agentx_clarify_core::ops::Attribution,
    ) -> Value {
        let ws = Arc::clone(&self.ws);
        let done = self
            .bounded(move || {
                let now = agentx_clarify_store::clock::system_now_ms();
                Ok(ws.call_as(&op, &input, now, &by))
            })
            .await;
        done.unwrap_or_else(|e| agentx_clarify_core::envelope::failure(&e))
    }

    /// Runs `f` off the async threads, as a request's store call runs. On PostgreSQL the
    /// request waits only while the database shows progress (docs/protocol.md §32): after
    /// `[store] timeout_ms` without any (a frozen database), it stops waiting with an
    /// `IO_ERROR` (503) that says whether anything was written; the call goes on on its
    /// thread and commits nothing more (`agentx_clarify_pg::watch`). The file store's waits
    /// are bounded by its lock timeout, as the CLI's are.
    pub async fn bounded<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, ClarifyError> + Send + 'static,
    ) -> Result<T, ClarifyError> {
        let f = move || given_back(Instant::now(), f);
        let Location::Postgres(url) = self.ws.location() else {
            return joined(tokio::task::spawn_blocking(f).await);
        };
        let watch = Watch::new();
        let running = watch.clone();
        let mut handle = tokio::task::spawn_blocking(move || running.run(f));
        let limit = agentx_clarify_store_any::watch::timeout();
        loop {
            let left = limit.saturating_sub(watch.idle());
            if left.is_zero() {
                return Err(given_up(watch.abandon(), limit, &url));
            }
            if let Ok(done) = tokio::time::timeout(left, &mut handle).await {
                return joined(done);
            }
        }
    }

    /// Routes a record to its target agent (`route {id}`): starts the agent's runner as
    /// `agentx clarify route` does, off the async threads (a run takes as long as the agent).
    pub async fn call_routed(&self, op: String, input: Value) -> Value {
        // One bound for every door (docs/protocol.md §31): the run waits its turn, in order.
        let _turn = Arc::clone(&self.routes).acquire_owned().await;
        let ws = Arc::clone(&self.ws);
        let done = tokio::task::spawn_blocking(move || {
            given_back(Instant::now(), || ws.call_routed(&op, &input))
        })
        .await;
        done.unwrap_or_else(|e| {
            agentx_clarify_core::envelope::refusal(
                "INTERNAL",
                &format!("the routing did not finish: {e}"),
            )
        })
    }

    /// Runs `f` on the workspace's store off the async threads, bounded as a request's store
    /// call is ([`App::bounded`]): the pages read typed values.
    pub async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&WorkspaceStore) -> Result<T, ClarifyError> + Send + 'static,
    ) -> Result<T, ClarifyError> {
        let ws = Arc::clone(&self.ws);
        self.bounded(move || f(&*ws.store()?)).await
    }

    /// [`App::with_store`] for the background tasks (the worker, the inbox's view): no bound
    /// — a task that waits on a frozen database holds no request, and goes on when it answers.
    pub async fn in_background<T: Send + 'static>(
        &self,
        f: impl FnOnce(&WorkspaceStore) -> Result<T, ClarifyError> + Send + 'static,
    ) -> Result<T, ClarifyError> {
        let ws = Arc::clone(&self.ws);
        joined(
            tokio::task::spawn_blocking(move || given_back(Instant::now(), || f(&*ws.store()?)))
                .await,
        )
    }
}

/// `call()` on this blocking thread (begun at `started`), which then gives back what the call
/// freed (a read of every ledger frees most of what it allocated: `memory.rs`).
fn given_back<T>(started: Instant, call: impl FnOnce() -> T) -> T {
    let out = call();
    crate::memory::after_call(started);
    out
}

/// A store call's result once its thread is done (one that panicked is `INTERNAL`).
fn joined<T>(
    done: Result<Result<T, ClarifyError>, tokio::task::JoinError>,
) -> Result<T, ClarifyError> {
    done.unwrap_or_else(|e| {
        Err(ClarifyError::Internal {
            message: format!("the store call did not finish: {e}"),
        })
    })
}

/// The error of a request that stopped waiting for the database at `url` after `limit`
/// without progress: what was written, as the watch knows it.
fn given_up(what: Abandoned, limit: Duration, url: &str) -> ClarifyError {
    let said = match what {
        Abandoned::NothingWritten => "nothing was written; retry when it answers",
        Abandoned::Committing => {
            "a commit was under way: the change may or may not have been written; look (e.g. `agentx clarify show`) before retrying"
        }
        Abandoned::PartlyWritten => {
            "part of the change was written before it stopped; look (e.g. `agentx clarify show`) before retrying"
        }
    };
    ClarifyError::Io {
        message: format!(
            "{} showed no progress for {} ms ([store] timeout_ms): {said}",
            agentx_clarify_store_any::describe(url),
            limit.as_millis()
        ),
    }
}
