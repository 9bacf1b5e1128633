//! What `agentx github sync` decides for each comment it reads (docs/github.md), and the
//! state that makes every comment act at most once and be answered (reaction, reply) at most
//! once: the comments handled (acted on or refused) by id with who owes their answer, a cursor
//! per issue, when GitHub's rate limit allows the next read, and each record's comment id.

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
    /// The comment's answer — its reaction, and for a refusal the reply — is owed: `by` gives
    /// it until `until`, then another sync may. Absent once given (and in state written
    /// before answers were tracked), so each comment is answered once whoever handled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owed: Option<Owed>,
    /// What was refused and why (`resolve CLR-42-001`, the reason): what the reply says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<(String, String)>,
}

/// Who gives a comment its answer, until when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owed {
    pub by: String,
    pub until: i64,
}

/// How long a sync may take to answer a comment it handled before another sync answers it
/// (it died, or GitHub failed it): longer than one reaction and one reply ever take.
pub const ANSWER_LEASE_MS: i64 = 120_000;

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
    /// Per record, the id of its comment (created or adopted by a deliverer): the one every
    /// deliverer edits, so of two that created one at once, one deletes its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub comments: BTreeMap<String, u64>,
}

/// One comment as read, with what the verdict needs.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// GitHub's comment id, as text.
    pub id: &'a str,
    /// Its address (`html_url`): the `ref` of an entry made from it.
    pub url: &'a str,
    pub body: &'a str,
    pub login: &'a str,
    /// Changed after it was posted (`updated_at` later than `created_at`).
    pub edited: bool,
}

/// What to do with one comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not a command, our own comment, or handled before.
    Skip,
    /// Another account's comment carrying the marker of this record: not the hub's, so never
    /// edited or taken as the record's comment; the sync notes it.
    Foreign(String),
    /// Handled before, but its answer (reaction, reply) was never given and whoever owed it
    /// let it lapse: give it now.
    Unanswered(Handled),
    /// The ledger already holds an entry made from this comment (a sync that died before
    /// recording it): recorded as acted, nothing done again.
    AlreadyActed,
    /// A command to act on once the author's permission is checked.
    Act(Command),
    /// A command refused before any permission check (malformed, another issue's record,
    /// edited after it was posted).
    Refuse(String),
}

/// Why a comment edited into a command does not act.
pub const EDITED: &str = "the comment was edited after it was posted: a command acts only as first written (post it as a new comment)";

/// The verdict on comment `seen` of issue `issue`; `me` is the login the hub posts as.
pub fn verdict(
    state: &SyncState,
    issue: u32,
    seen: &Seen<'_>,
    me: &str,
    ledger: Option<&Ledger>,
    now: i64,
) -> Verdict {
    if let Some(h) = state.handled.get(seen.id) {
        let lapsed = h.owed.as_ref().is_some_and(|o| o.until <= now);
        return if lapsed {
            Verdict::Unanswered(h.clone())
        } else {
            Verdict::Skip
        };
    }
    if let Some(id) = marked(seen.body) {
        return if seen.login.eq_ignore_ascii_case(me) {
            Verdict::Skip
        } else {
            Verdict::Foreign(id.to_owned())
        };
    }
    let Some(parsed) = parse_command(seen.body) else {
        return Verdict::Skip;
    };
    // An entry made from this comment (whatever it says now): it acted once already.
    let made_here = ledger.is_some_and(|l| {
        l.clarifications.iter().any(|r| {
            r.thread
                .iter()
                .any(|e| e.extra.get("ref").and_then(|v| v.as_str()) == Some(seen.url))
        })
    });
    if made_here {
        return Verdict::AlreadyActed;
    }
    // Only the text as first written acts: an edit may be another person's (GitHub lets
    // maintainers edit anyone's comment), and the author's permission was for what they wrote.
    if seen.edited {
        return Verdict::Refuse(EDITED.to_owned());
    }
    let command = match parsed {
        Err(why) => return Verdict::Refuse(why),
        Ok(c) => c,
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
    if !ledger.is_some_and(|l| l.clarifications.iter().any(|r| r.id == id)) {
        return Verdict::Refuse(format!("issue #{issue} has no clarification {id}"));
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
    /// Remembers what became of a comment, when nobody did before; `by` then owes its answer
    /// (true: give it). False when another sync handled it first — it answers, not us.
    pub fn claim(
        &mut self,
        comment_id: &str,
        issue: u32,
        outcome: Outcome,
        refusal: Option<(String, String)>,
        by: &str,
        now: i64,
    ) -> bool {
        if self.handled.contains_key(comment_id) {
            return false;
        }
        self.handled.insert(
            comment_id.to_owned(),
            Handled {
                issue,
                outcome,
                at: now,
                owed: Some(Owed {
                    by: by.to_owned(),
                    until: now + ANSWER_LEASE_MS,
                }),
                refusal,
            },
        );
        true
    }

    /// Takes over the answer of a handled comment whose owner let it lapse; false when it was
    /// given meanwhile or another sync took it first.
    pub fn reclaim(&mut self, comment_id: &str, by: &str, now: i64) -> bool {
        match self.handled.get_mut(comment_id) {
            Some(Handled {
                owed: Some(owed), ..
            }) if owed.until <= now => {
                *owed = Owed {
                    by: by.to_owned(),
                    until: now + ANSWER_LEASE_MS,
                };
                true
            }
            _ => false,
        }
    }

    /// The answer of `comment_id` was given by `by`.
    pub fn answered(&mut self, comment_id: &str, by: &str) {
        if let Some(h) = self.handled.get_mut(comment_id) {
            if h.owed.as_ref().is_some_and(|o| o.by == by) {
                h.owed = None;
            }
        }
    }

    /// Moves issue `issue`'s cursor to `updated_at` when that is later (RFC 3339 in UTC,
    /// as GitHub writes them, compare as text).
    pub fn advance(&mut self, issue: u32, updated_at: &str) {
        let cursor = self.cursors.entry(issue).or_default();
        if updated_at > cursor.as_str() {
            *cursor = updated_at.to_owned();
        }
    }

    /// Makes `comment` record `record`'s comment unless another is already: the one kept.
    pub fn adopt(&mut self, record: &str, comment: u64) -> u64 {
        *self.comments.entry(record.to_owned()).or_insert(comment)
    }

    /// Forgets `comment` as `record`'s (deleted on GitHub): the next deliverer looks again.
    pub fn forget(&mut self, record: &str, comment: u64) {
        if self.comments.get(record) == Some(&comment) {
            self.comments.remove(record);
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

    fn seen<'a>(id: &'a str, url: &'a str, body: &'a str) -> Seen<'a> {
        Seen {
            id,
            url,
            body,
            login: "ann",
            edited: false,
        }
    }

    #[test]
    fn each_comment_acts_once() {
        let l = ledger();
        let mut state = SyncState::default();
        let v =
            |state: &SyncState, issue, s: Seen<'_>| verdict(state, issue, &s, "hub", Some(&l), 0);
        assert!(matches!(
            v(&state, 42, seen("1", "u1", "/resolve CLR-42-001 redis")),
            Verdict::Act(_)
        ));
        assert!(state.claim("1", 42, Outcome::Acted, None, "me", 0));
        assert!(
            !state.claim("1", 42, Outcome::Acted, None, "other", 0),
            "once"
        );
        assert_eq!(
            v(&state, 42, seen("1", "u1", "/resolve CLR-42-001 redis")),
            Verdict::Skip
        );
        let url = "https://github.com/a/b/issues/42#issuecomment-9";
        assert_eq!(
            v(&state, 42, seen("9", url, "/resolve CLR-42-001 x")),
            Verdict::AlreadyActed
        );
        // Edited after it acted, even into another command: still the comment that acted.
        let edited = Seen {
            edited: true,
            ..seen("9", url, "/abandon CLR-42-001")
        };
        assert_eq!(v(&state, 42, edited), Verdict::AlreadyActed);
        assert!(matches!(
            v(&state, 7, seen("2", "u2", "/resolve CLR-42-001 x")),
            Verdict::Refuse(_)
        ));
        assert!(matches!(
            v(&state, 42, seen("3", "u3", "/resolve CLR-42-009 x")),
            Verdict::Refuse(_)
        ));
        assert_eq!(v(&state, 42, seen("5", "u5", "LGTM")), Verdict::Skip);
    }

    #[test]
    fn only_the_hubs_own_marker_is_its_own_and_only_first_versions_act() {
        let l = ledger();
        let state = SyncState::default();
        let marked = "<!-- agentx:CLR-42-001 -->\n/resolve CLR-42-001 x";
        let mine = Seen {
            login: "Hub",
            ..seen("4", "u4", marked)
        };
        assert_eq!(
            verdict(&state, 42, &mine, "hub", Some(&l), 0),
            Verdict::Skip
        );
        let foreign = seen("4", "u4", marked);
        assert_eq!(
            verdict(&state, 42, &foreign, "hub", Some(&l), 0),
            Verdict::Foreign("CLR-42-001".into())
        );
        let edited = Seen {
            edited: true,
            ..seen("6", "u6", "/resolve CLR-42-001 redis")
        };
        assert_eq!(
            verdict(&state, 42, &edited, "hub", Some(&l), 0),
            Verdict::Refuse(EDITED.into())
        );
        let chatter = Seen {
            edited: true,
            ..seen("7", "u7", "typo fixed")
        };
        assert_eq!(
            verdict(&state, 42, &chatter, "hub", Some(&l), 0),
            Verdict::Skip
        );
    }

    #[test]
    fn an_answer_is_given_once_and_taken_over_when_it_lapses() {
        let mut s = SyncState::default();
        let why = Some(("resolve CLR-42-001".to_owned(), "no".to_owned()));
        assert!(s.claim("1", 42, Outcome::Refused, why, "a", 0));
        assert!(!s.reclaim("1", "b", ANSWER_LEASE_MS - 1), "a still owes it");
        let c = seen("1", "u1", "/resolve CLR-42-001 x");
        assert_eq!(verdict(&s, 42, &c, "hub", None, 10), Verdict::Skip);
        assert!(matches!(
            verdict(&s, 42, &c, "hub", None, ANSWER_LEASE_MS),
            Verdict::Unanswered(_)
        ));
        assert!(s.reclaim("1", "b", ANSWER_LEASE_MS));
        assert!(!s.reclaim("1", "c", ANSWER_LEASE_MS), "b took it");
        s.answered("1", "a");
        assert!(
            s.handled["1"].owed.is_some(),
            "only the holder says it is given"
        );
        s.answered("1", "b");
        assert_eq!(s.handled["1"].owed, None);
        assert!(!s.reclaim("1", "c", 10 * ANSWER_LEASE_MS));
    }

    #[test]
    fn one_comment_is_kept_per_record() {
        let mut s = SyncState::default();
        assert_eq!(s.adopt("CLR-1-001", 10), 10);
        assert_eq!(s.adopt("CLR-1-001", 11), 10, "the first one stays");
        s.forget("CLR-1-001", 11);
        assert_eq!(s.comments["CLR-1-001"], 10);
        s.forget("CLR-1-001", 10);
        assert!(s.comments.is_empty());
    }

    #[test]
    fn cursors_only_move_forward_and_old_state_reads() {
        let mut s = SyncState::default();
        s.advance(1, "2026-11-22T10:00:00Z");
        s.advance(1, "2026-11-21T10:00:00Z");
        assert_eq!(s.cursors[&1], "2026-11-22T10:00:00Z");
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<SyncState>(&text).unwrap(), s);
        // State written before answers and comments were tracked: every answer given.
        let old = r#"{"cursors":{"7":"2026-11-22T10:00:00Z"},"handled":{"9":{"issue":7,"outcome":"acted","at":1}}}"#;
        let read: SyncState = serde_json::from_str(old).unwrap();
        assert_eq!(read.handled["9"].owed, None);
        assert!(read.comments.is_empty());
    }
}
