//! `Sides`: a files side and a state side joined into one [`Store`](crate::store::Store) — the
//! workspace directory's files with its state in PostgreSQL, or any other pairing. Each method
//! goes to the side that owns it, nothing more.

use agentx_clarify_core::delegation::{DelegationLedger, Manifests};
use agentx_clarify_core::{ClarifyError, Config, Ledger, Statuses, Workflows};
use serde_json::Value;

use crate::store::delegations::IssueWrite;
use crate::store::feed::Changed;
use crate::store::keys::{KeyFile, KeyHalf};
use crate::store::leases::LeaseTake;
use crate::store::ledgers::{DueTimes, LedgerKind, Ledgers, Read};
use crate::store::{Files, RawLedger, Scope, State};

/// A workspace whose files are `files` and whose state is `state`.
#[derive(Debug)]
pub struct Sides<F, S> {
    pub files: F,
    pub state: S,
}

impl<F: Files, S> Files for Sides<F, S> {
    fn load_config(&self) -> Result<Config, ClarifyError> {
        self.files.load_config()
    }

    fn load_workflows(&self) -> Result<Workflows, ClarifyError> {
        self.files.load_workflows()
    }

    fn load_manifests(&self) -> Result<Manifests, ClarifyError> {
        self.files.load_manifests()
    }

    fn load_people(&self) -> Result<agentx_clarify_core::people::People, ClarifyError> {
        self.files.load_people()
    }

    fn load_runner_config(&self) -> Result<Config, ClarifyError> {
        self.files.load_runner_config()
    }

    fn read_persona(&self, path: &str) -> Result<Option<String>, ClarifyError> {
        self.files.read_persona(path)
    }

    fn write_run_log(&self, id: &str, round: u32, log: &Value) -> Result<String, ClarifyError> {
        self.files.write_run_log(id, round, log)
    }

    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        self.files.key_files(half)
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        self.files.create_key_pair(agent, public, secret)
    }

    fn init_files(&self) -> Result<Vec<String>, ClarifyError> {
        self.files.init_files()
    }
}

/// Ledgers of either kind are the state side's.
impl<K: LedgerKind, F, S: Ledgers<K>> Ledgers<K> for Sides<F, S> {
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError> {
        self.state.read(issue)
    }

    fn has(&self, issue: u32) -> Result<bool, ClarifyError> {
        self.state.has(issue)
    }

    fn update<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.state.update(issue, config, agent, decide)
    }

    fn update_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.state.update_bytes(issue, config, agent, decide)
    }

    fn scan_ledgers<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        self.state.scan_ledgers(scope, visit)
    }

    fn due_times(&self) -> Result<DueTimes, ClarifyError> {
        self.state.due_times()
    }
}

impl<F, S: State> State for Sides<F, S> {
    type Lease = S::Lease;
    type Cursor = S::Cursor;

    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        self.state.raw_ledgers()
    }

    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.state.update_issue(issue, config, agent, decide)
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        self.state.read_statuses()
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        agent: &str,
        change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.state.update_statuses(config, agent, change)
    }

    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<S::Lease>, ClarifyError> {
        self.state.take_lease(id, ttl_ms)
    }

    fn release_lease(&self, lease: S::Lease) {
        self.state.release_lease(lease);
    }

    fn lease_held(&self, id: &str) -> bool {
        self.state.lease_held(id)
    }

    fn feed(&self) -> Result<S::Cursor, ClarifyError> {
        self.state.feed()
    }

    fn revision(&self, cursor: &S::Cursor) -> u64 {
        self.state.revision(cursor)
    }

    fn changes(&self, cursor: &mut S::Cursor) -> Result<Option<Changed>, ClarifyError> {
        self.state.changes(cursor)
    }

    fn wake(&self, cursor: &mut S::Cursor) -> Option<crate::store::feed::Wake> {
        self.state.wake(cursor)
    }

    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        self.state.read_doc(name)
    }

    fn update_doc<T>(
        &self,
        name: &str,
        config: &Config,
        agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.state.update_doc(name, config, agent, change)
    }

    fn init_state(&self) -> Result<Vec<String>, ClarifyError> {
        self.state.init_state()
    }

    fn after_monitor(&self, config: &Config) {
        self.state.after_monitor(config);
    }

    fn search_index(
        &self,
        probe: &agentx_clarify_core::search::probe::Probe,
    ) -> Option<agentx_clarify_core::search::probe::Candidates> {
        self.state.search_index(probe)
    }
}
