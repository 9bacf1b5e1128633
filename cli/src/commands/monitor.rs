//! The monitor as every command runs it (SPEC §7): one parallel pass reads, parses and decides
//! every ledger; each ledger that would change is then re-read and re-decided under its lock
//! (never written from a stale copy) and written; statuses take the events under their lock.

use agentx_clarify_core::agents::apply_events;
use agentx_clarify_core::monitor::{monitor_ledger, Report, ReportError};
use agentx_clarify_core::{ClarifyError, Config, Event, Ledger, Statuses};
use serde_json::{json, Value};

use crate::store::{parallel_map, read_one, Workspace, STATUS_FILE};

/// What a monitor run found and did.
#[derive(Clone, Debug, Default)]
pub struct MonitorRun {
    pub report: Report,
    pub events: Vec<Event>,
}

impl MonitorRun {
    /// `agentx clarify monitor --json`.
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "report": self.report, "events": self.events})
    }
}

/// What the monitor would do to one ledger, as found by the first (read-only) pass.
struct Finding {
    issue: u32,
    changed: bool,
    report: Report,
    events: Vec<Event>,
    /// The ledger as read, when asked for and the monitor leaves it unchanged.
    unchanged: Option<Ledger>,
}

/// Runs the monitor at `now`; with `dry_run` nothing is written.
pub fn run_monitor(
    ws: &Workspace,
    config: &Config,
    now: i64,
    dry_run: bool,
) -> Result<MonitorRun, ClarifyError> {
    monitor_pass(ws, config, now, dry_run, false).map(|(run, _)| run)
}

/// Runs the monitor at `now` and returns every readable ledger as it stands afterwards, for
/// views over the whole workspace (`ready`): the ledgers the monitor left alone come from its
/// own read, the rest are read again, so no file is parsed twice without need.
pub fn run_monitor_keeping_ledgers(
    ws: &Workspace,
    config: &Config,
    now: i64,
) -> Result<(MonitorRun, Vec<Ledger>), ClarifyError> {
    monitor_pass(ws, config, now, false, true)
}

fn monitor_pass(
    ws: &Workspace,
    config: &Config,
    now: i64,
    dry_run: bool,
    keep: bool,
) -> Result<(MonitorRun, Vec<Ledger>), ClarifyError> {
    let mut errors = Vec::new();
    // Statuses are read without a lock (SPEC §8); a corrupt file only disables abandonment.
    let statuses = ws.read_statuses().unwrap_or_else(|e| {
        errors.push(ReportError::new(STATUS_FILE, &e));
        Statuses::new()
    });
    let status_readable = errors.is_empty();
    let listing = ws.list_clarifications()?;
    let files = listing.ledgers;
    // The first pass keeps only what each ledger's monitor found: the ledger itself is dropped
    // in its worker unless asked for (a changed one is re-read under its lock below, never
    // written from here).
    let first_pass: Vec<Result<Finding, ReportError>> = parallel_map(&files, |(n, path)| {
        read_one(*n, path).map(|ledger| {
            let issue = ledger.issue_number;
            let outcome = monitor_ledger(ledger, &statuses, config, now);
            Finding {
                issue,
                changed: outcome.changed,
                report: outcome.report,
                events: outcome.events,
                unchanged: (keep && !outcome.changed).then_some(outcome.ledger),
            }
        })
    });

    let mut run = MonitorRun::default();
    let mut kept = Vec::new();
    for (outcome, (n, path)) in first_pass.into_iter().zip(&files) {
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Some(ledger) = outcome.unchanged {
            kept.push(ledger);
            continue;
        }
        if !outcome.changed {
            continue;
        }
        let decided = if dry_run {
            Some((outcome.report, outcome.events))
        } else {
            let issue = outcome.issue;
            let name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let result = ws.update_ledger(issue, config, "monitor", |current| match current {
                None => Ok((None, None)),
                Some(fresh) => {
                    let again = monitor_ledger(fresh, &statuses, config, now);
                    if again.changed {
                        Ok((Some(again.ledger), Some((again.report, again.events))))
                    } else {
                        Ok((None, None))
                    }
                }
            });
            result.unwrap_or_else(|e| {
                errors.push(ReportError::new(name.as_str(), &e));
                None
            })
        };
        if let Some((report, events)) = decided {
            run.report.merge(report);
            run.events.extend(events);
        }
        if keep {
            // Whatever the write did (or another writer did meanwhile): the file as it is now.
            kept.extend(read_one(*n, path).ok());
        }
    }
    if !dry_run && status_readable && !run.events.is_empty() {
        if let Err(e) = ws.update_statuses(config, "monitor", |s| {
            apply_events(s, &run.events);
            Ok(())
        }) {
            errors.push(ReportError::new(STATUS_FILE, &e));
        }
    }
    if !dry_run {
        ws.sweep_temp_files(config, &listing.temp_files);
    }
    errors.sort_by(|a, b| a.file.cmp(&b.file));
    run.report.errors = errors;
    Ok((run, kept))
}
