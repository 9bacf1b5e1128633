//! `agentx migrate`: one line per change (text), or the command's JSON; ledgers it could not
//! migrate go to stderr too.

use agentx_clarify_command::migrate;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Args;

use crate::print;

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Report what would change without writing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(ws: &Workspace, json: bool, dry_run: bool) -> Result<i32, ClarifyError> {
    let outcome = migrate(ws, dry_run)?;
    print::report_errors(&outcome.errors);
    if json {
        print::json(&outcome.to_json());
        return Ok(0);
    }
    for m in &outcome.migrated {
        for c in &m.changes {
            let id = c.id.as_deref().unwrap_or("-");
            print::text(&format!("{}  {id}  {}", m.file, c.message));
        }
    }
    let verb = if dry_run { "would migrate" } else { "migrated" };
    let mut summary = format!(
        "{verb} {} ledger file(s), {} already current",
        outcome.migrated.len(),
        outcome.unchanged
    );
    if !outcome.errors.is_empty() {
        summary.push_str(&format!(", {} could not be read", outcome.errors.len()));
    }
    if dry_run {
        summary.push_str(" (dry run: nothing written)");
    }
    print::text(&summary);
    Ok(0)
}
