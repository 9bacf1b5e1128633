//! Layer 4 commands (docs/protocol.md §16): `clarify check` (a plan's gaps become requests, answered with
//! Layer 4's response), `gate` (may an operation proceed?) and `clarify audit` (the signed
//! ask/answer chain, verified against the workspace's public keys). The core decides; this
//! puts the steps in order.

use agentx_clarify_core::envelope::error_value;
use agentx_clarify_core::error::ErrorCode;
use agentx_clarify_core::layer4::{self, Audit, AuditScope, CheckArgs, CheckResponse, Gate, Plan};
use agentx_clarify_core::names::{check_issue, ClarificationId};
use agentx_clarify_core::{ClarifyError, Event};
use serde_json::{json, Value};

use crate::monitor::{monitor_after_signed, MonitorRun};
use crate::mutation::statuses_after;
use crate::store::keys::{public_keys, signers_for};
use crate::store::Store;
use agentx_clarify_core::envelope::ok;

/// What `clarify check` did.
#[derive(Clone, Debug)]
pub struct CheckOutcome {
    /// Layer 4's response, from the ledger as it stands after the follow-up monitor.
    pub response: CheckResponse,
    /// False when every gap was already asked (nothing written).
    pub changed: bool,
    pub events: Vec<Event>,
    pub monitor: MonitorRun,
    pub warnings: Vec<String>,
}

impl CheckOutcome {
    /// `{"ok": true, …Layer 4's response…, events, idempotent, monitor, warnings}`: a Layer 4
    /// reader finds the response's keys at the top.
    pub fn to_json(&self) -> Value {
        let mut out = ok(serde_json::to_value(&self.response).unwrap_or(Value::Null));
        if let Value::Object(m) = &mut out {
            m.insert("events".into(), json!(self.events));
            m.insert("idempotent".into(), Value::Bool(!self.changed));
            m.insert("monitor".into(), json!(self.monitor.report));
            m.insert("warnings".into(), json!(self.warnings));
        }
        out
    }
}

/// `clarify check`: asks every gap of `plan` (idempotent per session and gap), all or nothing,
/// signed with the keys the workspace holds; then the statuses and the follow-up monitor.
pub fn check<S: Store>(
    store: &S,
    now: i64,
    plan: &Plan,
    args: &CheckArgs,
) -> Result<CheckOutcome, ClarifyError> {
    let config = store.load_config()?;
    let issue = check_issue(args.issue_number)?;
    store.read_statuses()?;
    let signers = signers_for(store, &[&args.from])?;
    let workflows = store.load_workflows()?;
    // A refused plan writes nothing, not even a lock file: decide once before the update.
    let existing = store.read_ledger(issue)?;
    if existing.is_none() {
        layer4::check(None, plan, args, &config, &workflows, now, &signers)?;
    }
    let checked = store.update_ledger(issue, &config, &args.from, |current| {
        let c = layer4::check(
            current.as_ref(),
            plan,
            args,
            &config,
            &workflows,
            now,
            &signers,
        )?;
        Ok((c.changed.then(|| c.ledger.clone()), c))
    })?;
    let mut warnings = Vec::new();
    statuses_after(
        store,
        &config,
        &args.from,
        issue,
        &checked.events,
        &mut warnings,
    );
    let monitor = monitor_after_signed(
        store,
        &config,
        now,
        Some(issue),
        Some(&signers),
        &mut warnings,
    );
    // Where the gaps stand now (the monitor may have moved them); the response as decided
    // when the ledger cannot be read back.
    let response = match store.read_ledger(issue) {
        Ok(Some(ledger)) => layer4::response(
            &ledger,
            plan,
            args,
            &checked.response.session_id,
            &checked.response.agent_id,
            now,
        ),
        Ok(None) => checked.response,
        Err(e) => {
            warnings.push(format!(
                "the gaps were written, but reading them back failed: {e}"
            ));
            checked.response
        }
    };
    let mut events = checked.events;
    events.extend(monitor.events.iter().cloned());
    Ok(CheckOutcome {
        response,
        changed: checked.changed,
        events,
        monitor,
        warnings,
    })
}

/// `gate`: the open `BLOCK` gaps of issue `issue` that block `operation`. Reads only.
pub fn gate<S: Store>(
    store: &S,
    issue: u32,
    operation: Option<&str>,
) -> Result<Gate, ClarifyError> {
    let ledger = store.read_ledger(issue)?;
    layer4::gate(issue, ledger.as_ref(), operation)
}

/// `gate --json`: `{"ok": true, issueNumber, operation, open: []}`, or when closed
/// `{"ok": false, "error": GATE_CLOSED, issueNumber, operation, open: [...]}`.
pub fn gate_json(gate: &Gate) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("ok".into(), Value::Bool(!gate.is_closed()));
    if let Some(e) = gate.error() {
        out.insert("error".into(), error_value(&e));
    }
    if let Value::Object(mut m) = json!(gate) {
        out.append(&mut m);
    }
    Value::Object(out)
}

/// What `clarify audit` audits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    Record(String),
    Issue(u32),
}

/// `clarify audit`: the audit record of one record or of an issue, its signatures checked
/// against the workspace's public keys (`[audit] require_signatures`: unsigned entries are
/// problems too).
pub fn audit<S: Store>(store: &S, target: &AuditTarget) -> Result<Audit, ClarifyError> {
    let config = store.load_config()?;
    let keys = public_keys(store)?;
    let require = config.audit.require_signatures;
    match target {
        AuditTarget::Record(id) => {
            let parsed = ClarificationId::parse(id)?;
            let ledger = store
                .read_ledger(parsed.issue)?
                .ok_or_else(|| ClarifyError::NotFound { id: id.clone() })?;
            layer4::audit(&ledger, AuditScope::Record(id), &keys, require)
        }
        AuditTarget::Issue(issue) => {
            let ledger = store
                .read_ledger(*issue)?
                .ok_or(ClarifyError::NoLedger { issue: *issue })?;
            layer4::audit(&ledger, AuditScope::Issue, &keys, require)
        }
    }
}

/// The failure of an audit that did not verify (exit 8): `SIGNATURE_INVALID` when any problem
/// is a signature's, else `LEDGER_INCONSISTENT`.
pub fn audit_error(audit: &Audit) -> Option<ClarifyError> {
    if audit.verified {
        return None;
    }
    let message = format!("the audit found {} problem(s)", audit.problems.len());
    let signature = audit
        .problems
        .iter()
        .any(|p| p.code == ErrorCode::SignatureInvalid.as_str());
    Some(if signature {
        ClarifyError::SignatureInvalid { message }
    } else {
        ClarifyError::LedgerInconsistent { message }
    })
}

/// `clarify audit --json`: `ok` (false with the error when it did not verify), then the audit
/// record's keys.
pub fn audit_json(audit: &Audit) -> Value {
    let mut out = serde_json::Map::new();
    let error = audit_error(audit);
    out.insert("ok".into(), Value::Bool(error.is_none()));
    if let Some(e) = &error {
        out.insert("error".into(), error_value(e));
    }
    if let Value::Object(mut m) = json!(audit) {
        out.append(&mut m);
    }
    Value::Object(out)
}
