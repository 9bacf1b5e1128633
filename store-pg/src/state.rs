//! The state side (docs/protocol.md §21) in PostgreSQL: ledgers of both kinds as documents,
//! the agent statuses, routing leases and the change feed (a revision sequence plus
//! `LISTEN/NOTIFY`). `PgStore` implements only this side: settings, workflows, manifests, keys,
//! personas and run logs stay files of the workspace on each machine (`Sides` joins them).

use std::sync::PoisonError;
use std::time::Duration;

use agentx_clarify_command::paths::STATUS_FILE;
use agentx_clarify_command::store::delegations::IssueWrite;
use agentx_clarify_command::store::ledgers::{
    Clarifications, Delegations, DueTimes, LedgerKind, Ledgers, Read,
};
use agentx_clarify_command::{paths, Changed, LeaseTake, RawLedger, Scope, State, Wake};
use agentx_clarify_core::agents::{parse_statuses, statuses_to_json, Statuses};
use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::search::probe::{Candidates, Probe};
use agentx_clarify_core::{ClarifyError, Config, Ledger};
use agentx_clarify_store::this_host;

use crate::documents::{path_of, STATE};
use crate::feed::{drain, WINDOW};
use crate::kinds::PgKind;
use crate::leases::{BREAK, TAKE};
use crate::ledgers::{ledger_number, Stored};
use crate::update::{Held, Write};
use crate::{update, PgCursor, PgLease, PgStore, ALL};

/// Both kinds of ledger, written once: read and updated in one transaction with the row
/// locked `FOR UPDATE`, never overwritten when it does not parse (`kinds.rs` names what
/// differs between the kinds).
impl<K: PgKind> Ledgers<K> for PgStore {
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError> {
        self.read_document(K::NAME, &paths::ledger_name(issue))?
            .map(|stored| K::from_stored(&stored, issue))
            .transpose()
    }

    fn has(&self, issue: u32) -> Result<bool, ClarifyError> {
        let name = paths::ledger_name(issue);
        // A ledger this store holds was there, and agentx never deletes a document (an
        // import replaces, never removes): no round trip. Even if someone deleted it by hand,
        // the answer only decides whether an ask validates before its update, and the update
        // decides again on what it finds, writing nothing when that refuses.
        if K::ROWS
            && self
                .cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .holds(&name)
        {
            return Ok(true);
        }
        Ok(self
            .document_row(
                "SELECT 1 FROM agentx.documents WHERE kind = $1 AND name = $2",
                K::NAME,
                &name,
            )?
            .is_some())
    }

    fn update<T>(
        &self,
        issue: u32,
        config: &Config,
        _agent: &str,
        mut decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_issue_document(K::NAME, issue, config, |_, held| {
            let current = held.map(|h| K::from_held(h, issue)).transpose()?;
            let (write, result) = decide(current)?;
            Ok((write.map(K::write), result))
        })
    }

    fn update_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        _agent: &str,
        mut decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_issue_document(K::NAME, issue, config, |_, held| {
            let bytes = held.map(Held::bytes);
            let (write, result) = decide(bytes.as_deref())?;
            // Stored whole and indexed as an import indexes them: bytes that do not parse
            // keep a row.
            Ok((write.map(Write::Raw), result))
        })
    }

    fn scan_ledgers<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError> {
        K::scan(self, scope, visit)
    }

    /// From `agentx.active`'s `due_ms`, written in each ledger's own transaction (so never
    /// outdated), by two lookups on its index: the earliest due time past "at once", and the
    /// documents keyed due at once.
    fn due_times(&self) -> Result<DueTimes, ClarifyError> {
        let mut conn = self.conn()?;
        let c = conn.get()?;
        let fail = |e: &postgres::Error| self.fail("read the due times of", K::NAME, e);
        let stmt = c.statement(DUE_TIMES).map_err(|e| fail(&e))?;
        let row = c
            .client
            .query_one(&stmt, &[&K::NAME, &i64::MIN])
            .map_err(|e| fail(&e))?;
        let earliest: Option<i64> = row.try_get(0).map_err(|e| fail(&e))?;
        let names: Vec<String> = row.try_get(1).map_err(|e| fail(&e))?;
        let mut at_once: Vec<u32> = names.iter().filter_map(|n| ledger_number(n)).collect();
        at_once.sort_unstable();
        Ok(DueTimes::Indexed { earliest, at_once })
    }
}

/// The earliest due time of kind `$1` past "at once" (`$2`, `i64::MIN`), and the documents
/// keyed at once; both by the index `active_due` (kind, due_ms).
const DUE_TIMES: &str = "SELECT
    (SELECT due_ms FROM agentx.active WHERE kind = $1 AND due_ms > $2 ORDER BY due_ms LIMIT 1),
    ARRAY(SELECT DISTINCT name FROM agentx.active WHERE kind = $1 AND due_ms = $2)";

impl State for PgStore {
    /// The best candidates by the search index (`search.rs`); `None` on any database error
    /// (the command then scans: the same answer, more slowly).
    fn search_index(&self, probe: &Probe) -> Option<Candidates> {
        let mut conn = self.conn().ok()?;
        let c = conn.get().ok()?;
        crate::search::candidates(&mut c.client, probe).ok()
    }

    fn raw_ledgers(&self) -> Result<Vec<RawLedger>, ClarifyError> {
        self.pass(ALL, &[], &|_, name: &str, stored: &Stored| {
            (name.to_owned(), stored.to_bytes(name, ledger_number(name)))
        })
    }

    fn update_issue<T>(
        &self,
        issue: u32,
        config: &Config,
        _agent: &str,
        mut decide: impl FnMut(
            Option<&Ledger>,
            Option<&DelegationLedger>,
        ) -> Result<IssueWrite<T>, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let name = paths::ledger_name(issue);
        let mut conn = self.conn()?;
        update::update_documents(
            conn.get()?,
            &self.cache,
            &self.target,
            &[(Clarifications::NAME, &name), (Delegations::NAME, &name)],
            config.lock_timeout_ms,
            |held| {
                let held = |i: usize| held.get(i).and_then(Option::as_ref);
                let ledger = held(0).map(|h| h.ledger(&name, issue)).transpose()?;
                let delegations = held(1)
                    .map(|h| Delegations::from_held(h, issue))
                    .transpose()?;
                let (write_ledger, write_delegations, result) =
                    decide(ledger.as_deref(), delegations.as_ref())?;
                let ledger_write = write_ledger.map(Clarifications::write);
                let delegation_write = write_delegations.map(Delegations::write);
                Ok((vec![ledger_write, delegation_write], result))
            },
        )
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        match self.read_bytes(STATE, STATUS_FILE)? {
            None => Ok(Statuses::new()),
            Some(bytes) => parse_statuses(STATUS_FILE, &bytes),
        }
    }

    fn update_statuses<T>(
        &self,
        config: &Config,
        _agent: &str,
        mut change: impl FnMut(&mut Statuses) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let mut conn = self.conn()?;
        update::update_document(
            conn.get()?,
            &self.cache,
            &self.target,
            (STATE, STATUS_FILE),
            config.lock_timeout_ms,
            |held| {
                let mut statuses = match held {
                    None => Statuses::new(),
                    Some(h) => parse_statuses(STATUS_FILE, &h.bytes())?,
                };
                let before = statuses.clone();
                let result = change(&mut statuses)?;
                let write = (statuses != before)
                    .then(|| Write::Raw(statuses_to_json(&statuses).into_bytes()));
                Ok((write, result))
            },
        )
    }

    type Lease = PgLease;

    fn take_lease(&self, id: &str, ttl_ms: u64) -> Result<LeaseTake<PgLease>, ClarifyError> {
        ClarificationId::parse(id)?;
        let token = format!("{}-{:016x}", std::process::id(), fastrand::u64(..));
        let pid = i64::from(std::process::id());
        let ttl = i64::try_from(ttl_ms).unwrap_or(i64::MAX / 2);
        // A dead holder's lease is broken and the take tried again; twice is enough unless
        // another router takes it in between, and then it is theirs.
        for _ in 0..3 {
            let taken = self.execute(TAKE, "take", id, &[&id, &token, &pid, &this_host(), &ttl])?;
            if taken == 1 {
                return Ok(LeaseTake::Taken(PgLease {
                    id: id.to_owned(),
                    token,
                }));
            }
            match self.holder(id)? {
                Some(holder) if holder.dead() => {
                    self.execute(BREAK, "break", id, &[&id, &holder.token])?;
                }
                Some(holder) => {
                    return Ok(LeaseTake::Held {
                        holder: holder.describe(),
                    })
                }
                // Expired or released meanwhile: take it on the next round.
                None => {}
            }
        }
        Ok(LeaseTake::Held {
            holder: String::from("another router (the lease changed hands while taking it)"),
        })
    }

    fn release_lease(&self, lease: PgLease) {
        // Only our own: an expired lease may have been taken over by another router.
        let _ = self.execute(BREAK, "release", &lease.id, &[&lease.id, &lease.token]);
    }

    fn lease_held(&self, id: &str) -> bool {
        matches!(self.holder(id), Ok(Some(holder)) if !holder.dead())
    }

    type Cursor = PgCursor;

    fn feed(&self) -> Result<PgCursor, ClarifyError> {
        let mut listener = self.listener()?;
        // Listening first, then looking: a write that commits in between is signalled.
        let rows = self.recent(&mut listener, i64::MIN)?;
        let top = rows.iter().map(|r| r.2).max().unwrap_or(0);
        let seen = rows.into_iter().map(|(k, n, r)| ((k, n), r)).collect();
        Ok(PgCursor {
            listener,
            revision: u64::try_from(top).unwrap_or(0),
            top,
            seen,
            signalled: false,
            wake: None,
        })
    }

    fn revision(&self, cursor: &PgCursor) -> u64 {
        cursor.revision
    }

    fn changes(&self, cursor: &mut PgCursor) -> Result<Option<Changed>, ClarifyError> {
        if cursor.listener.client.is_closed() {
            // Signals sent while no one listened are lost: look once the new one listens.
            cursor.listener = self.listener()?;
            cursor.signalled = true;
        }
        if let Some((_, flag)) = &cursor.wake {
            cursor.signalled |= flag.swap(false, std::sync::atomic::Ordering::SeqCst);
        }
        // Signals already sent. A wait of a millisecond, not none: the connection's runtime
        // learns that its socket has data only when it waits (a failed look counts as a
        // signal: the query below then says what is wrong).
        if !cursor.signalled {
            cursor.signalled = drain(&mut cursor.listener, Duration::from_millis(1));
        }
        if !cursor.signalled {
            return Ok(None);
        }
        cursor.signalled = false;
        let rows = self.recent(&mut cursor.listener, cursor.top.saturating_sub(WINDOW))?;
        let mut changed = Changed::default();
        for (kind, name, rev) in rows {
            cursor.top = cursor.top.max(rev);
            let key = (kind, name);
            if cursor.seen.get(&key) == Some(&rev) {
                continue;
            }
            changed.add_path(&path_of(&key.0, &key.1));
            cursor.seen.insert(key, rev);
        }
        let floor = cursor.top.saturating_sub(WINDOW);
        cursor.seen.retain(|_, rev| *rev > floor);
        let Some(mut changed) = changed.finish() else {
            return Ok(None);
        };
        cursor.revision = u64::try_from(cursor.top)
            .unwrap_or(0)
            .max(cursor.revision + 1);
        changed.revision = cursor.revision;
        Ok(Some(changed))
    }

    fn wake(&self, cursor: &mut PgCursor) -> Option<Wake> {
        if cursor.wake.is_none() {
            match self.start_wake() {
                Ok(started) => cursor.wake = Some(started),
                Err(e) => {
                    eprintln!("agentx: the change feed's listener did not start ({e}): it is looked at on a timer");
                    return None;
                }
            }
        }
        cursor.wake.as_ref().map(|(w, _)| w.clone())
    }

    fn read_doc(&self, name: &str) -> Result<Option<String>, ClarifyError> {
        self.state_doc(name)
    }

    fn update_doc<T>(
        &self,
        name: &str,
        _config: &Config,
        _agent: &str,
        change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), ClarifyError>,
    ) -> Result<T, ClarifyError> {
        self.update_state_doc(name, change)
    }
}
