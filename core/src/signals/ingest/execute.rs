//! Runs a [`Plan`] through the ordinary operations on in-memory copies of the ledgers. Each
//! block either applies whole or not at all; a refusal leaves the ledgers as they were.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Map;

use super::plan::{BlockPlan, Plan, Step};
use super::Existing;
use crate::config::Config;
use crate::delegation::{self, DelegationLedger, Manifests, Report};
use crate::error::ClarifyError;
use crate::events::Event;
use crate::ledger::Ledger;
use crate::ops::{self, check_now};
use crate::signals::parse::{BlockName, Problem};
use crate::signals::signal::CompletionReport;
use crate::signing::Signers;
use crate::time::Timestamp;
use crate::workflow::Workflows;

/// What one block did.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockOutcome {
    pub block: BlockName,
    pub start_line: usize,
    pub end_line: Option<usize>,
    pub key: Option<String>,
    /// The planned action ([`Step::action`]).
    pub action: &'static str,
    /// `created` (a new record, delegation or report), `applied` (an existing delegation
    /// closed), `skipped`, `invalid` or `refused`.
    pub outcome: &'static str,
    /// The record (`CLR-…`) or delegation (`DLG-…`) concerned.
    pub id: Option<String>,
    /// Its status afterwards.
    pub status: Option<String>,
    pub reason: Option<String>,
    pub problems: Vec<Problem>,
    pub error: Option<ClarifyError>,
    pub warnings: Vec<String>,
}

/// The result of executing a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    pub plan: Plan,
    /// The clarification ledger to write, when a block changed it.
    pub ledger: Option<Ledger>,
    /// The delegation ledger to write, when a block changed it.
    pub delegations: Option<DelegationLedger>,
    pub blocks: Vec<BlockOutcome>,
    pub events: Vec<Event>,
    pub delegation_events: Vec<delegation::Event>,
}

/// The ledgers being written and what was done to them.
struct Work {
    ledger: Option<Ledger>,
    dl: Option<DelegationLedger>,
    ledger_changed: bool,
    dl_changed: bool,
    events: Vec<Event>,
    delegation_events: Vec<delegation::Event>,
}

impl Work {
    fn clarified(&mut self, a: ops::Applied, out: &mut BlockOutcome) {
        out.status = a
            .ledger
            .find(&a.id)
            .map(|r| r.current_status().as_str().to_owned());
        out.id = Some(a.id);
        if a.idempotent {
            out.outcome = "skipped";
        } else {
            // A re-ask answered from the record that holds the question (docs/protocol.md §22).
            if a.reused {
                out.outcome = "reused";
            }
            self.ledger_changed = true;
            self.events.extend(a.events);
        }
        self.ledger = Some(a.ledger);
    }

    fn delegated(&mut self, a: delegation::Applied, out: &mut BlockOutcome) {
        out.status = Some(a.status.as_str().to_owned());
        out.id = Some(a.id);
        if a.idempotent {
            out.outcome = "skipped";
        } else {
            self.dl_changed = true;
            self.delegation_events.extend(a.events);
        }
        self.dl = Some(a.ledger);
    }

    /// Closes the agent's open delegation `id`; on a refusal the ledger stays as it was.
    fn close(
        &mut self,
        id: &str,
        action: &delegation::Action,
        config: &Config,
        now: i64,
        out: &mut BlockOutcome,
    ) -> Result<(), ClarifyError> {
        let Some(current) = self.dl.take() else {
            return Err(ClarifyError::NotFound { id: id.to_owned() });
        };
        match delegation::decide_act(&current, id, action, config, now) {
            Ok(index) => {
                out.outcome = "applied";
                let a = delegation::apply_act(current, index, action, now);
                self.delegated(a, out);
                Ok(())
            }
            Err(e) => {
                self.dl = Some(current);
                Err(e)
            }
        }
    }

    /// Keeps a completion report that closes no delegation (a delegation ledger is started
    /// for it when the issue has none).
    fn report(&mut self, issue: u32, agent: &str, report: &CompletionReport, key: &str, now: i64) {
        let target = self.dl.get_or_insert_with(|| DelegationLedger::new(issue));
        target.reports.push(Report {
            agent: agent.to_owned(),
            status: report.status.as_str().to_owned(),
            deliverables: report.deliverables.clone(),
            metrics_achieved: report.metrics_achieved.clone(),
            recommendations: report.recommendations.clone(),
            timestamp: Timestamp::from_ms(now),
            signal_key: Some(key.to_owned()),
            extra: Map::new(),
        });
        self.dl_changed = true;
    }
}

impl BlockOutcome {
    /// A block's outcome before it runs: `created` unless the step says otherwise.
    fn planned(bp: &BlockPlan) -> Self {
        BlockOutcome {
            block: bp.block,
            start_line: bp.start_line,
            end_line: bp.end_line,
            key: bp.key.clone(),
            action: bp.step.action(),
            outcome: "created",
            id: None,
            status: None,
            reason: None,
            problems: Vec::new(),
            error: None,
            warnings: bp.warnings.clone(),
        }
    }
}

/// Executes `plan` against `existing` at `now`. A `now` out of range refuses every block that
/// would write. Clarification entries are signed when `signers` holds the author's key (the
/// escalation of a record created escalated: the hub key).
pub fn execute(
    plan: &Plan,
    existing: &Existing<'_>,
    config: &Config,
    workflows: &Workflows,
    manifests: &Manifests,
    now: i64,
    signers: &Signers,
) -> Executed {
    let mut w = Work {
        ledger: existing.ledger.cloned(),
        dl: existing.delegations.cloned(),
        ledger_changed: false,
        dl_changed: false,
        events: Vec::new(),
        delegation_events: Vec::new(),
    };
    let issue = plan.context.issue;
    let mut blocks = Vec::with_capacity(plan.blocks.len());
    for bp in &plan.blocks {
        let mut out = BlockOutcome::planned(bp);
        let writes = !matches!(bp.step, Step::Invalid { .. } | Step::Skip { .. });
        // Each operation decides on the ledger as it is, then the ledger is moved into it:
        // one copy per output, not one per block.
        let result: Result<(), ClarifyError> = match &bp.step {
            _ if writes && check_now(now).is_err() => check_now(now),
            Step::Invalid { problems } => {
                out.outcome = "invalid";
                out.problems.clone_from(problems);
                Ok(())
            }
            Step::Refused { error } => Err(error.clone()),
            Step::Skip { id, reason } => {
                out.outcome = "skipped";
                out.id.clone_from(id);
                out.reason = Some(reason.clone());
                Ok(())
            }
            Step::Request { request } => {
                ops::decide_request(w.ledger.as_ref(), request, config, workflows, now).map(|o| {
                    let a = ops::open(w.ledger.take(), o, request, now, signers);
                    w.clarified(a, &mut out);
                })
            }
            Step::Escalate { request, reason } => {
                ops::decide_escalated(w.ledger.as_ref(), request, reason, config, now).map(|o| {
                    out.reason = Some(reason.clone());
                    let a = ops::open(w.ledger.take(), o, request, now, signers);
                    w.clarified(a, &mut out);
                })
            }
            Step::Delegate { request } => {
                delegation::decide_request(w.dl.as_ref(), request, manifests, config, now).map(
                    |o| {
                        let a = delegation::open_delegation(w.dl.take(), o, request, now);
                        w.delegated(a, &mut out);
                    },
                )
            }
            Step::Close { id, action } => w.close(id, action, config, now, &mut out),
            Step::Report { report, key } => {
                w.report(issue, &plan.context.agent, report, key, now);
                out.status = Some(report.status.as_str().to_owned());
                Ok(())
            }
        };
        if let Err(e) = result {
            out.outcome = "refused";
            out.error = Some(e);
        }
        blocks.push(out);
    }
    // Sealed once for writing (snapshots := folds), as every operation's result is.
    let ledger = w.ledger.filter(|_| w.ledger_changed).map(|mut l| {
        l.seal();
        l
    });
    let delegations = w.dl.filter(|_| w.dl_changed).map(|mut l| {
        l.seal();
        l
    });
    Executed {
        plan: plan.clone(),
        ledger,
        delegations,
        blocks,
        events: w.events,
        delegation_events: w.delegation_events,
    }
}

impl Serialize for BlockOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("block", &self.block)?;
        m.serialize_entry("startLine", &self.start_line)?;
        m.serialize_entry("endLine", &self.end_line)?;
        m.serialize_entry("key", &self.key)?;
        m.serialize_entry("action", self.action)?;
        m.serialize_entry("outcome", self.outcome)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("status", &self.status)?;
        if let Some(r) = &self.reason {
            m.serialize_entry("reason", r)?;
        }
        if !self.problems.is_empty() {
            m.serialize_entry("problems", &self.problems)?;
        }
        if let Some(e) = &self.error {
            m.serialize_entry("error", &crate::envelope::error_value(e))?;
        }
        m.serialize_entry("warnings", &self.warnings)?;
        m.end()
    }
}

/// The `--json` report: what each block did, the events; not the ledgers (those are written).
impl Serialize for Executed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("issueNumber", &self.plan.context.issue)?;
        m.serialize_entry("agent", &self.plan.context.agent)?;
        m.serialize_entry("parent", &self.plan.context.parent)?;
        m.serialize_entry("blocks", &self.blocks)?;
        m.serialize_entry("problems", &self.plan.problems)?;
        m.serialize_entry("events", &self.events)?;
        m.serialize_entry("delegationEvents", &self.delegation_events)?;
        m.end()
    }
}
