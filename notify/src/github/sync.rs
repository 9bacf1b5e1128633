//! `agentx github sync` (and the server's worker): reads the comments of issues with open
//! records since each issue's cursor, and acts on `/resolve` and `/abandon` from people whose
//! permission is in `answer_roles` — through the command layer, as a person (`from: human`,
//! `by: <login>`, `via: github`, `ref: <comment URL>`). Each comment acts at most once: the
//! ledger's `ref` and the handled set of the `github` state document
//! (`.agentx/state/github.json`, or a row of PostgreSQL's `agentx.state_docs`) both say so.
//! Each handled comment is answered once — 👍, or 😕 and a reply saying why — by the sync that
//! recorded it as handled (two servers' syncs racing on one comment answer it once).

use std::collections::HashMap;

use agentx_clarify_command::Files as _;
use agentx_clarify_command::{Mutation, Scope, State};
use agentx_clarify_core::error::ErrorClass;
use agentx_clarify_core::github::{
    decision_input, issues_to_read, permitted, refusal_reply, verdict, Command, Outcome, Seen,
    Verdict,
};
use agentx_clarify_core::ops::Attribution;
use agentx_clarify_core::{ClarifyError, Ledger};
use agentx_clarify_workspace::{Workspace, WorkspaceStore};
use serde::Serialize;

use super::client::{Client, GhError};
use super::rest::{Comment, Repo};
use super::state::SyncDoc;

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
    /// What was read and ignored for a reason worth saying (another account's comment
    /// carrying a record's marker).
    pub notes: Vec<String>,
    /// GitHub's rate limit stopped the sync until then (ms): the rest is read next time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_until: Option<i64>,
    /// Requests that failed otherwise (the sync goes on with the next issue).
    pub errors: Vec<String>,
}

/// Every readable ledger of the workspace, wherever its state is.
fn ledgers(store: &WorkspaceStore) -> Result<Vec<Ledger>, ClarifyError> {
    let read = store.scan(Scope::Read, |read| read.ledger.ok())?;
    Ok(read.into_iter().flatten().collect())
}

fn failed(e: ClarifyError) -> GhError {
    GhError::Failed(e.to_string())
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
    let me = crate::deliverer();
    let doc = SyncDoc { store, me: &me };
    let mut report = SyncReport::default();
    let state = doc.read()?;
    if let Some(until) = state.not_before.filter(|t| *t > now) {
        report.waiting_until = Some(until);
        return Ok(report);
    }
    // A token variable that is not set is the settings' to fix (issue 49): CONFIG_INVALID.
    let client = Client::new(config, |v| std::env::var(v).ok()).map_err(|e| {
        ClarifyError::ConfigInvalid {
            file: agentx_clarify_command::paths::CONFIG.to_owned(),
            location: None,
            message: e.to_string(),
        }
    })?;
    let login = match client.login(now) {
        Ok(login) => login,
        Err(GhError::RateLimited { until }) => {
            wait(&doc, &mut report, until)?;
            return Ok(report);
        }
        Err(e) => {
            report.errors.push(e.to_string());
            return Ok(report);
        }
    };
    let all = ledgers(store)?;
    let refs: Vec<&Ledger> = all.iter().collect();
    let issues = issues_to_read(&refs);
    report.issues = issues.len();
    let mut run = Run {
        store,
        doc: &doc,
        repo: Repo {
            client: &client,
            config,
            now,
        },
        login,
        now,
        permissions: HashMap::new(),
        report,
    };
    for issue in issues {
        if let Err(until) = run.issue(issue, state.cursors.get(&issue)) {
            wait(&doc, &mut run.report, until)?;
            return Ok(run.report);
        }
    }
    doc.update(|s| s.not_before = None)?;
    Ok(run.report)
}

fn wait(doc: &SyncDoc<'_>, report: &mut SyncReport, until: i64) -> Result<(), ClarifyError> {
    report.waiting_until = Some(until);
    doc.update(|s| s.not_before = Some(until))
}

/// One sync under way: what it reads with, and what it found so far.
struct Run<'a> {
    store: &'a WorkspaceStore,
    doc: &'a SyncDoc<'a>,
    repo: Repo<'a>,
    /// The login the hub posts as: its own comments are skipped, anyone else's marker noted.
    login: String,
    now: i64,
    permissions: Permissions,
    report: SyncReport,
}

impl Run<'_> {
    /// Reads and handles issue `issue`'s new comments; `Err(until)` when GitHub's rate limit
    /// stops the sync.
    fn issue(&mut self, issue: u32, cursor: Option<&String>) -> Result<(), i64> {
        let since = cursor.map(|c| a_second_before(c));
        let comments = match self.repo.comments(issue, since.as_deref()) {
            Ok(c) => c,
            Err(GhError::RateLimited { until }) => return Err(until),
            Err(e) => {
                self.report.errors.push(format!("issue #{issue}: {e}"));
                return Ok(());
            }
        };
        self.report.comments += comments.len();
        // The cursor moves only past a whole read: GitHub lists by creation, not by update,
        // so a comment that failed may have been updated before one handled after it.
        let newest = comments.iter().map(|c| c.updated_at.clone()).max();
        for c in &comments {
            match self.one(issue, c) {
                Ok(()) => {}
                Err(GhError::RateLimited { until }) => return Err(until),
                Err(e) => {
                    // Not handled: read again next time (the handled ones are skipped).
                    self.report.errors.push(format!("{}: {e}", c.url));
                    return Ok(());
                }
            }
        }
        if let Some(newest) = newest {
            if let Err(e) = self.doc.update(|s| s.advance(issue, &newest)) {
                self.report.errors.push(format!("issue #{issue}: {e}"));
            }
        }
        Ok(())
    }

    fn line(&self, issue: u32, c: &Comment, command: String, reason: Option<String>) -> SyncLine {
        SyncLine {
            issue,
            comment: c.url.clone(),
            login: c.login.clone(),
            reason,
            command,
        }
    }

    /// Handles one comment; `Err` stops the issue (the cursor stays before this comment).
    fn one(&mut self, issue: u32, c: &Comment) -> Result<(), GhError> {
        let key = c.id.to_string();
        // The ledger as it is now: an earlier comment of this sync may have changed it.
        let ledger = self.store.read_ledger(issue).map_err(failed)?;
        let state = self.doc.read().map_err(failed)?;
        let seen = Seen {
            id: &key,
            url: &c.url,
            body: &c.body,
            login: &c.login,
            edited: c.edited(),
        };
        match verdict(&state, issue, &seen, &self.login, ledger.as_ref(), self.now) {
            Verdict::Skip => Ok(()),
            Verdict::Foreign(id) => {
                self.report.notes.push(format!(
                    "{}: {}'s comment carries the marker of {id}, but only {}'s comments are the hub's: ignored",
                    c.url, c.login, self.login
                ));
                Ok(())
            }
            Verdict::Unanswered(handled) => {
                let mine = self
                    .doc
                    .update(|s| s.reclaim(&key, self.doc.me, self.now))
                    .map_err(failed)?;
                if mine {
                    self.answer(issue, c, handled.outcome, handled.refusal)?;
                }
                Ok(())
            }
            Verdict::AlreadyActed => self.acted(issue, c, None),
            Verdict::Refuse(why) => self.refuse(issue, c, first_words(&c.body), why),
            Verdict::Act(command) => self.act(issue, c, ledger.as_ref(), &command),
        }
    }

    /// Records comment `c` as handled with `outcome`; true when this sync did (it answers).
    fn claim(
        &self,
        issue: u32,
        c: &Comment,
        outcome: Outcome,
        refusal: Option<(String, String)>,
    ) -> Result<bool, GhError> {
        let key = c.id.to_string();
        self.doc
            .update(|s| s.claim(&key, issue, outcome, refusal, self.doc.me, self.now))
            .map_err(failed)
    }

    /// Comment `c` acted (here: `line`, or before): its 👍, once.
    fn acted(&mut self, issue: u32, c: &Comment, line: Option<SyncLine>) -> Result<(), GhError> {
        let mine = self.claim(issue, c, Outcome::Acted, None)?;
        self.report.acted.extend(line);
        if mine {
            self.answer(issue, c, Outcome::Acted, None)?;
        }
        Ok(())
    }

    /// Comment `c`'s command `what` is refused for `why`: 😕 and one reply, once.
    fn refuse(
        &mut self,
        issue: u32,
        c: &Comment,
        what: String,
        why: String,
    ) -> Result<(), GhError> {
        let refusal = Some((what.clone(), why.clone()));
        if self.claim(issue, c, Outcome::Refused, refusal.clone())? {
            self.report
                .refused
                .push(self.line(issue, c, what, Some(why)));
            self.answer(issue, c, Outcome::Refused, refusal)?;
        }
        Ok(())
    }

    /// Gives comment `c` its answer, then says so in the state. A reaction GitHub already has
    /// is not added twice (200), so an answer given again after a lapse adds at most a reply.
    fn answer(
        &mut self,
        issue: u32,
        c: &Comment,
        outcome: Outcome,
        refusal: Option<(String, String)>,
    ) -> Result<(), GhError> {
        match outcome {
            Outcome::Acted => self.repo.react(c.id, "+1")?,
            Outcome::Refused => {
                self.repo.react(c.id, "confused")?;
                if let Some((what, why)) = refusal {
                    let reply = refusal_reply(&c.login, &what, &c.url, &why);
                    self.repo.create(issue, &reply)?;
                }
            }
        }
        let key = c.id.to_string();
        self.doc
            .update(|s| s.answered(&key, self.doc.me))
            .map_err(failed)
    }

    /// A command whose author's permission is still to be checked.
    fn act(
        &mut self,
        issue: u32,
        c: &Comment,
        ledger: Option<&Ledger>,
        command: &Command,
    ) -> Result<(), GhError> {
        let what = match command {
            Command::Resolve { id, .. } => format!("resolve {id}"),
            Command::Abandon { id, .. } => format!("abandon {id}"),
        };
        let (role, permission) = self
            .permissions
            .entry(c.login.clone())
            .or_insert_with(|| self.repo.permission(&c.login))
            .clone()?;
        let roles = &self.repo.config.answer_roles;
        if !permitted(role.as_deref(), permission.as_deref(), roles) {
            let has = role.or(permission).unwrap_or_else(|| "none".into());
            let why = format!(
                "{} has permission '{has}' on {}; answer_roles: {}",
                c.login,
                self.repo.config.full_name(),
                roles.join(", ")
            );
            return self.refuse(issue, c, what, why);
        }
        // Both: the repository permission above, and (with people) being the person a record
        // is assigned to — the core checks that on the decision, and its refusal names who may.
        let people = self
            .store
            .load_config()
            .map_err(|e| GhError::Failed(e.to_string()))?;
        let people = people.people.as_ref().map(|p| &p.people);
        let by = match agentx_clarify_core::people::github_person(people, &c.login) {
            Ok(n) => n,
            Err(why) => return self.refuse(issue, c, what, why),
        };
        let attribution = Attribution {
            by,
            via: agentx_clarify_core::github::VIA.into(),
            reference: Some(c.url.clone()),
        };
        let done = self
            .decide(ledger, command, &attribution)
            .and_then(|m| m.error.map_or(Ok(()), Err));
        match done {
            Ok(()) => {
                let line = self.line(issue, c, what, None);
                self.acted(issue, c, Some(line))
            }
            // Not the command's fault: tried again next time.
            Err(e)
                if matches!(
                    e.class(),
                    ErrorClass::Lock | ErrorClass::Io | ErrorClass::Internal
                ) =>
            {
                Err(GhError::Failed(format!("{}: {e}", e.code())))
            }
            Err(e) => {
                // Another sync (the server's, a cron's) may have acted on this very comment
                // meanwhile: then the record moved on because of it, which is no refusal.
                if self.acted_elsewhere(issue, &c.url) {
                    return self.acted(issue, c, None);
                }
                self.refuse(issue, c, what, format!("{}: {e}", e.code()))
            }
        }
    }

    /// The command through the command layer, as the server's people decide: a record that
    /// is not escalated is taken first, by `/resolve` and `/abandon` alike.
    fn decide(
        &self,
        ledger: Option<&Ledger>,
        command: &Command,
        by: &Attribution,
    ) -> Result<Mutation, ClarifyError> {
        match command {
            Command::Resolve { id, decision } => {
                let record = ledger.and_then(|l| l.clarifications.iter().find(|r| &r.id == id));
                let (message, value) = match record {
                    Some(r) => decision_input(r, decision),
                    None => (decision.clone(), None),
                };
                agentx_clarify_command::decide(self.store, self.now, id, Some(message), value, by)
            }
            Command::Abandon { id, reason } => {
                agentx_clarify_command::decide_abandon(self.store, self.now, id, reason.clone(), by)
            }
        }
    }

    /// Whether the ledger holds an entry made from the comment at `url`.
    fn acted_elsewhere(&self, issue: u32, url: &str) -> bool {
        self.store
            .read_ledger(issue)
            .ok()
            .flatten()
            .is_some_and(|l| {
                l.clarifications.iter().any(|r| {
                    r.thread.iter().any(|e| {
                        e.extra.get("ref").and_then(serde_json::Value::as_str) == Some(url)
                    })
                })
            })
    }
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
