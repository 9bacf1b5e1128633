//! `agentx clarify ask`: its flags — the answer kind flags of docs/protocol.md §22 among them —
//! fill the `ask` operation's input struct every surface decodes
//! (`agentx_clarify_core::call::store::Ask`), and the struct becomes the request, so the CLI
//! checks the fields as every other surface does (ripgrep's flags → typed arguments, no JSON
//! in between).

use agentx_clarify_command as commands;
use agentx_clarify_core::call::store::{Ask, OptionInput};
use agentx_clarify_core::call::{Integer, IssueArg};
use agentx_clarify_core::{ClarifyError, NewRequest};
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;

use super::route;
use crate::exit::Outcome;
use crate::print;

#[derive(Args, Debug)]
pub struct AskArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    #[arg(long)]
    pub from: String,
    #[arg(long)]
    pub to: String,
    #[arg(long)]
    pub topic: String,
    #[arg(long)]
    pub question: String,
    /// Do not block the requester while waiting
    #[arg(long)]
    pub non_blocking: bool,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(long)]
    pub step: Option<String>,
    /// The exact field the gap concerns (e.g. storage.cache)
    #[arg(long)]
    pub field: Option<String>,
    /// An answer the asker would accept (repeatable)
    #[arg(long = "suggest", value_name = "S")]
    pub suggestions: Vec<String>,
    /// Re-sending a request with the same key returns the original record
    #[arg(long, value_name = "K")]
    pub idempotency_key: Option<String>,
    /// BLOCK or WARN (Layer 4); sets blocking. Default: BLOCK, WARN with --non-blocking
    #[arg(long, value_name = "SEVERITY")]
    pub severity: Option<String>,
    /// Why the gap matters: what the asker knows so far
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
    /// An operation the record blocks while open, for `gate` (repeatable; none: every one)
    #[arg(long = "blocks", value_name = "OP")]
    pub blocked_operations: Vec<String>,
    /// The Layer 4 session (a UUID) the gap belongs to
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// The gap's id within its session
    #[arg(long, value_name = "ID")]
    pub gap_id: Option<String>,
    /// Ask back: answer the pending question <ID> (asked of --from by --to) with this one.
    /// Always in scope; takes that question's round limit and SLA
    #[arg(long, value_name = "ID")]
    pub asked_back_from: Option<String>,
    #[command(flatten)]
    pub kinds: KindArgs,
    /// Then run the target's runner in the background (see `clarify route`); the command
    /// returns at once
    /// Take this resolved record's decision instead of waiting for an answer: the new record
    /// is resolved at once, citing it (its id and decision hash, `via: "reuse"`)
    #[arg(long, value_name = "ID", conflicts_with = "route")]
    pub reuse: Option<String>,
    #[arg(long)]
    pub route: bool,
    /// With --route: wait for the outcome (bounded by the runner's timeout) and print it
    #[arg(long, requires = "route")]
    pub wait: bool,
}

#[derive(Args, Debug, Default)]
pub struct KindArgs {
    /// The answer kind: text (default), confirm, choice or multi_choice (also
    /// `--answer-kind`, as MCP and JSON spell it `answerKind`)
    #[arg(long, visible_alias = "answer-kind", value_name = "KIND")]
    pub kind: Option<String>,
    /// An option of a choice kind, `value` or `value=Label` (repeatable, 2–10)
    #[arg(long = "option", value_name = "VALUE[=LABEL]")]
    pub options: Vec<String>,
    /// A longer description of an option, `value=text` (repeatable; the value names an --option)
    #[arg(long = "describe", value_name = "VALUE=TEXT")]
    pub descriptions: Vec<String>,
    /// Choice kinds: accept only the options (no free-text answer)
    #[arg(long)]
    pub no_other: bool,
    /// multi_choice: the fewest options an answer may choose (default 1)
    #[arg(long = "min", value_name = "N")]
    pub min_select: Option<u32>,
    /// multi_choice: the most options an answer may choose (default: all)
    #[arg(long = "max", value_name = "N")]
    pub max_select: Option<u32>,
    /// Ask even when the issue already holds this question (no reuse)
    #[arg(long)]
    pub ask_again: bool,
}

/// `ask` with `--route [--wait]` runs the target's runner (see `route::ask`); else the request
/// is written and printed.
pub fn run(
    ws: &Workspace,
    runner: route::Run<'_>,
    now: i64,
    clock: commands::Clock<'_>,
    fixed_now: Option<i64>,
    json: bool,
    a: &AskArgs,
) -> Outcome {
    let req = request(a)?;
    if a.route {
        return route::ask(ws, runner, clock, fixed_now, json, &req, a.wait);
    }
    let asked = commands::mutation::ask_reusing(ws, now, &req, a.reuse.as_deref())?;
    print::mutation(json, &asked)
}

/// The request the flags ask for. The struct's checks (the issue, `--severity`, `--kind`)
/// come before the `--describe` ones, as they always have.
fn request(a: &AskArgs) -> Result<NewRequest, ClarifyError> {
    let mut ask = input(a);
    let described = describe(
        ask.options.get_or_insert_with(Vec::new),
        &a.kinds.descriptions,
    );
    let req = ask.into_request()?;
    described?;
    Ok(req)
}

/// `ask`'s input from the flags (`--option value=Label` is `{value, label}`).
pub fn input(a: &AskArgs) -> Ask {
    let k = &a.kinds;
    let options = k
        .options
        .iter()
        .map(|o| match o.split_once('=') {
            Some((value, label)) => OptionInput {
                value: value.to_owned(),
                label: Some(label.to_owned()),
                description: None,
            },
            None => OptionInput {
                value: o.clone(),
                ..OptionInput::default()
            },
        })
        .collect();
    Ask {
        issue_number: IssueArg::from(a.issue.as_str()),
        from: a.from.clone(),
        to: a.to.clone(),
        topic: a.topic.clone(),
        question: a.question.clone(),
        blocking: Some(!a.non_blocking),
        workflow: a.workflow.clone(),
        step: a.step.clone(),
        field: a.field.clone(),
        suggestions: Some(a.suggestions.clone()),
        idempotency_key: a.idempotency_key.clone(),
        severity: a.severity.clone(),
        context: a.context.clone(),
        blocked_operations: Some(a.blocked_operations.clone()),
        session_id: a.session_id.clone(),
        gap_id: a.gap_id.clone(),
        asked_back: a.asked_back_from.clone(),
        answer_kind: k.kind.clone(),
        options: Some(options),
        allow_other: k.no_other.then_some(false),
        min_select: k.min_select.map(|n| Integer(i64::from(n))),
        max_select: k.max_select.map(|n| Integer(i64::from(n))),
        ask_again: Some(k.ask_again),
        reuse: a.reuse.clone(),
    }
}

/// `--describe value=text`: the description of the option with that value (the first, when
/// several share it).
fn describe(options: &mut [OptionInput], descriptions: &[String]) -> Result<(), ClarifyError> {
    for d in descriptions {
        let Some((value, text)) = d.split_once('=') else {
            return Err(ClarifyError::input(format!(
                "--describe takes VALUE=TEXT, e.g. --describe 'redis=Shared, needs ops'; found \"{}\"",
                agentx_clarify_core::error::shown(d)
            )));
        };
        let option = options
            .iter_mut()
            .find(|o| o.value == value)
            .ok_or_else(|| {
                ClarifyError::input(format!(
                    "--describe names no --option \"{}\"",
                    agentx_clarify_core::error::shown(value)
                ))
            })?;
        option.description = Some(text.to_owned());
    }
    Ok(())
}
