//! # agentx-clarify-workspace
//!
//! The workspace handle, opened **once per process** (as cargo's `GlobalContext`): the store
//! (the workspace directory's files, its state in them or in PostgreSQL), the settings read
//! once (`config.toml` and its parts, the workflows, the capability manifests) and the runner
//! that routes. Every door holds one — the CLI, `agentx mcp`, `agentx serve` (pages, API,
//! `/mcp`, `/a2a`, the worker, the deliverer, GitHub sync), the notification pass, the Node
//! addon — and calls the command layer on [`Workspace::store`]; none opens a store or reads a
//! settings file itself.
//!
//! A command (the CLI) reads the settings as they are when it starts and never again
//! ([`Workspace::open`]). A long-lived door ([`Workspace::open_watching`]) looks at the
//! settings' stamp (`lstat`s, no read) when it takes the store — after its file watch saw an
//! event in a settings directory, or at every take where it has none — and reads them again
//! only when a file moved: an edited `config.toml` is used by the next request or pass, no
//! restart. The state stays open (its connections, its caches) while the settings still put
//! it where it was; a reading that moves it opens the new one.
//!
//! Below the shells, above the stores: it names no server, no HTTP client and no protocol
//! (the runner is handed in: `agentx_clarify_a2a::open_workspace` gives the hub's, which
//! reaches A2A agents; the Node addon gives `ProcessRunner`), so the Node addon can hold one.
#![deny(clippy::indexing_slicing)]
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

mod files;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use agentx_clarify_command::{Runner, Sides};
use agentx_clarify_core::envelope::failure;
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::clock::system_now_ms;
use agentx_clarify_store_any::{AnyState, Location};
use serde_json::Value;

pub use files::WorkspaceFiles;
pub use settings::Settings;

/// The store a door calls the command layer on: the workspace's files (settings read once)
/// and its state, wherever it is.
pub type WorkspaceStore = Sides<WorkspaceFiles, AnyState>;

/// The runner a workspace routes with, shared by every thread of the process.
pub type SharedRunner = Arc<dyn Runner + Send + Sync>;

/// One workspace, opened once.
pub struct Workspace {
    root: PathBuf,
    runner: SharedRunner,
    /// Look at the settings' stamp each time the store is taken.
    watching: bool,
    /// The store as last read: in-flight calls keep theirs when a newer one replaces it.
    current: RwLock<Current>,
    /// A watching handle's file watch on the settings: their stamps are compared only after
    /// an event (`None`: at every take, where watching is unavailable).
    settings_watch: Option<agentx_clarify_store::SettingsWatch>,
}

/// A reading of the settings and the state they name.
struct Current {
    store: Arc<WorkspaceStore>,
    location: Location,
    /// `AGENTX_STORE` as it was (the Node addon's host may change it between calls).
    env: Option<String>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("watching", &self.watching)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// The workspace at `root` for one command: the settings are read now and never again.
    pub fn open(
        root: impl Into<PathBuf>,
        runner: impl Runner + Send + Sync + 'static,
    ) -> Result<Workspace, ClarifyError> {
        let root = root.into();
        let files = WorkspaceFiles::read(&root, false)?;
        Workspace::with_files(files, Arc::new(runner), false)
    }

    /// The workspace at `root` for a long-lived door: the settings are read again whenever
    /// their stamp moved since they were last read ([`Workspace::store`]).
    pub fn open_watching(
        root: impl Into<PathBuf>,
        runner: impl Runner + Send + Sync + 'static,
    ) -> Result<Workspace, ClarifyError> {
        let root = root.into();
        let files = WorkspaceFiles::read(&root, true)?;
        Workspace::with_files(files, Arc::new(runner), true)
    }

    /// The workspace whose settings `files` already read (a command that looked at them
    /// before it needed the state: typo warnings, `notify test`).
    pub fn with_files(
        files: WorkspaceFiles,
        runner: SharedRunner,
        watching: bool,
    ) -> Result<Workspace, ClarifyError> {
        let root = files.root().to_path_buf();
        // Started before the first take, which looks (it starts dirty): a save between the
        // reading above and the watch is seen then.
        let settings_watch = if watching {
            agentx_clarify_store::SettingsWatch::start(&root)
        } else {
            None
        };
        let current = Current::open(files, agentx_clarify_store_any::store_env())?;
        Ok(Workspace {
            root,
            runner,
            watching,
            current: RwLock::new(current),
            settings_watch,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The runner that routes.
    pub fn runner(&self) -> &(dyn Runner + Sync) {
        &*self.runner
    }

    /// A clone of the runner, for a thread of its own.
    pub fn shared_runner(&self) -> SharedRunner {
        Arc::clone(&self.runner)
    }

    /// Where the state is, as the settings last read say.
    pub fn location(&self) -> Location {
        self.read().location.clone()
    }

    /// The store to call the command layer on. A watching handle first checks the layout
    /// (docs/protocol.md §31, as every reading of the settings does) and the settings' stamp
    /// — only after its file watch saw an event there, where it has one — and reads them
    /// again, and opens the state they name, when a file moved.
    pub fn store(&self) -> Result<Arc<WorkspaceStore>, ClarifyError> {
        let (store, env) = {
            let current = self.read();
            (Arc::clone(&current.store), current.env.clone())
        };
        if !self.watching {
            return Ok(store);
        }
        store.files.disk().check_layout()?;
        let now_env = agentx_clarify_store_any::store_env();
        let quiet = self.settings_watch.as_ref().is_some_and(|w| !w.take());
        if (quiet || store.files.unchanged()) && now_env == env {
            return Ok(store);
        }
        self.reread(now_env).inspect_err(|_| {
            // A half-saved file: look again at the next take, event or not.
            if let Some(w) = &self.settings_watch {
                w.mark();
            }
        })
    }

    /// Reads the settings again, and opens the state they name when it moved.
    fn reread(&self, now_env: Option<String>) -> Result<Arc<WorkspaceStore>, ClarifyError> {
        if let Some(w) = &self.settings_watch {
            // A settings directory made since (workflows/) is watched from now on (one the
            // kernel refuses leaves every take looking at the stamps).
            w.complete();
        }
        let files = WorkspaceFiles::read(&self.root, true)?;
        let location = files.location(now_env.as_deref())?;
        // The state stays open while the settings still put it where it was.
        let state = {
            let current = self.read();
            (current.location == location).then(|| current.store.state.clone())
        };
        let fresh = match state {
            Some(state) => Current::with_state(files, location, state, now_env),
            None => Current::open(files, now_env)?,
        };
        let store = Arc::clone(&fresh.store);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(store)
    }

    /// The store as last taken, without looking at the settings' stamp: for an async door
    /// that must not block (a look may read files or open a database connection); the next
    /// [`Workspace::store`] of any request or pass brings it up to date.
    pub fn current(&self) -> Arc<WorkspaceStore> {
        Arc::clone(&self.read().store)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Current> {
        self.current.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// `op` through the command layer's JSON entry point at `now`; a store that cannot be
    /// taken is the failure envelope.
    pub fn call(&self, op: &str, input: &Value, now: i64) -> Value {
        match self.store() {
            Ok(store) => agentx_clarify_command::call(&*store, op, input, now),
            Err(e) => failure(&e),
        }
    }

    /// [`Workspace::call`] for a person acting through a door (`by`/`via`).
    pub fn call_as(&self, op: &str, input: &Value, now: i64, by: &Attribution) -> Value {
        match self.store() {
            Ok(store) => agentx_clarify_command::call_as(&*store, op, input, now, by),
            Err(e) => failure(&e),
        }
    }

    /// `op` with routing (`route`, `monitor` with `route_on_retry`, …) through this
    /// workspace's runner, on the system clock. A plan without a session gets a new one
    /// here: the layers below draw no randomness.
    pub fn call_routed(&self, op: &str, input: &Value) -> Value {
        let store = match self.store() {
            Ok(store) => store,
            Err(e) => return failure(&e),
        };
        let with_session = agentx_clarify_store::with_new_session(op, input);
        let input = with_session.as_ref().unwrap_or(input);
        agentx_clarify_command::call_routed(&*store, self.runner(), op, input, &system_now_ms)
    }
}

impl Current {
    /// The state the settings of `files` (and `AGENTX_STORE`, `env`) name, joined to them.
    fn open(files: WorkspaceFiles, env: Option<String>) -> Result<Current, ClarifyError> {
        let location = files.location(env.as_deref())?;
        let state = agentx_clarify_store_any::open_state(files.root(), &location)?;
        Ok(Current::with_state(files, location, state, env))
    }

    fn with_state(
        files: WorkspaceFiles,
        location: Location,
        state: AnyState,
        env: Option<String>,
    ) -> Current {
        Current {
            store: Arc::new(Sides { files, state }),
            location,
            env,
        }
    }
}
