//! `agentx clarify claim|handoff` (docs/protocol.md §37): a person takes an escalated
//! record ("alice is on it"), or hands it — or every record they hold — to another.

use agentx_clarify_command as commands;
use agentx_clarify_core::people::Taking;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;

use crate::exit::Outcome;
use crate::print;

#[derive(Args, Debug)]
pub struct ClaimArgs {
    pub id: String,
    /// Who takes it, as .agentx/people.toml names them
    #[arg(long = "as", value_name = "PERSON")]
    pub as_person: Option<String>,
    /// A note kept in the thread (default "<person> is on it")
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Args, Debug)]
pub struct HandoffArgs {
    /// The record to hand over (or --all)
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Who takes it over
    #[arg(long, value_name = "PERSON")]
    pub to: String,
    /// Who hands it over (its holder, or one of its deciders)
    #[arg(long = "as", visible_alias = "from", value_name = "PERSON")]
    pub as_person: Option<String>,
    /// Every escalated record --as holds (the end of a shift)
    #[arg(long)]
    pub all: bool,
    /// A note kept in the thread, for whoever takes it over
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    pub id: String,
    /// Who approves, as .agentx/people.toml names them (one of the record's deciders)
    #[arg(long = "as", value_name = "PERSON")]
    pub as_person: Option<String>,
    /// The decision (or a note beside --value); without either, approve the first decision
    /// proposed, as written
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// The decision as a typed value (yes/no, an option value; repeat for multi_choice)
    #[arg(long = "value", value_name = "V")]
    pub value: Vec<String>,
}

/// `approve ID --as PERSON [-m TEXT] [--value V]…`.
pub fn approve(ws: &Workspace, now: i64, json: bool, a: &ApproveArgs) -> Outcome {
    let by = commands::claim::person(None, a.as_person.as_deref(), commands::claim::LOCAL_VIA)?;
    let value = super::act::typed_value(ws, &a.id, &a.value)?;
    let m = commands::claim::approve_by(ws, now, &a.id, &by, a.message.as_deref(), value.as_ref())?;
    // The thread's last lines say where the approvals stand and who is next.
    print::mutation(json, &m)
}

/// `claim ID --as PERSON [-m TEXT]`.
pub fn claim(ws: &Workspace, now: i64, json: bool, a: &ClaimArgs) -> Outcome {
    let by = commands::claim::person(None, a.as_person.as_deref(), commands::claim::LOCAL_VIA)?;
    let m = commands::claim::take_by(ws, now, &a.id, &by, Taking::Claim, a.message.as_deref())?;
    if m.idempotent && !json {
        print::text(&format!(
            "{} already holds {}: nothing written",
            by.by, a.id
        ));
        return Ok(0);
    }
    print::mutation(json, &m)
}

/// `handoff ID --as PERSON --to PERSON [-m TEXT]`, or `handoff --all --from PERSON --to PERSON`.
pub fn handoff(ws: &Workspace, now: i64, json: bool, a: &HandoffArgs) -> Outcome {
    let by = commands::claim::person(None, a.as_person.as_deref(), commands::claim::LOCAL_VIA)?;
    let message = a.message.as_deref();
    if let Some(id) = a.id.as_deref().filter(|_| !a.all) {
        let taking = Taking::Handoff { to: &a.to };
        return print::mutation(
            json,
            &commands::claim::take_by(ws, now, id, &by, taking, message)?,
        );
    }
    let done = commands::claim::handoff_all(ws, now, &by, &a.to, message)?;
    print::warnings(&done.warnings);
    print::or(json, &done.to_json(), || match done.ids.len() {
        0 => format!("{} holds no escalated record: nothing handed over", by.by),
        n => format!(
            "handed {n} record{} to {}: {}",
            if n == 1 { "" } else { "s" },
            done.to,
            done.ids.join(", ")
        ),
    })
}
