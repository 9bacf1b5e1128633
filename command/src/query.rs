//! The reading commands: `list`, `show`, `stats`, `verify`, and `ready` (which runs the
//! monitor first).

use agentx_clarify_core::envelope::error_value;
use agentx_clarify_core::error::ErrorCode;
use agentx_clarify_core::ledger::RecordOutput;
use agentx_clarify_core::listing::{self, ListFilter, ReadyIssue};
use agentx_clarify_core::monitor::{wait_for_graph, ReportError, WaitForGraph};
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::scope::{Preview, Question};
use agentx_clarify_core::stats::{people_stats, PersonStats, Stats};
use agentx_clarify_core::verify::{check_file_with, failure_code, Problem, Verification};
use agentx_clarify_core::{ClarifyError, Ledger, Record};
use serde::Serialize;
use serde_json::{json, Value};

use crate::monitor::{run_monitor_keeping_ledgers, MonitorRun};
use crate::store::{LedgerRead, Scope, Store};

/// Every readable ledger, and why the others could not be read.
pub fn read_all<S: Store>(store: &S) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    let reads = store.scan(Scope::All, |read: LedgerRead| read.ledger)?;
    let mut ledgers = Vec::with_capacity(reads.len());
    let mut errors = Vec::new();
    for read in reads {
        match read {
            Ok(l) => ledgers.push(l),
            Err(e) => errors.push(e),
        }
    }
    Ok((ledgers, errors))
}

/// What `list` found: the matching records, and the ledgers that could not be read (docs/protocol.md §20:
/// never skipped silently).
#[derive(Clone, Debug, Default)]
pub struct Listed {
    pub records: Vec<(u32, Record)>,
    pub errors: Vec<ReportError>,
}

/// `list --json`: serialised straight from the records (a list can be megabytes).
#[derive(Serialize)]
pub struct ListJson<'a> {
    ok: bool,
    clarifications: Vec<RecordOutput<'a>>,
    errors: &'a [ReportError],
}

impl Listed {
    pub fn to_json(&self) -> ListJson<'_> {
        ListJson {
            ok: true,
            clarifications: self.records.iter().map(|(i, r)| r.output(*i)).collect(),
            errors: &self.errors,
        }
    }
}

/// Records matching `filter` (default: open ones), by issue then sequence. With an issue, only
/// its ledger is read, and a ledger that cannot be read is the command's failure
/// (`LEDGER_CORRUPT` for a corrupt or misfiled one).
pub fn list<S: Store>(store: &S, filter: &ListFilter) -> Result<Listed, ClarifyError> {
    let (ledgers, errors) = match filter.issue {
        Some(issue) => (store.read_ledger(issue)?.into_iter().collect(), Vec::new()),
        None => read_all(store)?,
    };
    let records = listing::list(&ledgers, filter)
        .into_iter()
        .map(|(i, r)| (i, r.clone()))
        .collect();
    Ok(Listed { records, errors })
}

/// One record by id.
pub fn show_id<S: Store>(store: &S, id: &str) -> Result<(u32, Record), ClarifyError> {
    let parsed = ClarificationId::parse(id)?;
    let not_found = || ClarifyError::NotFound { id: id.to_owned() };
    let ledger = store.read_ledger(parsed.issue)?.ok_or_else(not_found)?;
    let record = ledger.find(id).cloned().ok_or_else(not_found)?;
    Ok((parsed.issue, record))
}

/// `show`'s answer for one record: the record as outputs show it and, once a person decided
/// it, the decision `{by, via, value, label, text, at}` at the top (docs/protocol.md §23), so
/// the asking agent need not find it in the thread.
pub fn show_json(issue: u32, record: &Record) -> Value {
    let mut out = json!({"ok": true, "clarification": record.to_output(issue)});
    if let (Some(d), Value::Object(m)) = (record.decision(), &mut out) {
        m.insert(
            "decision".into(),
            serde_json::to_value(d).unwrap_or(Value::Null),
        );
    }
    out
}

/// The whole ledger of an issue.
pub fn show_issue<S: Store>(store: &S, issue: u32) -> Result<Ledger, ClarifyError> {
    store
        .read_ledger(issue)?
        .ok_or(ClarifyError::NoLedger { issue })
}

/// `stats`: the analytics and the ledgers they could not count.
#[derive(Clone, Debug)]
pub struct StatsOutcome {
    pub stats: Stats,
    /// One row per person (docs/protocol.md §37), when asked for (`stats --people`).
    pub people: Option<Vec<PersonStats>>,
    pub errors: Vec<ReportError>,
}

impl StatsOutcome {
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        out.insert(String::from("ok"), Value::Bool(true));
        out.insert(String::from("stats"), json!(self.stats));
        // Only when asked, so `stats` without `people` answers exactly as before.
        if let Some(rows) = &self.people {
            out.insert(String::from("people"), json!(rows));
        }
        out.insert(String::from("errors"), json!(self.errors));
        Value::Object(out)
    }
}

/// Analytics over every readable ledger, optionally only records created since `since`, with
/// the delegation metrics when there are delegations.
pub fn stats<S: Store>(store: &S, since: Option<i64>) -> Result<StatsOutcome, ClarifyError> {
    let (ledgers, errors) = read_all(store)?;
    Ok(StatsOutcome {
        stats: crate::delegate::stats(store, &ledgers, since)?,
        people: None,
        errors,
    })
}

/// [`stats`] with one row per person (`stats --people`): each person `people.toml` defines,
/// and everyone a person's entry names. `since` limits what they did, not what is theirs now.
pub fn stats_people<S: Store>(store: &S, since: Option<i64>) -> Result<StatsOutcome, ClarifyError> {
    let (ledgers, errors) = read_all(store)?;
    let defined = store
        .load_config()?
        .people
        .map(|p| p.people.names())
        .unwrap_or_default();
    Ok(StatsOutcome {
        stats: crate::delegate::stats(store, &ledgers, since)?,
        people: Some(people_stats(&ledgers, &defined, since)),
        errors,
    })
}

/// What `verify` found.
#[derive(Clone, Debug)]
pub struct VerifyOutcome {
    pub files: usize,
    pub problems: Vec<Problem>,
    /// What `agentx migrate` would upgrade (records written by another tool), never a failure.
    pub warnings: Vec<Problem>,
}

impl VerifyOutcome {
    /// The failure `verify` turns its problems into (exit 8), if there are any:
    /// `SIGNATURE_INVALID` when any problem is a signature's, else `LEDGER_INCONSISTENT`.
    pub fn error(&self) -> Option<ClarifyError> {
        let message = format!(
            "verify found {} problem(s) in {} ledger file(s)",
            self.problems.len(),
            self.files
        );
        failure_code(&self.problems).map(|code| match code {
            ErrorCode::SignatureInvalid => ClarifyError::SignatureInvalid { message },
            _ => ClarifyError::LedgerInconsistent { message },
        })
    }

    pub fn to_json(&self) -> Value {
        match self.error() {
            None => json!({"ok": true, "problems": [], "warnings": self.warnings}),
            Some(e) => json!({"ok": false, "error": error_value(&e), "problems": self.problems,
                "warnings": self.warnings}),
        }
    }
}

/// Every problem in every ledger (docs/protocol.md §7): the bytes are verified, so a file that does not
/// parse is a problem, not a failure. Delegation ledgers are checked too (docs/protocol.md §18).
/// Signatures are checked against the workspace's public keys (docs/protocol.md §16; a replaced `.pub`
/// makes what its old key signed fail), and with `[audit] require_signatures` every unsigned
/// entry is a problem too.
pub fn verify<S: Store>(store: &S) -> Result<VerifyOutcome, ClarifyError> {
    let require = store.load_config()?.audit.require_signatures;
    let keys = crate::store::keys::public_keys(store)?;
    let raw = store.raw_ledgers()?;
    let (delegation_files, delegation_problems) = crate::delegate::verify(store)?;
    let files = raw.len() + delegation_files;
    let mut found = Verification::default();
    for (name, bytes) in raw {
        match bytes {
            Ok(bytes) => found.extend(check_file_with(&name, &bytes, &keys, require)),
            Err(e) => found.problems.push(Problem {
                file: name,
                id: None,
                message: e.to_string(),
                code: None,
            }),
        }
    }
    found.problems.extend(delegation_problems);
    Ok(VerifyOutcome {
        files,
        problems: found.problems,
        warnings: found.warnings,
    })
}

/// `agentx ready`: the monitor, then one entry per issue with a ledger.
#[derive(Clone, Debug)]
pub struct ReadyOutcome {
    pub issues: Vec<ReadyIssue>,
    pub monitor: MonitorRun,
}

impl ReadyOutcome {
    /// `errors` repeats the monitor's: what `ready` could not read (a corrupt ledger's issue
    /// is missing from `issues`) is said where `list` and `stats` say it.
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "issues": self.issues, "monitor": self.monitor.report,
            "errors": self.monitor.report.errors})
    }
}

/// `include_escalated`: see `listing::ready`.
pub fn ready<S: Store>(
    store: &S,
    now: i64,
    include_escalated: bool,
) -> Result<ReadyOutcome, ClarifyError> {
    let config = store.load_config()?;
    let (monitor, ledgers) = run_monitor_keeping_ledgers(store, &config, now)?;
    Ok(ReadyOutcome {
        issues: listing::ready(&ledgers, include_escalated),
        monitor,
    })
}

/// The ready queue as the ledgers stand, without the monitor (`ready` with `monitor: false`):
/// nothing is written and nothing locked, so views may ask as often as the store's change feed
/// says something changed. What could not be read is in `errors`, as `list` says it.
pub fn ready_view<S: Store>(store: &S, include_escalated: bool) -> Result<Value, ClarifyError> {
    let (ledgers, errors) = read_all(store)?;
    Ok(json!({"ok": true, "issues": listing::ready(&ledgers, include_escalated), "errors": errors}))
}

/// The scope preview of a request on `issue` (whose ledger may record its workflow).
pub fn scope_preview<S: Store>(
    store: &S,
    question: &Question,
    issue: Option<u32>,
) -> Result<Preview, ClarifyError> {
    let config = store.load_config()?;
    let workflows = store.load_workflows()?;
    let ledger = match issue {
        Some(n) => store.read_ledger(n)?,
        None => None,
    };
    let ask = question.ask(ledger.as_ref().and_then(|l| l.workflow.as_deref()));
    Ok(agentx_clarify_core::scope::preview(
        &ask, &config, &workflows,
    ))
}

/// The next instant at which time alone makes the monitor act (`monitor::wakeup`).
pub use crate::monitor::wakeup::next_wakeup;

/// The wait-for graph of one issue, or of every issue with a ledger.
pub fn wait_for_graphs<S: Store>(
    store: &S,
    issue: Option<u32>,
) -> Result<Vec<WaitForGraph>, ClarifyError> {
    let config = store.load_config()?;
    let ledgers = match issue {
        Some(n) => store.read_ledger(n)?.into_iter().collect(),
        None => read_all(store)?.0,
    };
    Ok(ledgers.iter().map(|l| wait_for_graph(l, &config)).collect())
}

#[cfg(test)]
mod tests {
    use crate::json::call;
    use crate::mem::MemStore;
    use crate::store::Store;
    use serde_json::json;

    #[test]
    fn ready_without_the_monitor_writes_nothing_and_lists_the_same_issues() {
        let store = MemStore::new();
        store.init().unwrap();
        let t0 = 1_795_341_600_000;
        let asked = call(
            &store,
            "ask",
            &json!({"issueNumber": 2, "from": "engineer", "to": "architect", "topic": "Cache",
                "question": "Redis?"}),
            t0,
        );
        assert_eq!(asked["ok"], true, "{asked}");
        // Long after: the monitor would mark the record stale (a write).
        let later = t0 + 30 * 24 * 3_600_000;
        let before = store.files();
        let view = call(&store, "ready", &json!({"monitor": false}), later);
        assert_eq!(view["ok"], true, "{view}");
        assert_eq!(store.files(), before, "the view wrote");
        assert_eq!(view["issues"][0]["issueNumber"], 2);
        assert_eq!(view["errors"], json!([]));
        assert!(view.get("monitor").is_none());
        let full = call(&store, "ready", &json!({}), later);
        assert_eq!(full["issues"], view["issues"]);
        assert_ne!(store.files(), before, "the monitor did not run");
    }
}
