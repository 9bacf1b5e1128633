//! GitHub Mode's shell (docs/github.md): sends each record's comment (an outbox delivery of
//! kind `github`, see [`deliver`]) and reads decisions from the issues' comments ([`sync`]).
//! What each comment says and what a command does is the core's (`agentx_clarify_core::github`).

mod client;
mod rest;
mod sync;

pub use client::{Client, GhError, Reply};
pub use rest::{Comment, Repo};
pub use sync::{sync, SyncLine, SyncReport};

use agentx_clarify_core::github::{blocked, comment_body, GithubConfig};
use agentx_clarify_core::Ledger;

/// Sends record `record`'s comment on issue `issue` as the ledger is now, then the issue's
/// label (`labels = true`). Returns what happened to the comment (`created`, `edited`,
/// `unchanged`).
pub fn deliver(
    config: &GithubConfig,
    client: &Client,
    ledger: &Ledger,
    record: &str,
    now: i64,
) -> Result<&'static str, GhError> {
    let issue = ledger.issue_number;
    let Some(r) = ledger.clarifications.iter().find(|r| r.id == record) else {
        return Err(GhError::Failed(format!(
            "{record} is no longer in its ledger"
        )));
    };
    let repo = Repo {
        client,
        config,
        now,
    };
    let done = repo.put_comment(issue, record, &comment_body(issue, r))?;
    if config.labels {
        repo.set_label(issue, blocked(ledger))?;
    }
    Ok(done)
}
