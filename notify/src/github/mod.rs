//! GitHub Mode's shell (docs/github.md): sends each record's comment (an outbox delivery of
//! kind `github`, see [`deliver`]) and reads decisions from the issues' comments ([`sync`]).
//! What each comment says and what a command does is the core's (`agentx_clarify_core::github`).

mod client;
mod rest;
mod state;
mod sync;

pub use client::{Client, GhError, Reply};
pub use rest::{Comment, CommentIds, Repo};
pub use state::SyncDoc;
pub use sync::{sync, SyncLine, SyncReport};

use agentx_clarify_core::github::{blocked, comment_body, GithubConfig};
use agentx_clarify_core::notify::Delivery;
use agentx_clarify_core::Ledger;

use crate::home::Home;

/// Sends record `record`'s comment on its issue as the ledger is now, then the issue's label
/// (`labels = true`). `fresh` reads the issue's ledger again: after an edit the ledger is read
/// once more and the comment sent again if the record moved on meanwhile, so of two deliverers
/// sending different versions at once, the one finishing last leaves the latest (a slow
/// deliverer's stale edit never stays). `ids` remembers the record's comment. Returns what
/// happened to the comment (`created`, `edited`, `unchanged`).
pub fn deliver(
    config: &GithubConfig,
    client: &Client,
    ids: &dyn CommentIds,
    ledger: &Ledger,
    record: &str,
    now: i64,
    fresh: impl Fn() -> Option<Ledger>,
) -> Result<&'static str, GhError> {
    let issue = ledger.issue_number;
    let repo = Repo {
        client,
        config,
        now,
    };
    let me = client.login(now)?;
    let body_of = |l: &Ledger| {
        l.clarifications
            .iter()
            .find(|r| r.id == record)
            .map(|r| comment_body(issue, r, config.mentions))
    };
    let Some(mut body) = body_of(ledger) else {
        return Err(GhError::Failed(format!(
            "{record} is no longer in its ledger"
        )));
    };
    let mut current = ledger.clone();
    let mut done = "unchanged";
    for _ in 0..5 {
        let this = repo.put_comment(issue, record, &body, &me, ids)?;
        if this != "unchanged" {
            done = this;
        }
        match fresh() {
            Some(l) => match body_of(&l) {
                Some(b) if b != body => {
                    body = b;
                    current = l;
                }
                _ => {
                    current = l;
                    break;
                }
            },
            None => break,
        }
    }
    if config.labels {
        repo.set_label(issue, blocked(&current))?;
    }
    Ok(done)
}

/// Sends one comment delivery the outbox holds: the record's comment as its ledger is now
/// (the delivery pass calls it; `client` is made on first use and kept for the pass).
pub fn deliver_owed(
    home: &Home<'_, agentx_clarify_workspace::WorkspaceStore>,
    config: Option<&GithubConfig>,
    client: &mut Option<Client>,
    ledgers: &[Ledger],
    d: &Delivery,
    now: i64,
) -> Result<&'static str, GhError> {
    let Some(config) = config else {
        return Err(GhError::Failed("[github] is no longer configured".into()));
    };
    if client.is_none() {
        *client = Some(Client::new(config, |v| std::env::var(v).ok())?);
    }
    let Some(client) = client.as_ref() else {
        return Err(GhError::Failed("no GitHub client".into()));
    };
    let ledger = ledgers
        .iter()
        .find(|l| l.issue_number == d.issue)
        .ok_or_else(|| GhError::Failed(format!("{} is no longer in its ledger", d.record)))?;
    let me = crate::deliverer();
    let ids = SyncDoc {
        store: home.store(),
        me: &me,
    };
    let fresh = || home.read_ledger(d.issue).ok().flatten();
    deliver(config, client, &ids, ledger, &d.record, now, fresh)
}
