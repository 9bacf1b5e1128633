//! `agentx clarify answer|follow-up|resolve|escalate|abandon|reopen`: the actions on a record.
//! Each command's flags fill the operation's input struct every surface decodes
//! (`agentx_clarify_core::call::store`), and the struct gives the action, so the CLI checks
//! the fields as every other surface does.

use agentx_clarify_command as commands;
use agentx_clarify_core::call::store::{Answer, Close, FollowUp, Resolve};
use agentx_clarify_core::ops::{Action, Attribution};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;
use serde_json::Value;

use crate::exit::Outcome;
use crate::print;

#[derive(Args, Debug)]
pub struct ResolveArgs {
    #[command(flatten)]
    pub close: CloseArgs,
    /// The decision as a typed value (docs/protocol.md §22): yes/no, an option value; repeat for
    /// multi_choice
    #[arg(long = "value", value_name = "V")]
    pub value: Vec<String>,
    /// Resolved records whose decisions this one replaces (comma-separated, at most 10):
    /// search and related show them superseded
    #[arg(long, value_name = "ID,…", value_delimiter = ',')]
    pub supersedes: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CloseArgs {
    pub id: String,
    #[arg(long)]
    pub from: Option<String>,
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// The person deciding, as .agentx/people.toml names them: a record assigned to people is
    /// theirs to decide (docs/protocol.md §37)
    #[arg(long = "as", value_name = "PERSON")]
    pub as_person: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReopenArgs {
    pub id: String,
    /// Only `human` may reopen (the default)
    #[arg(long)]
    pub from: Option<String>,
    /// Why it goes back, kept in the thread
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// Then route it to its target's runner again and print the outcome
    #[arg(long)]
    pub route: bool,
    /// The person sending it back, as .agentx/people.toml names them (docs/protocol.md §37)
    #[arg(long = "as", value_name = "PERSON")]
    pub as_person: Option<String>,
}

/// The person `--as` names: their entry is `human` with `by` and `via: "local"` (a person
/// who named themselves, on a door that signs nobody in: docs/protocol.md §37), as a
/// person's through a server is (docs/protocol.md §23).
pub fn person(name: Option<&str>) -> Option<Attribution> {
    name.map(|by| Attribution {
        by: by.to_owned(),
        via: String::from(commands::claim::LOCAL_VIA),
        reference: None,
    })
}

/// Runs `action` on record `id`, by the person `--as` named when it did.
pub fn run(
    ws: &Workspace,
    now: i64,
    json: bool,
    id: &str,
    action: &Action,
    by: Option<&Attribution>,
) -> Outcome {
    print::mutation(json, &commands::act_as(ws, now, id, action, by)?)
}

/// `resolve … [--supersedes ID,…]`.
pub fn resolve_run(
    ws: &Workspace,
    now: i64,
    json: bool,
    id: &str,
    action: &Action,
    supersedes: &[String],
    by: Option<&Attribution>,
) -> Outcome {
    if supersedes.is_empty() {
        return run(ws, now, json, id, action, by);
    }
    let done = commands::search::resolve_superseding(ws, now, id, action, by, supersedes)?;
    print::mutation(json, &done)
}

/// `answer ID --from B [--body TEXT] [--value V]…`: `--value` words are read by the record's
/// answer kind (yes/no, one option, several), so the record is read first.
pub fn answer(
    ws: &Workspace,
    id: String,
    from: String,
    body: Option<String>,
    values: &[String],
) -> Result<Answer, ClarifyError> {
    if values.is_empty() && body.is_none() {
        return Err(ClarifyError::input(
            "an answer needs --body or --value (or both)",
        ));
    }
    let value = typed_value(ws, &id, values)?;
    Ok(Answer {
        id,
        from,
        body,
        value,
    })
}

/// `follow-up ID --from A --question TEXT`.
pub fn follow_up(id: String, from: String, question: String) -> FollowUp {
    FollowUp { id, from, question }
}

/// `resolve ID [--from A] [-m TEXT] [--value V]…`.
pub fn resolve(ws: &Workspace, a: ResolveArgs) -> Result<Resolve, ClarifyError> {
    let value = typed_value(ws, &a.close.id, &a.value)?;
    let supersedes = (!a.supersedes.is_empty()).then_some(a.supersedes);
    let Close { id, from, message } = close(a.close);
    Ok(Resolve {
        id,
        from,
        message,
        value,
        supersedes,
    })
}

/// `escalate` and `abandon`: `ID [--from A] [-m TEXT]`.
pub fn close(c: CloseArgs) -> Close {
    Close {
        id: c.id,
        from: c.from,
        message: c.message,
    }
}

/// The typed value `--value` words give for record `id` (none without any).
pub(super) fn typed_value(
    ws: &Workspace,
    id: &str,
    texts: &[String],
) -> Result<Option<Value>, ClarifyError> {
    if texts.is_empty() {
        return Ok(None);
    }
    let (_, record) = commands::show_id(ws, id)?;
    record.answer.value_from_texts(texts).map(Some)
}

/// `reopen ID [--from human] [-m TEXT]` without `--route`.
pub fn reopen(ws: &Workspace, now: i64, json: bool, a: &ReopenArgs) -> Outcome {
    print::mutation(
        json,
        &commands::reopen::reopen_by(
            ws,
            now,
            &a.id,
            a.from.as_deref(),
            a.message.as_deref(),
            person(a.as_person.as_deref()).as_ref(),
        )?,
    )
}
