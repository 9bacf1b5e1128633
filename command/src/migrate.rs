//! `agentx migrate` (docs/protocol.md §20): upgrades every ledger another tool wrote (AgentX's TypeScript
//! and PowerShell writers, the reference implementation) to the form this crate writes and
//! reports each change; the decision is the core's (`core::migrate`). As in the monitor, a
//! first pass reads every ledger without excluding writers and finds which need a change;
//! each of those is read again and migrated inside its own update, under its lock (never
//! written from a stale copy). A ledger that cannot be read or parsed is reported and left
//! untouched.

use agentx_clarify_core::migrate::{migrate_file, Change};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::ClarifyError;
use serde::Serialize;
use serde_json::{json, Value};

use crate::store::Store;

/// One ledger that was (or, in a dry run, would be) upgraded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Migrated {
    pub file: String,
    pub changes: Vec<Change>,
}

/// What `migrate` did.
#[derive(Clone, Debug, Default)]
pub struct MigrateOutcome {
    pub dry_run: bool,
    pub migrated: Vec<Migrated>,
    /// Ledgers already in the form this crate writes.
    pub unchanged: usize,
    /// Ledgers that could not be read, parsed or written (left untouched).
    pub errors: Vec<ReportError>,
}

impl MigrateOutcome {
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "dryRun": self.dry_run, "migrated": self.migrated,
            "unchanged": self.unchanged, "errors": self.errors})
    }
}

/// The lock holder `migrate` writes into lock files.
const AGENT: &str = "migrate";

/// Upgrades every ledger of the workspace; with `dry_run` nothing is written.
pub fn migrate<S: Store>(store: &S, dry_run: bool) -> Result<MigrateOutcome, ClarifyError> {
    let config = store.load_config()?;
    let mut outcome = MigrateOutcome {
        dry_run,
        ..MigrateOutcome::default()
    };
    for (file, bytes) in store.raw_ledgers()? {
        let fail = |e: &ClarifyError| ReportError::new(file.as_str(), e);
        let Some(issue) = issue_of_file_name(&file)
            .filter(|n| *n <= MAX_ISSUE)
            .and_then(|n| u32::try_from(n).ok())
        else {
            let value = file.trim_start_matches("issue-").trim_end_matches(".json");
            outcome.errors.push(fail(&ClarifyError::InvalidIssue {
                value: value.to_owned(),
            }));
            continue;
        };
        let found = bytes.and_then(|b| migrate_file(&file, &b, Some(issue)));
        let changes = match found {
            Err(e) => {
                outcome.errors.push(fail(&e));
                continue;
            }
            Ok(m) if m.changes.is_empty() || dry_run => m.changes,
            Ok(_) => {
                let updated = store.update_ledger_bytes(issue, &config, AGENT, |current| {
                    let Some(current) = current else {
                        return Ok((None, Vec::new()));
                    };
                    let m = migrate_file(&file, current, Some(issue))?;
                    let write = (!m.changes.is_empty()).then(|| m.text.into_bytes());
                    Ok((write, m.changes))
                });
                match updated {
                    Ok(changes) => changes,
                    Err(e) => {
                        outcome.errors.push(fail(&e));
                        continue;
                    }
                }
            }
        };
        if changes.is_empty() {
            outcome.unchanged += 1;
        } else {
            outcome.migrated.push(Migrated { file, changes });
        }
    }
    Ok(outcome)
}
