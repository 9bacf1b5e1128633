//! Subagent signals (docs/protocol.md §17): `signals ingest` acts on the blocks of an agent's output,
//! `signals resume-prompt` (and `clarify resume-prompt`) gives the text that resumes it.
//!
//! Ingest changes up to two ledgers of one issue: `[CLARIFICATION_NEEDED]` and `[STOP_WORK]`
//! the clarification ledger, `[DELEGATE_WORK]` and `[COMPLETION_REPORT]` the delegation
//! ledger. Each block changes exactly one of them, so it is applied whole or not at all. Both
//! are held while the core decides (`Store::update_issue`): the delegation ledger is
//! written first, then the clarification ledger. Should the second write fail, the delegation
//! blocks are in and the clarification blocks are not, and the command fails; every block's
//! key is on what it wrote, so running the same ingest again skips what is in and applies the
//! rest.

use agentx_clarify_core::agents::apply_events;
use agentx_clarify_core::delegation::{DelegationId, DelegationLedger};
use agentx_clarify_core::signals::{self, Context, Executed, Existing, Resume};
use agentx_clarify_core::{ClarifyError, Ledger};
use serde_json::{json, Value};

use crate::monitor::{monitor_after, MonitorRun};
use crate::store::paths::STATUS_FILE;
use crate::store::Store;

/// What `signals ingest` did.
#[derive(Clone, Debug)]
pub struct Ingested {
    /// What each block did, the events of the blocks.
    pub executed: Executed,
    /// The monitor that followed (none when nothing was written).
    pub monitor: MonitorRun,
    /// What failed after the ledgers were written (the statuses): the ingest stands.
    pub warnings: Vec<String>,
}

impl Ingested {
    /// The `--json` report: the core's report of every block (`Executed`), with the monitor's
    /// events after the blocks' (`events`, `delegationEvents`) and its report.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(&self.executed).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            if let Some(Value::Array(events)) = m.get_mut("events") {
                events.extend(self.monitor.events.iter().map(|e| json!(e)));
            }
            if let Some(Value::Array(events)) = m.get_mut("delegationEvents") {
                events.extend(self.monitor.delegation_events.iter().map(|e| json!(e)));
            }
            m.insert("monitor".into(), json!(self.monitor.report));
            m.insert("warnings".into(), json!(self.warnings));
            let mut out = serde_json::Map::new();
            out.insert("ok".into(), Value::Bool(true));
            out.append(m);
            return Value::Object(out);
        }
        v
    }
}

/// `signals ingest`: parse `text`, decide every block under both ledgers of the issue, write
/// what changed, then the statuses and the follow-up monitor. Idempotent: a block already
/// ingested (its key is on a record, a delegation, an entry or a report) is skipped.
pub fn ingest<S: Store>(
    store: &S,
    now: i64,
    ctx: &Context,
    text: &str,
) -> Result<Ingested, ClarifyError> {
    let config = store.load_config()?;
    // A corrupt status file or an unusable key stops the command before anything is written.
    store.read_statuses()?;
    let signers = crate::store::keys::signers(store)?;
    let workflows = store.load_workflows()?;
    let manifests = store.load_manifests()?;
    let parsed = signals::parse(text);
    if parsed.blocks.len() > signals::MAX_INGEST_BLOCKS {
        return Err(ClarifyError::input(format!(
            "the input holds {} signal blocks; at most {} are ingested at once (docs/protocol.md §31) — split it",
            parsed.blocks.len(),
            signals::MAX_INGEST_BLOCKS
        )));
    }
    let decide = |ledger: Option<&Ledger>, delegations: Option<&DelegationLedger>| {
        let existing = Existing {
            ledger,
            delegations,
        };
        signals::ingest(
            &parsed,
            ctx,
            &existing,
            signals::Rules {
                config: &config,
                workflows: &workflows,
                manifests: &manifests,
            },
            now,
            &signers,
        )
    };
    // Nothing to write on an issue with no ledgers yet (every block invalid or refused, or no
    // block at all): decided without taking a lock, so nothing is left behind.
    let (ledger, delegations) = (
        store.read_ledger(ctx.issue)?,
        store.read_delegations(ctx.issue)?,
    );
    if ledger.is_none() && delegations.is_none() {
        let executed = decide(None, None)?;
        if executed.ledger.is_none() && executed.delegations.is_none() {
            return Ok(Ingested {
                executed,
                monitor: MonitorRun::default(),
                warnings: Vec::new(),
            });
        }
    }
    // The ledgers to write move to the store; the report keeps what each block did.
    let (executed, wrote) = store.update_issue(ctx.issue, &config, &ctx.agent, |l, d| {
        let mut executed = decide(l, d)?;
        let (ledger, delegations) = (executed.ledger.take(), executed.delegations.take());
        let wrote = ledger.is_some() || delegations.is_some();
        Ok((ledger, delegations, (executed, wrote)))
    })?;
    let mut warnings = Vec::new();
    if !executed.events.is_empty() {
        let updated = store.update_statuses(&config, &ctx.agent, |statuses| {
            apply_events(statuses, &executed.events);
            Ok(())
        });
        if let Err(e) = updated {
            warnings.push(format!(
                "the ledgers were written, but {STATUS_FILE} was not updated: {e}"
            ));
        }
    }
    let monitor = if wrote {
        monitor_after(store, &config, now, Some(ctx.issue), &mut warnings)
    } else {
        MonitorRun::default()
    };
    Ok(Ingested {
        executed,
        monitor,
        warnings,
    })
}

/// The resume text of a clarification (`CLR-…`: `CLARIFICATION RESPONSE`, or `BLOCKER
/// RESOLVED` for a resolved `[STOP_WORK]` record) or of a delegation (`DLG-…`: `DELEGATION
/// APPROVED`, `REJECTED` or `FAILED`), as stored now.
pub fn resume_prompt<S: Store>(store: &S, id: &str) -> Result<Resume, ClarifyError> {
    if id.starts_with("DLG-") {
        let issue = DelegationId::parse(id)?.issue;
        let (_, d) = crate::delegate::show(store, id)?;
        return Ok(signals::resume_delegation(issue, &d));
    }
    let (issue, record) = crate::query::show_id(store, id)?;
    Ok(signals::resume_record(issue, &record))
}
