//! `signals ingest` as pure decisions (docs/protocol.md §17): [`plan`] says what each block of one output
//! does, [`execute`] does it through the ordinary operations on in-memory ledgers, and the
//! command layer only reads and writes (under the ledgers' locks: read, [`ingest`], write).
//!
//! Per block:
//! - malformed or invalid → nothing, its problems reported;
//! - already ingested (its key is on a record, a delegation, a delegation entry or a report
//!   of the issue), or repeating an earlier block of the same output → skipped;
//! - `[CLARIFICATION_NEEDED]` → a request from the agent to the block's `to`, else to the
//!   parent (scope-checked; topic `blocked_at` or the first question; the question lists the
//!   questions). No target at all, or a target scope refuses → a record created already
//!   escalated to a human;
//! - `[STOP_WORK]` → a record to the parent (or `human`) escalated at once, reason `stop work:
//!   <blocker_type>`, the block's state kept on the record (`signal`);
//! - `[DELEGATE_WORK]` → a delegation to the block's `to`, else the agent whose manifest
//!   offers the capability best, else the parent;
//! - `[COMPLETION_REPORT]` → completes (or, `status: failed`, fails) the agent's oldest open
//!   delegation on the issue; with none open it is kept as a report.
//!
//! A block's `agent_id` is never trusted: everything is attributed to the ingesting agent,
//! and a different `agent_id` is reported as a warning.

mod execute;
mod plan;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use execute::{execute, BlockOutcome, Executed};
pub use plan::{plan, BlockPlan, Plan, Step};

use crate::config::Config;
use crate::delegation::{DelegationLedger, Manifests};
use crate::error::ClarifyError;
use crate::ledger::Ledger;
use crate::signing::Signers;
use crate::workflow::Workflows;

use super::parse::Parsed;

/// Who ingests, for which issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    pub issue: u32,
    /// The agent whose output it is (blocks are attributed to it).
    pub agent: String,
    /// Its coordinator: asked when a block names no target.
    pub parent: Option<String>,
}

/// What already exists on the issue: the clarification and delegation ledgers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Existing<'a> {
    pub ledger: Option<&'a Ledger>,
    pub delegations: Option<&'a DelegationLedger>,
}

/// The idempotency key of a block: the lowercase hex SHA-256 of the bytes
/// `agentx-signal-v1 LF <issue in decimal> LF <agent> LF <block text>`. Neither the issue
/// nor a valid agent name holds a line feed, so the layout is unambiguous; the block text is
/// [`super::Block::text`] (line ends normalised to LF, so CRLF and LF captures of the same
/// output have the same key).
pub fn block_key(issue: u32, agent: &str, block_text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"agentx-signal-v1\n");
    hasher.update(issue.to_string().as_bytes());
    hasher.update(b"\n");
    hasher.update(agent.as_bytes());
    hasher.update(b"\n");
    hasher.update(block_text.as_bytes());
    crate::digest::sha256_hex_of(hasher)
}

/// The settings an ingest decides by: the config, the workflows and the agents' manifests.
#[derive(Clone, Copy)]
pub struct Rules<'a> {
    pub config: &'a Config,
    pub workflows: &'a Workflows,
    pub manifests: &'a Manifests,
}

/// [`plan`] then [`execute`]: what the command layer calls under the ledgers' locks.
pub fn ingest(
    parsed: &Parsed,
    ctx: &Context,
    existing: &Existing<'_>,
    rules: Rules<'_>,
    now: i64,
    signers: &Signers,
) -> Result<Executed, ClarifyError> {
    let Rules {
        config,
        workflows,
        manifests,
    } = rules;
    let plan = plan(parsed, ctx, existing, config, workflows, manifests)?;
    Ok(execute(
        &plan, existing, config, workflows, manifests, now, signers,
    ))
}

#[cfg(test)]
mod tests;
