//! The monitor as every command runs it (docs/protocol.md §7): one pass (which a store may run in
//! parallel) reads and decides every ledger in scope; each ledger that would change is then
//! re-read and re-decided inside its own update (never written from a stale copy); the
//! statuses take the events in their own update. Then the delegation phase: accepted
//! delegations past their deadline time out (docs/protocol.md §18).

pub mod timeouts;
pub mod wakeup;

use agentx_clarify_core::agents::apply_events;
use agentx_clarify_core::delegation;
use agentx_clarify_core::monitor::follow::abandon_candidates;
use agentx_clarify_core::monitor::{monitor_ledger_with, LedgerOutcome, Report, ReportError};
use agentx_clarify_core::signing::Signers;
use agentx_clarify_core::verify::issue_of_file_name;
use agentx_clarify_core::{ClarifyError, Config, Event, Ledger, Statuses};
use serde_json::{json, Value};

use crate::store::paths::STATUS_FILE;
use crate::store::Store;
use crate::store::{LedgerRead, Scope};

/// What a monitor run found and did.
#[derive(Clone, Debug, Default)]
pub struct MonitorRun {
    pub report: Report,
    pub events: Vec<Event>,
    /// The delegations it timed out (their ids are the report's `timedOut`).
    pub delegation_events: Vec<delegation::Event>,
    /// The issues whose ledgers this pass wrote (not part of any JSON shape): a command that
    /// ran it as its follow-up re-reads its own ledger only when it is among them.
    pub wrote: Vec<u32>,
}

impl MonitorRun {
    /// `agentx clarify monitor --json` (`delegationEvents` only when a delegation timed out).
    pub fn to_json(&self) -> Value {
        let mut v = json!({"ok": true, "report": self.report, "events": self.events});
        if let (false, Value::Object(m)) = (self.delegation_events.is_empty(), &mut v) {
            m.insert("delegationEvents".into(), json!(self.delegation_events));
        }
        v
    }
}

/// What the monitor would do to one ledger, as found by the read-only pass.
struct Finding {
    issue: u64,
    file: String,
    changed: bool,
    report: Report,
    events: Vec<Event>,
    /// The ledger as read, when asked for and the monitor leaves it unchanged.
    unchanged: Option<Ledger>,
}

impl Finding {
    /// What the pass carries of one ledger's outcome: a change, or the unchanged ledger when
    /// `keep` asks for it; nothing otherwise.
    fn worth_keeping(
        issue: u64,
        file: String,
        outcome: LedgerOutcome,
        keep: bool,
    ) -> Option<Box<Finding>> {
        (keep || outcome.changed).then(|| {
            Box::new(Finding {
                issue,
                file,
                changed: outcome.changed,
                report: outcome.report,
                events: outcome.events,
                unchanged: (keep && !outcome.changed).then_some(outcome.ledger),
            })
        })
    }
}

/// Runs the monitor at `now` over `scope`; with `dry_run` nothing is written.
pub fn run_monitor<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    dry_run: bool,
    scope: Scope<'static>,
) -> Result<MonitorRun, ClarifyError> {
    // A dry run changes nothing, the file store's index included.
    let scope = match scope {
        Scope::Monitor if dry_run => Scope::MonitorDryRun,
        other => other,
    };
    let pass = Pass {
        dry_run,
        ..Pass::over(scope)
    };
    monitor_pass(store, config, now, pass).map(|(run, _)| run)
}

/// The monitor that follows a command: never the command's failure — the command's own write
/// stands (docs/protocol.md §20). What it could not do to one ledger is in its report's `errors`; a run
/// that could not start at all is a warning of the command.
pub fn monitor_after<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    written: Option<u32>,
    warnings: &mut Vec<String>,
) -> MonitorRun {
    monitor_after_signed(store, config, now, written, None, warnings)
}

/// [`monitor_after`] with the keys the command already read (`None`: read them): a write
/// parses its keys once, not again for its monitor.
pub fn monitor_after_signed<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    written: Option<u32>,
    signers: Option<&Signers>,
    warnings: &mut Vec<String>,
) -> MonitorRun {
    let pass = Pass {
        signers,
        ..Pass::after(written, None)
    };
    follow_up(store, config, now, pass, warnings)
}

/// [`monitor_after_signed`] for a command that holds the ledger it wrote, exactly as written:
/// the pass takes that one from memory instead of reading it back (an ask on an issue of
/// hundreds of records would otherwise parse them all once more), and takes it over instead
/// of copying it. Deciding on it is as safe as on a read: what the monitor would change is
/// re-read and re-decided in its own update. `statuses`: the agent statuses as the command
/// just wrote them, if it did (`None`: the pass reads them).
pub fn monitor_after_held<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    written: Ledger,
    signers: &Signers,
    statuses: Option<Statuses>,
    warnings: &mut Vec<String>,
) -> MonitorRun {
    let pass = Pass {
        signers: Some(signers),
        statuses,
        ..Pass::after(None, Some(written))
    };
    follow_up(store, config, now, pass, warnings)
}

/// A follow-up `pass`; one that cannot start is a warning, never the command's failure.
fn follow_up<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    pass: Pass<'_>,
    warnings: &mut Vec<String>,
) -> MonitorRun {
    monitor_pass(store, config, now, pass)
        .map(|(run, _)| run)
        .unwrap_or_else(|e| {
            warnings.push(format!("the follow-up monitor did not run: {e}"));
            MonitorRun::default()
        })
}

/// Runs the monitor at `now` over every ledger and returns every readable ledger as it stands
/// afterwards, for views over the whole workspace (`ready`): the ledgers the monitor left
/// alone come from its own read, the rest are read again, so no ledger is parsed twice
/// without need.
pub fn run_monitor_keeping_ledgers<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
) -> Result<(MonitorRun, Vec<Ledger>), ClarifyError> {
    let pass = Pass {
        keep: true,
        ..Pass::over(Scope::All)
    };
    monitor_pass(store, config, now, pass)
}

/// What one monitor pass covers and what its caller hands it.
struct Pass<'a> {
    scope: Scope<'static>,
    /// A follow-up of a command that wrote this ledger (if any): the scope is
    /// [`Scope::FollowUp`], built once the statuses are known.
    follow_up: Option<Option<u32>>,
    /// Decide and report, write nothing.
    dry_run: bool,
    /// Return every readable ledger as it stands after the pass.
    keep: bool,
    /// The keys that sign what the pass writes (`None`: read the workspace's hub key).
    signers: Option<&'a Signers>,
    /// The ledger the command just wrote, in hand: not read back.
    held: Option<Ledger>,
    /// The agent statuses as the command just wrote them (`None`: read them).
    statuses: Option<Statuses>,
}

impl Pass<'_> {
    /// A pass over `scope` that writes, keeps nothing and reads what it needs.
    fn over(scope: Scope<'static>) -> Self {
        Pass {
            scope,
            follow_up: None,
            dry_run: false,
            keep: false,
            signers: None,
            held: None,
            statuses: None,
        }
    }

    /// The pass after a command's write of `written` (by number, read by the store) or of
    /// `held` (in hand).
    fn after(written: Option<u32>, held: Option<Ledger>) -> Self {
        Pass {
            follow_up: Some(held.as_ref().map(|l| l.issue_number).or(written)),
            held,
            ..Pass::over(Scope::All)
        }
    }
}

fn monitor_pass<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    pass: Pass<'_>,
) -> Result<(MonitorRun, Vec<Ledger>), ClarifyError> {
    let Pass {
        scope,
        follow_up,
        dry_run,
        keep,
        signers,
        held,
        statuses,
    } = pass;
    let mut errors = Vec::new();
    // Statuses are read without excluding writers (docs/protocol.md §8); a corrupt file only disables
    // abandonment. The ones a command just wrote are as good as a read that follows its
    // write, and save reading them back.
    let statuses = statuses_or_read(store, statuses, &mut errors);
    let status_readable = errors.is_empty();
    // A follow-up reads what is due now, what is on a cycle, and the ledgers of the agents
    // whose status may abandon their records (docs/protocol.md §29): the statuses say which.
    let candidates = match follow_up {
        Some(_) => abandon_candidates(&statuses),
        None => Vec::new(),
    };
    let scope = match follow_up {
        Some(written) => Scope::FollowUp {
            written,
            held: held.is_some(),
            now,
            candidates: &candidates,
        },
        None => scope,
    };
    // What the monitor writes is signed with the hub key when the workspace holds it.
    let read;
    let signers = match signers {
        Some(s) => s,
        None => {
            // The monitor writes as `monitor`: only the hub key signs.
            read = crate::store::keys::signers_for(store, &[])?;
            &read
        }
    };
    // The pass keeps only what each ledger's monitor found: the ledger itself is dropped in
    // its visit unless asked for (a changed one is re-read in its update below, never written
    // from here), and a ledger the monitor leaves alone leaves nothing unless asked for (most
    // of a workspace: its finding would only be carried to the loop below and skipped there).
    // A finding is boxed: the pass's result is one slot per ledger, and most slots are empty.
    let decide = |issue: u64, file: String, ledger: Ledger| {
        let outcome = monitor_ledger_with(ledger, &statuses, config, now, signers);
        Finding::worth_keeping(issue, file, outcome, keep)
    };
    let found = scan_findings(store, scope, held, decide)?;

    let mut run = MonitorRun::default();
    let mut kept = Vec::new();
    for finding in found {
        let finding = match finding {
            Ok(Some(f)) => *f,
            Ok(None) => continue,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Some(ledger) = finding.unchanged {
            kept.push(ledger);
            continue;
        }
        if !finding.changed {
            continue;
        }
        // The pass only reads ledgers it could name by a valid issue number.
        let Ok(issue) = u32::try_from(finding.issue) else {
            continue;
        };
        let decided = if dry_run {
            Some((finding.report, finding.events))
        } else {
            let result = rewrite(store, config, now, signers, &statuses, issue);
            result.unwrap_or_else(|e| {
                errors.push(ReportError::new(finding.file.as_str(), &e));
                None
            })
        };
        if let Some((report, events)) = decided {
            if !dry_run {
                run.wrote.push(issue);
            }
            run.report.merge(report);
            run.events.extend(events);
        }
        if keep {
            // Whatever the write did (or another writer did meanwhile): the ledger as it is now.
            kept.extend(store.read_ledger(issue).ok().flatten());
        }
    }
    crate::monitor::timeouts::timeout_phase(store, config, now, dry_run, scope)
        .merge_into(&mut run.report, &mut run.delegation_events);
    errors.append(&mut run.report.errors);
    if !dry_run && status_readable && !run.events.is_empty() {
        record_statuses(store, config, &run.events, &mut errors);
    }
    if !dry_run {
        store.after_monitor(config);
    }
    agentx_clarify_core::stable_sort::sort_by(&mut errors, |a, b| a.file.cmp(&b.file));
    run.report.errors = errors;
    Ok((run, kept))
}

/// One ledger's slot in a pass: a finding worth carrying, nothing, or why it was unreadable.
type Slot = Result<Option<Box<Finding>>, ReportError>;

/// The agents' statuses: those a command just wrote, else read without excluding writers
/// (docs/protocol.md §8); a corrupt file is an error of the pass and only disables abandonment.
fn statuses_or_read<S: Store>(
    store: &S,
    given: Option<Statuses>,
    errors: &mut Vec<ReportError>,
) -> Statuses {
    match given {
        Some(s) => s,
        None => store.read_statuses().unwrap_or_else(|e| {
            errors.push(ReportError::new(STATUS_FILE, &e));
            Statuses::new()
        }),
    }
}

/// The slots of the ledgers `scope` names, each `decide`d as visited; the held ledger is
/// decided from memory and put in its place in issue order, whatever the store visited.
fn scan_findings<S: Store>(
    store: &S,
    scope: Scope<'_>,
    held: Option<Ledger>,
    decide: impl Fn(u64, String, Ledger) -> Option<Box<Finding>> + Sync,
) -> Result<Vec<Slot>, ClarifyError> {
    let held_issue = held.as_ref().map(|l| u64::from(l.issue_number));
    let mut found: Vec<Slot> = store.scan(scope, |read: LedgerRead| {
        let LedgerRead {
            issue,
            file,
            ledger,
        } = read;
        if Some(issue) == held_issue {
            return Ok(None);
        }
        ledger.map(|l| decide(issue, file, l))
    })?;
    if let Some(ledger) = held {
        let issue = u64::from(ledger.issue_number);
        let file = crate::store::paths::ledger_name(ledger.issue_number);
        // Empty slots have no issue to order by.
        let at = found
            .iter()
            .position(|f| match f {
                Ok(Some(f)) => f.issue > issue,
                Ok(None) => false,
                Err(e) => issue_of_file_name(&e.file).is_some_and(|n| n > issue),
            })
            .unwrap_or(found.len());
        found.insert(at, Ok(decide(issue, file, ledger)));
    }
    Ok(found)
}

/// Writes the monitor's changes to `issue`, decided again on the ledger as it is under the
/// write (another writer may have moved it since the read-only pass); `None`: nothing to do.
fn rewrite<S: Store>(
    store: &S,
    config: &Config,
    now: i64,
    signers: &Signers,
    statuses: &Statuses,
    issue: u32,
) -> Result<Option<(Report, Vec<Event>)>, ClarifyError> {
    store.update_ledger(issue, config, "monitor", |current| match current {
        None => Ok((None, None)),
        Some(fresh) => {
            let again = monitor_ledger_with(fresh, statuses, config, now, signers);
            if again.changed {
                Ok((Some(again.ledger), Some((again.report, again.events))))
            } else {
                Ok((None, None))
            }
        }
    })
}

/// Applies the pass's events to the agents' statuses; a failure is an error of the pass.
fn record_statuses<S: Store>(
    store: &S,
    config: &Config,
    events: &[Event],
    errors: &mut Vec<ReportError>,
) {
    if let Err(e) = store.update_statuses(config, "monitor", |s| {
        apply_events(s, events);
        Ok(())
    }) {
        errors.push(ReportError::new(STATUS_FILE, &e));
    }
}
