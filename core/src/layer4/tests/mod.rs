//! Tests of Layer 4: records' new fields, plans, `check`, `gate` and `audit`.

mod audit;
mod check;
mod gate;
mod plan;
mod records;

use serde_json::{json, Value};

use super::*;
use crate::config::Config;
use crate::ledger::Ledger;
use crate::signing::Signers;
use crate::testkit::T0;
use crate::workflow::Workflows;

const SESSION: &str = "5f0c6f9e-2d1b-4c8a-9e3f-7a6b5c4d3e2f";
const NEW_SESSION: &str = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

/// Seed 001's example, with a second (WARN) gap and a third one for the product manager.
fn plan_value() -> Value {
    json!({
        "$schema": "https://workswithagents.dev/specs/clarification-protocol.json",
        "protocol_version": "1.0.0",
        "session_id": SESSION,
        "agent_id": "wwa-scaffold-v1.0.0",
        "status": "needs_clarification",
        "gaps": [
            {"id": "gap-001", "field": "compliance.jurisdiction", "severity": "BLOCK",
             "question": "JSP 440 (UK MOD) selected but deployment target is USWDS (USA). Which jurisdiction applies?",
             "context": "Compliance overlap: JSP 440 ↔ NATO STANAG.",
             "suggestions": ["jsp-440-only", "uswds-only", "both-with-nato-stanag"],
             "blocked_operations": ["planner", "developer", "build"]},
            {"id": "gap-002", "field": "i18n.layout", "severity": "WARN",
             "question": "ar-sa selected but no RTL layout specified: add one?"},
            {"id": "gap-003", "field": "output.directory", "severity": "BLOCK",
             "question": "Real build requested but no output directory set: where?",
             "to": "product-manager"}
        ],
        "accepted_gaps": 0,
        "signature": "ed25519:…"
    })
}

fn plan() -> Plan {
    Plan::parse(&plan_value()).unwrap()
}

fn args() -> CheckArgs {
    CheckArgs {
        issue_number: 42,
        from: "engineer".into(),
        to: Some("architect".into()),
        workflow: None,
        step: None,
        new_session_id: NEW_SESSION.into(),
    }
}

/// `check` with the default settings and workflows.
fn checked(
    ledger: Option<&Ledger>,
    plan: &Plan,
    args: &CheckArgs,
    config: &Config,
    now: i64,
    signers: &Signers,
) -> Result<Checked, crate::ClarifyError> {
    check(
        ledger,
        plan,
        args,
        config,
        &Workflows::defaults(),
        now,
        signers,
    )
}

fn run_check(ledger: Option<&Ledger>, plan: &Plan, now: i64) -> Checked {
    checked(
        ledger,
        plan,
        &args(),
        &Config::default(),
        now,
        &Signers::default(),
    )
    .unwrap()
}

fn check_err(ledger: Option<&Ledger>, plan: &Plan, args: &CheckArgs) -> crate::ClarifyError {
    checked(
        ledger,
        plan,
        args,
        &Config::default(),
        T0,
        &Signers::default(),
    )
    .unwrap_err()
}
