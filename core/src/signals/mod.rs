//! Subagent signals (seed 002, docs/protocol.md §17): signal blocks in agent output, JSON in mixed output,
//! the decisions of `signals ingest`, and the texts that resume an agent.
//!
//! # API
//!
//! Parsing (never fails; every problem carries its 1-based line):
//! - [`parse`]`(text) -> `[`Parsed`]` { blocks, problems }` — every `[NAME]`…`[/NAME]` block
//!   anywhere in `text` (also inside markdown fences), NAME one of `CLARIFICATION_NEEDED`,
//!   `STOP_WORK`, `DELEGATE_WORK`, `COMPLETION_REPORT`. A [`Block`] keeps its name, start and
//!   end lines, exact source text (for the idempotency key), fields in source order (unknown
//!   keys included) and its syntax problems. `Parsed::problems` holds closing tags that close
//!   nothing. Malformed, unterminated and nested blocks are blocks with problems; they are
//!   never acted on.
//! - [`Block::signal`]`() -> Result<`[`Signal`]`, Vec<`[`Problem`]`>>`, or one kind at a time:
//!   [`Block::clarification_needed`], [`Block::stop_work`], [`Block::delegate_work`],
//!   [`Block::completion_report`] — the typed views with seed 002's fields and a problem per
//!   missing or bad field (syntax problems included).
//!
//! JSON in mixed output: [`extract_json`]`(text) -> Option<Value>` (and [`extract`], which also
//! says which strategy found it and where): plain JSON, else the last ```` ```json ```` fence,
//! else a JSON object or array after tool chatter.
//!
//! Ingest (pure decisions; the command layer does only I/O):
//! - [`block_key`]`(issue, agent, block_text)` — the idempotency key;
//! - [`plan`]`(&Parsed, &Context, &Existing, &Config, &Workflows, &Manifests) -> Result<Plan>`
//!   — per block, what to do (or why not);
//! - [`execute`]`(&Plan, &Existing, &Config, &Workflows, &Manifests, now) -> Executed` — runs
//!   the plan through the guards and writes of `ops::request_owned`, `ops::request_escalated`,
//!   `delegation::request` and `delegation::act` (the same code, each ledger moved in rather
//!   than copied per block): the ledgers to write (`None`: unchanged) and what each block did;
//! - [`ingest`] — both in one call, what the command layer runs under the ledgers' locks.
//!
//! Routing's outcome of a runner's answer: `parse(answer).first(BlockName::ClarificationNeeded)`
//! (asked back, then [`Block::clarification_needed`] for the questions and `to`), else
//! `first(BlockName::StopWork)` (stopped, [`Block::stop_work`] for `blocker_type`/`details`).
//!
//! Resume texts: [`resume_record`]`(issue, &Record)` (`CLARIFICATION RESPONSE`, or `BLOCKER
//! RESOLVED` for a resolved `[STOP_WORK]` record) and [`resume_delegation`]`(issue,
//! &Delegation)` (`DELEGATION APPROVED` / `REJECTED` / `FAILED`): a [`Resume`] with the
//! structured parts (`--json`) and `text()`.

/// The most signal blocks one `signals ingest` input may hold (docs/protocol.md §31): the work of an
/// ingest grows with its blocks, and no agent's output of one run holds a thousand.
pub const MAX_INGEST_BLOCKS: usize = 1000;

mod extract;
mod ingest;
mod parse;
mod resume;
mod signal;

pub use extract::{extract, extract_json, Extracted, Strategy};
pub use ingest::{
    block_key, execute, ingest, plan, BlockOutcome, BlockPlan, Context, Executed, Existing, Plan,
    Rules, Step,
};
pub use parse::{
    parse, Block, BlockName, Field, FieldValue, Parsed, Problem, MAX_PROBLEMS_PER_BLOCK,
};
pub use resume::{resume_delegation, resume_record, Line, Resume, ResumeKind, Round};
pub use signal::{
    ClarificationNeeded, CompletionReport, DelegateWork, Independence, ReportStatus, Signal,
    StopWork,
};

#[cfg(test)]
mod tests;
