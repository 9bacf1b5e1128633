//! Where a workspace's outbox lives — beside the ledgers it follows: the file store's
//! `.agentx/state/outbox.json` (under its own lock), or PostgreSQL's `agentx.state_docs` row
//! `outbox` (under its row lock). Every part that reads or changes the outbox (the delivery
//! pass, `notify status` and `retry`, the inbox, `clarify wakeup`) goes through here, so a
//! PostgreSQL team's deliverers share one outbox wherever they run.

use std::path::Path;

use agentx_clarify_command::{Scope, State};
use agentx_clarify_core::notify::Outbox;
use agentx_clarify_core::{ClarifyError, Ledger};
use agentx_clarify_store::DiskStore;
use agentx_clarify_store_any::{Location, PgStore};

/// The outbox's document name in PostgreSQL.
const OUTBOX: &str = "outbox";

/// The workspace's outbox, in whichever store holds its state.
pub enum Home {
    Disk(DiskStore),
    Pg(Box<PgStore>),
}

fn corrupt(e: &serde_json::Error) -> ClarifyError {
    ClarifyError::LedgerCorrupt {
        file: String::from("outbox"),
        message: e.to_string(),
    }
}

impl Home {
    pub fn open(root: &Path) -> Result<Home, ClarifyError> {
        Ok(match agentx_clarify_store_any::location(root)? {
            Location::Files => Home::Disk(DiskStore::new(root)),
            Location::Postgres(url) => Home::Pg(Box::new(PgStore::open(&url)?)),
        })
    }

    /// The outbox as it is now (empty when nothing was ever owed).
    pub fn read_outbox(&self) -> Result<Outbox, ClarifyError> {
        match self {
            Home::Disk(s) => s.read_outbox(),
            Home::Pg(s) => match s.read_doc(OUTBOX)? {
                Some(text) => serde_json::from_str(&text).map_err(|e| corrupt(&e)),
                None => Ok(Outbox::default()),
            },
        }
    }

    /// Read–change–write of the outbox under its lock; nothing is written when `change`
    /// leaves it equal.
    pub fn update_outbox<T>(
        &self,
        agent: &str,
        change: impl FnOnce(&mut Outbox) -> T,
    ) -> Result<T, ClarifyError> {
        match self {
            Home::Disk(s) => s.update_outbox(agent, change),
            Home::Pg(s) => s.update_doc(OUTBOX, |text| {
                let mut outbox: Outbox = match text {
                    Some(t) => serde_json::from_str(&t).map_err(|e| corrupt(&e))?,
                    None => Outbox::default(),
                };
                let before = outbox.clone();
                let result = change(&mut outbox);
                let next = if outbox == before {
                    None
                } else {
                    Some(
                        serde_json::to_string(&outbox).map_err(|e| ClarifyError::Internal {
                            message: format!("outbox: {e}"),
                        })?,
                    )
                };
                Ok((next, result))
            }),
        }
    }

    /// Every readable ledger (what the outbox owes is found in them).
    pub fn ledgers(&self) -> Result<Vec<Ledger>, ClarifyError> {
        let read = match self {
            Home::Disk(s) => s.scan(Scope::All, |read| read.ledger.ok())?,
            Home::Pg(s) => s.scan(Scope::All, |read| read.ledger.ok())?,
        };
        Ok(read.into_iter().flatten().collect())
    }

    /// One ledger as it is now.
    pub fn read_ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        match self {
            Home::Disk(s) => s.read_ledger(issue),
            Home::Pg(s) => s.read_ledger(issue),
        }
    }
}
