//! `agentx github`: GitHub Mode (docs/github.md, docs/protocol.md §26). `sync` reads the
//! decisions people commented on the issues with open records, acts on them, then sends the
//! comment updates the outbox owes (the same pass as `agentx notify send`).

use std::path::Path;

use agentx_clarify_core::time::Timestamp;
use agentx_clarify_core::ClarifyError;
use clap::Subcommand;
use serde_json::json;

use crate::print;

#[derive(Subcommand, Debug)]
pub enum Github {
    /// Act on `/resolve` and `/abandon` comments of people with write access, then update
    /// the comments on GitHub (for cron when no server runs)
    #[command(
        after_help = "Examples:\n  agentx github sync\n  agentx github sync --json\n  */2 * * * * cd /srv/project && agentx github sync   # crontab\n\nReads the comments of issues with open records since the last sync. A comment whose first\nline is `/resolve CLR-42-001 <decision>` or `/abandon CLR-42-001 [reason]`, by a user whose\npermission on the repository is in [github] answer_roles, is recorded as theirs (by, via\ngithub, ref: the comment's URL) and gets a +1 reaction; a refused one gets `confused` and\none reply saying why, and its reason is printed. Each comment acts once, and only as first\nwritten: a comment edited before it was read is refused."
    )]
    Sync,
}

pub fn run(root: &Path, now: i64, json: bool, cmd: Github) -> Result<i32, ClarifyError> {
    match cmd {
        Github::Sync => sync(root, now, json),
    }
}

fn sync(root: &Path, now: i64, json: bool) -> Result<i32, ClarifyError> {
    let ws = agentx_clarify_a2a::open_workspace(root)?;
    let report = agentx_clarify_notify::github::sync(&ws, now)?;
    // The decisions just taken change the records' comments: send what the outbox owes now.
    let pass = agentx_clarify_notify::pass(&ws, now)?;
    let code = i32::from(!report.errors.is_empty());
    if json {
        print::json(&json!({
            "ok": report.errors.is_empty(),
            "sync": report,
            "delivered": pass.delivered,
            "failed": pass.failed.iter().map(|(k, e)| json!({"id": k, "error": e})).collect::<Vec<_>>(),
        }));
        return Ok(code);
    }
    let mut out = format!(
        "read {} comment(s) on {} issue(s)",
        report.comments, report.issues
    );
    for a in &report.acted {
        out.push_str(&format!(
            "\nacted: {} by {} ({})",
            a.command, a.login, a.comment
        ));
    }
    for r in &report.refused {
        out.push_str(&format!(
            "\nrefused: {} by {} ({}): {}",
            r.command,
            r.login,
            r.comment,
            r.reason.as_deref().unwrap_or("")
        ));
    }
    for n in &report.notes {
        out.push_str(&format!("\nnote: {n}"));
    }
    if let Some(until) = report.waiting_until {
        out.push_str(&format!(
            "\nGitHub's rate limit is spent: the rest is read after {}",
            Timestamp::from_ms(until)
        ));
    }
    for e in &report.errors {
        out.push_str(&format!("\nerror: {e}"));
    }
    out.push_str(&format!(
        "\ncomment updates: {} delivered, {} failed",
        pass.delivered,
        pass.failed.len()
    ));
    for (k, e) in &pass.failed {
        out.push_str(&format!("\n  {k}: {e}"));
    }
    print::text(&out);
    Ok(code)
}
