//! `agentx github sync` (and the server's worker): reads the comments of issues with open
//! records since each issue's cursor, and acts on `/resolve` and `/abandon` from people whose
//! permission is in `answer_roles` — through the command layer, as a person (`from: human`,
//! `by: <login>`, `via: github`, `ref: <comment URL>`). Each comment acts at most once: the
//! ledger's `ref` and the handled set of the `github` state document (`.agentx/state/github.json`, or a row of
//! PostgreSQL's `agentx.state_docs`) both say so.

use agentx_clarify_command::State;
use std::collections::HashMap;

use agentx_clarify_command::store::docs;
use agentx_clarify_command::{Files, Scope};
use agentx_clarify_core::github::SyncState;
use agentx_clarify_core::github::{
    decision_input, issues_to_read, login_name, permitted, verdict, Command, Outcome, Verdict,
};
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::{ClarifyError, Ledger};
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde::Serialize;
use serde_json::{json, Value};

use super::client::{Client, GhError};
use super::rest::{Comment, Repo};

/// Each login's permission, asked once per sync: (`role_name`, `permission`).
type Permissions = HashMap<String, Result<(Option<String>, Option<String>), GhError>>;

/// One command a sync acted on or refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncLine {
    pub issue: u32,
    pub comment: String,
    pub login: String,
    /// Why it was refused (absent when acted on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The record and what was done (`resolve CLR-42-001`).
    pub command: String,
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Issues read and comments seen.
    pub issues: usize,
    pub comments: usize,
    pub acted: Vec<SyncLine>,
    pub refused: Vec<SyncLine>,
    /// GitHub's rate limit stopped the sync until then (ms): the rest is read next time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_until: Option<i64>,
    /// Requests that failed otherwise (the sync goes on with the next issue).
    pub errors: Vec<String>,
}

/// Every readable ledger of the workspace, wherever its state is.
fn ledgers(store: &WorkspaceStore) -> Result<Vec<Ledger>, ClarifyError> {
    let read = store.scan(Scope::All, |read| read.ledger.ok())?;
    Ok(read.into_iter().flatten().collect())
}

/// The sync state (the `github` state document): empty before the first sync.
fn read_state(store: &WorkspaceStore) -> Result<SyncState, ClarifyError> {
    docs::read_json(store, docs::GITHUB)
}

/// Read–change–write of the sync state under the store's exclusion.
fn update_state<T>(
    store: &WorkspaceStore,
    me: &str,
    change: impl FnOnce(&mut SyncState) -> T,
) -> Result<T, ClarifyError> {
    let config = store.load_config()?;
    docs::update_json(store, docs::GITHUB, &config, me, change)
}

/// One sync of the workspace `ws` at time `now`.
pub fn sync(ws: &Workspace, now: i64) -> Result<SyncReport, ClarifyError> {
    let store = ws.store()?;
    let store = &*store;
    let Some(config) = store.files.settings().github()? else {
        return Err(ClarifyError::input(
            "GitHub Mode is off: .agentx/config.toml has no [github] table (docs/github.md)",
        ));
    };
    let mut report = SyncReport::default();
    let me = crate::deliverer();
    let state = read_state(store)?;
    if let Some(until) = state.not_before.filter(|t| *t > now) {
        report.waiting_until = Some(until);
        return Ok(report);
    }
    let client = Client::new(config, |v| std::env::var(v).ok())
        .map_err(|e| ClarifyError::input(e.to_string()))?;
    let repo = Repo {
        client: &client,
        config,
        now,
    };
    let all = ledgers(store)?;
    let refs: Vec<&Ledger> = all.iter().collect();
    let issues = issues_to_read(&refs);
    report.issues = issues.len();
    let mut permissions: Permissions = HashMap::new();
    for issue in issues {
        let since = state.cursors.get(&issue).map(|c| a_second_before(c));
        let comments = match repo.comments(issue, since.as_deref()) {
            Ok(c) => c,
            Err(GhError::RateLimited { until }) => {
                wait(store, &me, &mut report, until)?;
                return Ok(report);
            }
            Err(e) => {
                report.errors.push(format!("issue #{issue}: {e}"));
                continue;
            }
        };
        report.comments += comments.len();
        // The cursor moves only past a whole read: GitHub lists by creation, not by update,
        // so a comment that failed may have been updated before one handled after it.
        let newest = comments.iter().map(|c| c.updated_at.clone()).max();
        let mut whole = true;
        for c in comments {
            match one(
                store,
                &repo,
                &me,
                issue,
                &c,
                &mut permissions,
                &mut report,
                now,
            ) {
                Ok(()) => {}
                Err(GhError::RateLimited { until }) => {
                    wait(store, &me, &mut report, until)?;
                    return Ok(report);
                }
                Err(e) => {
                    report.errors.push(format!("{}: {e}", c.url));
                    // Not handled: read again next time (the handled ones are skipped).
                    whole = false;
                    break;
                }
            }
        }
        if let (true, Some(newest)) = (whole, newest) {
            update_state(store, &me, |s| s.advance(issue, &newest))?;
        }
    }
    update_state(store, &me, |s| s.not_before = None)?;
    Ok(report)
}

fn wait(
    store: &WorkspaceStore,
    me: &str,
    report: &mut SyncReport,
    until: i64,
) -> Result<(), ClarifyError> {
    report.waiting_until = Some(until);
    update_state(store, me, |s| s.not_before = Some(until))
}

/// Handles one comment; `Err` stops the issue (the cursor stays before this comment).
#[allow(clippy::too_many_arguments)] // one private step of the loop above
fn one(
    store: &WorkspaceStore,
    repo: &Repo<'_>,
    me: &str,
    issue: u32,
    c: &Comment,
    permissions: &mut Permissions,
    report: &mut SyncReport,
    now: i64,
) -> Result<(), GhError> {
    let key = c.id.to_string();
    // The ledger as it is now: an earlier comment of this sync may have changed it.
    let ledger = {
        store
            .read_ledger(issue)
            .map_err(|e| GhError::Failed(e.to_string()))?
    };
    let state = read_state(store).map_err(|e| GhError::Failed(e.to_string()))?;
    let line = |command: String, reason: Option<String>| SyncLine {
        issue,
        comment: c.url.clone(),
        login: c.login.clone(),
        reason,
        command,
    };
    let record_state = |outcome: Outcome| {
        update_state(store, me, |s| s.handle(&key, issue, outcome, now))
            .map_err(|e| GhError::Failed(e.to_string()))
    };
    match verdict(&state, issue, &key, &c.url, &c.body, ledger.as_ref()) {
        Verdict::Skip => Ok(()),
        Verdict::AlreadyActed => {
            record_state(Outcome::Acted)?;
            repo.react(c.id, "+1")
        }
        Verdict::Refuse(why) => {
            repo.react(c.id, "confused")?;
            record_state(Outcome::Refused)?;
            report.refused.push(line(first_words(&c.body), Some(why)));
            Ok(())
        }
        Verdict::Act(command) => {
            let what = match &command {
                Command::Resolve { id, .. } => format!("resolve {id}"),
                Command::Abandon { id, .. } => format!("abandon {id}"),
            };
            let refuse = |why: String, report: &mut SyncReport| -> Result<(), GhError> {
                repo.react(c.id, "confused")?;
                record_state(Outcome::Refused)?;
                report.refused.push(line(what.clone(), Some(why)));
                Ok(())
            };
            let by = match login_name(&c.login) {
                Ok(n) => n,
                Err(why) => return refuse(why, report),
            };
            let perm = permissions
                .entry(c.login.clone())
                .or_insert_with(|| repo.permission(&c.login))
                .clone()?;
            if !permitted(
                perm.0.as_deref(),
                perm.1.as_deref(),
                &repo.config.answer_roles,
            ) {
                let has = perm.0.or(perm.1).unwrap_or_else(|| "none".into());
                return refuse(
                    format!(
                        "{} has permission '{has}' on {}; answer_roles: {}",
                        c.login,
                        repo.config.full_name(),
                        repo.config.answer_roles.join(", ")
                    ),
                    report,
                );
            }
            let attribution = Attribution {
                by,
                via: agentx_clarify_core::github::VIA.into(),
                reference: Some(c.url.clone()),
            };
            let envelope = act(store, ledger.as_ref(), &command, &attribution, now);
            if envelope.get("ok") == Some(&Value::Bool(true)) {
                record_state(Outcome::Acted)?;
                repo.react(c.id, "+1")?;
                report.acted.push(line(what, None));
                Ok(())
            } else {
                let why = envelope
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("refused by the store")
                    .to_owned();
                let code = envelope
                    .pointer("/error/code")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if matches!(code, "LOCK_TIMEOUT" | "IO_ERROR" | "INTERNAL") {
                    // Not the command's fault: tried again next time.
                    return Err(GhError::Failed(format!("{code}: {why}")));
                }
                // Another sync (the server's, a cron's) may have acted on this very comment
                // meanwhile: then the record moved on because of it, which is no refusal.
                let acted_elsewhere = {
                    store.read_ledger(issue).ok().flatten().is_some_and(|l| {
                        l.clarifications.iter().any(|r| {
                            r.thread.iter().any(|e| {
                                e.extra.get("ref").and_then(Value::as_str) == Some(c.url.as_str())
                            })
                        })
                    })
                };
                if acted_elsewhere {
                    return record_state(Outcome::Acted);
                }
                refuse(format!("{code}: {why}"), report)
            }
        }
    }
}

/// The command through the command layer, as the server's people act.
fn act(
    ws: &WorkspaceStore,
    ledger: Option<&Ledger>,
    command: &Command,
    by: &Attribution,
    now: i64,
) -> Value {
    let (op, input) = match command {
        Command::Resolve { id, decision } => {
            let record = ledger.and_then(|l| l.clarifications.iter().find(|r| &r.id == id));
            let (message, value) = match record {
                Some(r) => decision_input(r, decision),
                None => (decision.clone(), None),
            };
            let mut input = json!({"id": id, "message": message});
            if let Some(v) = value {
                input["value"] = v;
            }
            ("decide", input)
        }
        Command::Abandon { id, reason } => {
            let mut input = json!({"id": id});
            if let Some(r) = reason {
                input["message"] = json!(r);
            }
            ("abandon", input)
        }
    };
    agentx_clarify_command::call_as(ws, op, &input, now, by)
}

/// GitHub's `since` a second before the cursor (`YYYY-MM-DDTHH:MM:SSZ`): GitHub's times are
/// whole seconds, and a comment written in the cursor's second after the last read must not
/// be missed; what is read again is skipped (handled, or not a command).
fn a_second_before(cursor: &str) -> String {
    match agentx_clarify_core::time::parse_instant(cursor) {
        Ok(ms) => {
            let text = agentx_clarify_core::time::Timestamp::from_ms(ms - 1000).to_string();
            format!("{}Z", text.get(..19).unwrap_or(&text))
        }
        Err(_) => cursor.to_owned(),
    }
}

/// The first line of a comment, short, for the sync's output.
fn first_words(body: &str) -> String {
    body.lines().next().unwrap_or("").chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn since_is_a_second_before_the_cursor() {
        assert_eq!(
            super::a_second_before("2026-11-27T12:00:00Z"),
            "2026-11-27T11:59:59Z"
        );
    }
}
