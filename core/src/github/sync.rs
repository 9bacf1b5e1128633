//! What `agentx github sync` decides for each comment it reads (docs/github.md), and the
//! state that makes every comment act at most once: the comments handled (acted on or
//! refused) by id, a cursor per issue, and when GitHub's rate limit allows the next read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::github::command::{parse_command, Command};
use crate::github::comment::marked;
use crate::ledger::Ledger;
use crate::names::ClarificationId;

/// What became of a comment with a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Acted,
    Refused,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handled {
    pub issue: u32,
    pub outcome: Outcome,
    pub at: i64,
}

/// `.agentx/state/github.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncState {
    /// Per issue, the newest `updated_at` read: the next read asks for comments since then.
    #[serde(default)]
    pub cursors: BTreeMap<u32, String>,
    /// Comments acted on or refused, by GitHub's comment id: an edit after that changes
    /// nothing.
    #[serde(default)]
    pub handled: BTreeMap<String, Handled>,
    /// GitHub's rate limit is spent until then (ms): no read before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<i64>,
}

/// What to do with one comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not a command, our own comment, or handled before.
    Skip,
    /// The ledger already holds an entry made from this comment (a sync that died before
    /// recording it): recorded as acted, nothing done again.
    AlreadyActed,
    /// A command to act on once the author's permission is checked.
    Act(Command),
    /// A command refused before any permission check (malformed, another issue's record).
    Refuse(String),
}

/// The verdict on comment `comment_id` (its URL `comment_ref`, its `body`) of issue `issue`.
pub fn verdict(
    state: &SyncState,
    issue: u32,
    comment_id: &str,
    comment_ref: &str,
    body: &str,
    ledger: Option<&Ledger>,
) -> Verdict {
    if state.handled.contains_key(comment_id) || marked(body).is_some() {
        return Verdict::Skip;
    }
    let command = match parse_command(body) {
        None => return Verdict::Skip,
        Some(Err(why)) => return Verdict::Refuse(why),
        Some(Ok(c)) => c,
    };
    let id = command.id();
    match ClarificationId::parse(id) {
        Ok(parsed) if parsed.issue == issue => {}
        Ok(parsed) => {
            return Verdict::Refuse(format!(
                "{id} belongs to issue #{}, not #{issue}: answer it there",
                parsed.issue
            ))
        }
        Err(e) => return Verdict::Refuse(e.to_string()),
    }
    let Some(record) = ledger.and_then(|l| l.clarifications.iter().find(|r| r.id == id)) else {
        return Verdict::Refuse(format!("issue #{issue} has no clarification {id}"));
    };
    let made_here = record
        .thread
        .iter()
        .any(|e| e.extra.get("ref").and_then(|v| v.as_str()) == Some(comment_ref));
    if made_here {
        return Verdict::AlreadyActed;
    }
    Verdict::Act(command)
}

/// The issues whose comments a sync reads: those with an open record.
pub fn issues_to_read(ledgers: &[&Ledger]) -> Vec<u32> {
    let mut issues: Vec<u32> = ledgers
        .iter()
        .filter(|l| {
            l.clarifications
                .iter()
                .any(|r| r.current_status().is_open())
        })
        .map(|l| l.issue_number)
        .collect();
    issues.sort_unstable();
    issues.dedup();
    issues
}

impl SyncState {
    /// Remembers what became of a comment.
    pub fn handle(&mut self, comment_id: &str, issue: u32, outcome: Outcome, now: i64) {
        self.handled.insert(
            comment_id.to_owned(),
            Handled {
                issue,
                outcome,
                at: now,
            },
        );
    }

    /// Moves issue `issue`'s cursor to `updated_at` when that is later (RFC 3339 in UTC,
    /// as GitHub writes them, compare as text).
    pub fn advance(&mut self, issue: u32, updated_at: &str) {
        let cursor = self.cursors.entry(issue).or_default();
        if updated_at > cursor.as_str() {
            *cursor = updated_at.to_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger() -> Ledger {
        let text = r#"{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"escalated","round":1,"maxRounds":3,"slaMinutes":30,"thread":[{"round":1,"from":"engineer","type":"question","body":"Redis?","timestamp":"2026-11-22T10:00:00.000Z"},{"round":1,"from":"human","type":"resolution","body":"x","timestamp":"2026-11-22T10:05:00.000Z","by":"ann","via":"github","ref":"https://github.com/a/b/issues/42#issuecomment-9"}]}]}"#;
        Ledger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap()
    }

    #[test]
    fn each_comment_acts_once() {
        let l = ledger();
        let mut state = SyncState::default();
        let v = verdict(&state, 42, "1", "u1", "/resolve CLR-42-001 redis", Some(&l));
        assert!(matches!(v, Verdict::Act(_)));
        state.handle("1", 42, Outcome::Acted, 0);
        assert_eq!(
            verdict(&state, 42, "1", "u1", "/resolve CLR-42-001 redis", Some(&l)),
            Verdict::Skip
        );
        let url = "https://github.com/a/b/issues/42#issuecomment-9";
        assert_eq!(
            verdict(&state, 42, "9", url, "/resolve CLR-42-001 x", Some(&l)),
            Verdict::AlreadyActed
        );
        assert!(matches!(
            verdict(&state, 7, "2", "u2", "/resolve CLR-42-001 x", Some(&l)),
            Verdict::Refuse(_)
        ));
        assert!(matches!(
            verdict(&state, 42, "3", "u3", "/resolve CLR-42-009 x", Some(&l)),
            Verdict::Refuse(_)
        ));
        assert_eq!(
            verdict(
                &state,
                42,
                "4",
                "u4",
                "<!-- agentx:CLR-42-001 -->\n/resolve CLR-42-001 x",
                Some(&l)
            ),
            Verdict::Skip
        );
        assert_eq!(
            verdict(&state, 42, "5", "u5", "LGTM", Some(&l)),
            Verdict::Skip
        );
    }

    #[test]
    fn cursors_only_move_forward() {
        let mut s = SyncState::default();
        s.advance(1, "2026-11-22T10:00:00Z");
        s.advance(1, "2026-11-21T10:00:00Z");
        assert_eq!(s.cursors[&1], "2026-11-22T10:00:00Z");
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<SyncState>(&text).unwrap(), s);
    }
}
