//! Delegation commands (docs/protocol.md §18): `delegate request|accept|complete|reject|fail|show|list`,
//! and what the rest of the layer asks of delegations — the next wake-up, the metrics of `stats`, the checks of `verify`. Each mutation runs the rhythm of
//! a clarification command: validate, read, decide and write in one update of the issue's
//! delegation ledger, then the follow-up monitor, then the delegation as it now stands.

use agentx_clarify_core::delegation::{
    self, Action, Delegation, DelegationId, DelegationLedger, NewDelegation, Status,
};
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::stats::{stats_with_delegations, Stats};
use agentx_clarify_core::verify::Problem;
use agentx_clarify_core::{ClarifyError, Config, Ledger};
use serde_json::{json, Value};

pub use crate::monitor::timeouts::{timeout_phase, Timeouts};
use crate::monitor::{monitor_after, MonitorRun};
use crate::store::delegations::DelegationRead;
use crate::store::Scope;
use crate::store::Store;

/// What a delegation command did.
#[derive(Clone, Debug)]
pub struct DelegationOutcome {
    pub issue: u32,
    pub id: String,
    /// The delegation as stored after the operation and the monitor that followed it.
    pub delegation: Option<Delegation>,
    /// The operation's events, then the monitor's delegation events.
    pub events: Vec<delegation::Event>,
    pub idempotent: bool,
    pub monitor: MonitorRun,
    /// What failed after the delegation ledger was written (docs/protocol.md §20).
    pub warnings: Vec<String>,
}

impl DelegationOutcome {
    /// The command's `--json` shape: `delegationEvents` holds delegation events, `events`
    /// the clarification events of the monitor that followed (as every command's `events`).
    pub fn to_json(&self) -> Value {
        json!({
            "ok": true,
            "delegation": self.delegation.as_ref().map_or(Value::Null, |d| d.to_output(self.issue)),
            "delegationEvents": self.events,
            "events": self.monitor.events,
            "idempotent": self.idempotent,
            "monitor": self.monitor.report,
            "warnings": self.warnings,
        })
    }
}

/// `delegate request`: validate, then decide and write under the issue's delegation ledger
/// update, then the monitor. A capability the target's manifest lacks or excludes is written
/// as `REJECTED_CAPABILITY` at once (a fact for the gap score, not a failure).
pub fn request<S: Store>(
    store: &S,
    now: i64,
    req: &NewDelegation,
) -> Result<DelegationOutcome, ClarifyError> {
    let config = store.load_config()?;
    let issue = req.validate(&config)?;
    let manifests = store.load_manifests()?;
    // A refused request writes nothing, not even a lock file or a directory.
    if store.read_delegations(issue)?.is_none() {
        delegation::request(None, req, &manifests, &config, now)?;
    }
    let applied = store.update_delegations(issue, &config, &req.from, |current| {
        let applied = delegation::request(current.as_ref(), req, &manifests, &config, now)?;
        let write = (!applied.idempotent).then(|| applied.ledger.clone());
        Ok((write, applied))
    })?;
    finish(store, &config, now, issue, applied)
}

/// `delegate accept|complete|reject|fail` on an existing delegation.
pub fn act<S: Store>(
    store: &S,
    now: i64,
    id: &str,
    action: &Action,
) -> Result<DelegationOutcome, ClarifyError> {
    let config = store.load_config()?;
    let issue = DelegationId::parse(id)?.issue;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    // No ledger, no update: a missing issue must not leave anything behind. Decided on an
    // empty ledger, the input's own errors still come before NOT_FOUND.
    if store.read_delegations(issue)?.is_none() {
        delegation::act(&DelegationLedger::new(issue), id, action, &config, now)?;
        return Err(not_found());
    }
    let applied = store.update_delegations(issue, &config, &action.by, |current| {
        let ledger = current.ok_or_else(not_found)?;
        let applied = delegation::act(&ledger, id, action, &config, now)?;
        Ok((Some(applied.ledger.clone()), applied))
    })?;
    finish(store, &config, now, issue, applied)
}

fn finish<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    issue: u32,
    applied: delegation::Applied,
) -> Result<DelegationOutcome, ClarifyError> {
    // The delegation ledger is written: what fails from here on is a warning (docs/protocol.md §20).
    let mut warnings = Vec::new();
    let monitor = monitor_after(store, config, now, None, &mut warnings);
    let delegation = match store.read_delegations(issue) {
        Ok(ledger) => ledger.and_then(|l| l.find(&applied.id).cloned()),
        Err(e) => {
            warnings.push(format!(
                "the delegation was written, but reading it back failed: {e}"
            ));
            applied.ledger.find(&applied.id).cloned()
        }
    };
    let mut events = applied.events;
    events.extend(monitor.delegation_events.iter().cloned());
    Ok(DelegationOutcome {
        issue,
        id: applied.id,
        delegation,
        events,
        idempotent: applied.idempotent,
        monitor,
        warnings,
    })
}

/// `delegate show DLG-…`.
pub fn show<S: Store>(store: &S, id: &str) -> Result<(u32, Delegation), ClarifyError> {
    let issue = DelegationId::parse(id)?.issue;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    let ledger = store.read_delegations(issue)?.ok_or_else(not_found)?;
    let d = ledger.find(id).cloned().ok_or_else(not_found)?;
    Ok((issue, d))
}

/// `delegate show --issue N`: the whole delegation ledger of an issue.
pub fn show_issue<S: Store>(store: &S, issue: u32) -> Result<DelegationLedger, ClarifyError> {
    store
        .read_delegations(issue)?
        .ok_or(ClarifyError::NoDelegations { issue })
}

/// Which delegations `delegate list` shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelegationFilter {
    pub issue: Option<u32>,
    /// Only these statuses; empty = the open ones (REQUESTED, ACCEPTED) unless `all`.
    pub statuses: Vec<Status>,
    pub all: bool,
}

impl DelegationFilter {
    fn admits(&self, d: &Delegation) -> bool {
        let status = d.current_status();
        if !self.statuses.is_empty() {
            self.statuses.contains(&status)
        } else {
            self.all || status.is_open()
        }
    }
}

/// What `delegate list` found: matching delegations by issue then sequence, and the ledgers
/// that could not be read.
#[derive(Clone, Debug, Default)]
pub struct DelegationList {
    pub delegations: Vec<(u32, Delegation)>,
    pub errors: Vec<ReportError>,
}

impl DelegationList {
    pub fn to_json(&self) -> Value {
        let items: Vec<Value> = self
            .delegations
            .iter()
            .map(|(issue, d)| d.to_output(*issue))
            .collect();
        json!({"ok": true, "delegations": items, "errors": self.errors})
    }
}

/// `delegate list`. With an issue only its ledger is read, and one that cannot be read is
/// the command's failure.
pub fn list<S: Store>(
    store: &S,
    filter: &DelegationFilter,
) -> Result<DelegationList, ClarifyError> {
    let (ledgers, errors) = match filter.issue {
        Some(issue) => (
            store.read_delegations(issue)?.into_iter().collect(),
            Vec::new(),
        ),
        None => readable(store.scan_delegations(Scope::All)?),
    };
    let delegations = ledgers
        .iter()
        .flat_map(|l| {
            l.delegations
                .iter()
                .filter(|d| filter.admits(d))
                .map(|d| (l.issue_number, d.clone()))
        })
        .collect();
    Ok(DelegationList {
        delegations,
        errors,
    })
}

/// The readable ledgers of a pass, and why the others could not be read.
pub fn readable(reads: Vec<DelegationRead>) -> (Vec<DelegationLedger>, Vec<ReportError>) {
    let mut ledgers = Vec::with_capacity(reads.len());
    let mut errors = Vec::new();
    for read in reads {
        match read.ledger {
            Ok(l) => ledgers.push(l),
            Err(e) => errors.push(e),
        }
    }
    (ledgers, errors)
}

/// The earliest deadline of an accepted delegation (the instant the monitor would time it
/// out), over every readable delegation ledger.
pub fn next_wakeup<S: Store>(store: &S) -> Result<Option<i64>, ClarifyError> {
    let (ledgers, _) = readable(store.scan_delegations(Scope::All)?);
    Ok(ledgers.iter().filter_map(delegation::next_wakeup).min())
}

/// `stats` with seed 003's delegation metrics and gap scores over the readable delegation
/// ledgers (absent when there is no delegation).
pub fn stats<S: Store>(
    store: &S,
    ledgers: &[Ledger],
    since: Option<i64>,
) -> Result<Stats, ClarifyError> {
    let (delegations, _) = readable(store.scan_delegations(Scope::All)?);
    let manifests = store.load_manifests()?;
    Ok(stats_with_delegations(
        ledgers,
        &delegations,
        &manifests,
        since,
    ))
}

/// `verify` over the delegation ledgers: how many there are, and every problem — a file that
/// cannot be read or parsed, a broken or partial hash chain, an envelope edited after its
/// request, a stored status that is not the thread's.
pub fn verify<S: Store>(store: &S) -> Result<(usize, Vec<Problem>), ClarifyError> {
    let reads = store.scan_delegations(Scope::All)?;
    let files = reads.len();
    let mut problems = Vec::new();
    for read in reads {
        match read.ledger {
            Err(e) => problems.push(Problem {
                file: read.file,
                id: None,
                message: e.message,
                code: None,
            }),
            Ok(l) => {
                for d in &l.delegations {
                    for p in d.problems() {
                        let message = p
                            .strip_prefix(&format!("{}: ", d.id))
                            .map_or_else(|| p.clone(), str::to_owned);
                        problems.push(Problem {
                            file: read.file.clone(),
                            id: Some(d.id.clone()),
                            message,
                            code: None,
                        });
                    }
                }
            }
        }
    }
    Ok((files, problems))
}
