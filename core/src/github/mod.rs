//! GitHub Mode (docs/github.md, docs/protocol.md §26): every clarification has one comment on
//! its GitHub issue, kept up to date through the outbox, and people with write access decide
//! by commenting `/resolve` or `/abandon`. Pure: which comment says what, which command a
//! comment holds, who may give it, what a sync does with each comment. The shell
//! (`agentx-clarify-notify`'s `github` module) talks to GitHub.

pub mod command;
pub mod comment;
pub mod config;
pub mod plan;
pub mod sync;

pub use command::{decision_input, login_name, parse_command, permitted, Command};
pub use comment::{
    blocked, comment_body, marked, marker, neutralise_mentions, refusal_reply, LABEL, REPLY_MARKER,
};
pub use config::{parse_github, GithubConfig, Via};
pub use plan::{plan, SINK, VIA};
pub use sync::{issues_to_read, verdict, Handled, Outcome, Seen, SyncState, Verdict, EDITED};
