//! The state side of a [`MemStore`]: ledgers of both kinds, statuses and leases kept as the
//! bytes a `DiskStore` would hold under the same paths (`.agentx/state/…`), and a change feed
//! that counts writes. One owner at a time, so a lease only guards against re-entry; it never
//! expires by itself.

use agentx_clarify_core::agents::{parse_statuses, statuses_to_json};
use agentx_clarify_core::{ClarifyError, Config, Statuses};
use serde_json::json;

use crate::mem::MemStore;
use crate::store::docs::{checked_doc, doc_path};
use crate::store::feed::Changed;
use crate::store::leases::LeaseTake;
use crate::store::ledgers::{read_bytes, LedgerKind, Ledgers, Read};
use crate::store::paths;
use crate::store::{RawLedger, Scope, State};

/// Both kinds of ledger: bytes under the paths a `DiskStore` would use.
impl<K: LedgerKind> Ledgers<K> for MemStore {
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError> {
        self.text(&K::path(issue))
            .map(|bytes| K::parse_issue(issue, &bytes))
            .transpose()
    }

    fn update<T>(
        &self,
        issue: u32,
        _config: &Config,
        _agent: &str,
        mut decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let mut result = None;
        self.update_once::<K>(issue, &mut |current| {
            let (write, r) = decide(current)?;
            result = Some(r);
            Ok(write)
        })?;
        result.ok_or_else(|| ClarifyError::Internal {
            message: String::from("a ledger update returned no result"),
        })
    }

    fn update_bytes<T>(
        &self,
        issue: u32,
        _config: &Config,
        _agent: &str,
        mut decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let path = K::path(issue);
        let (write, result) = decide(self.text(&path).as_deref())?;
        if write.is_some() {
            self.put(&path, write);
        }
        Ok(result)
    }

    fn scan_ledgers<R: Send>(
        &self,
        _scope: Scope,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        Ok(self
            .issue_files(K::DIR)
            .into_iter()
            .map(|(n, _, bytes)| visit(read_bytes::<K>(n, Ok(&bytes))))
            .collect())
    }
}

impl State for MemStore {
    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        Ok(self
            .issue_files(paths::CLARIFICATIONS_DIR)
            .into_iter()
            .map(|(_, name, bytes)| (name, Ok(bytes)))
            .collect())
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        match self.text(paths::STATUS) {
            None => Ok(Statuses::new()),
            Some(bytes) => parse_statuses(paths::STATUS_FILE, &bytes),
        }
    }

    fn update_statuses<T>(
        &self,
        _config: &Config,
        _agent: &str,
        mut change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let mut statuses = self.read_statuses()?;
        let before = statuses.clone();
        let result = change(&mut statuses)?;
        if statuses != before {
            self.put(
                paths::STATUS,
                Some(statuses_to_json(&statuses).into_bytes()),
            );
        }
        Ok(result)
    }

    type Lease = String;

    fn take_lease(&self, id: &str, _ttl_ms: u64) -> Result<LeaseTake<String>, ClarifyError> {
        let path = paths::lease_path(id);
        if self.file(&path).is_some() {
            return Ok(LeaseTake::Held {
                holder: String::from("another routing in this workspace"),
            });
        }
        self.put(
            &path,
            Some(json!({"holder": "memory"}).to_string().into_bytes()),
        );
        Ok(LeaseTake::Taken(path))
    }

    fn release_lease(&self, lease: String) {
        self.put(&lease, None);
    }

    fn lease_held(&self, id: &str) -> bool {
        self.file(&paths::lease_path(id)).is_some()
    }

    type Cursor = u64;

    fn feed(&self) -> Result<u64, ClarifyError> {
        Ok(self.revision.get())
    }

    fn revision(&self, cursor: &u64) -> u64 {
        *cursor
    }

    fn changes(&self, cursor: &mut u64) -> Result<Option<Changed>, ClarifyError> {
        let mut changed = Changed {
            revision: self.revision.get(),
            ..Changed::default()
        };
        for (path, _) in self.written.borrow().iter().filter(|(_, r)| **r > *cursor) {
            changed.add_path(path);
        }
        *cursor = changed.revision;
        Ok(changed.finish())
    }

    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        let path = doc_path(checked_doc(name)?);
        self.text(&path)
            .map(|bytes| {
                String::from_utf8(bytes).map_err(|_| ClarifyError::LedgerCorrupt {
                    file: format!("{name}.json"),
                    message: String::from("not UTF-8 text"),
                })
            })
            .transpose()
    }

    fn update_doc<T>(
        &self,
        name: &str,
        _config: &Config,
        _agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let (next, result) = change(self.read_doc(name)?)?;
        if let Some(text) = next {
            self.add_dirs(&paths::STATE_DIRS);
            self.put(&doc_path(name), Some(text.into_bytes()));
        }
        Ok(result)
    }
}
