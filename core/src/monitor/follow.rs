//! What the monitor that follows a command must read (docs/protocol.md §29): the decisions a store's
//! index keeps as rows, so that a command's cost grows neither with finished nor with open
//! work. A store keeps, for each ledger, the [`FollowKeys`] of the ledger as written; the
//! follow-up reads the ledgers whose keys say the monitor may act on them now:
//!
//! - **due**: the earliest instant the stale phase acts on the ledger by the passing of time
//!   alone ([`due_at`] over its records): due when it is at or before `now`;
//! - **cyclic**: its wait-for edges (the deadlock phase's, [`wait_edges`]) contain a cycle,
//!   which only a write can create, so a follow-up that did not break it (it failed, or a
//!   crash came between the write and its follow-up) leaves it for the next one;
//! - **askers**: per requester of an active record, the earliest latest question or retry
//!   among its active records there: abandonment acts only when the requester's status
//!   changed later than that ([`AbandonCandidate`]).
//!
//! Stuck records need no key: only a write makes a record stuck, and the command that writes
//! it runs the follow-up over what it wrote. Delegation ledgers are kept by their due time
//! alone ([`crate::delegation::next_wakeup`]).

use std::collections::{BTreeMap, HashMap};

use super::deadlock::{cyclic_components, intern, WaitEdge};
use super::stale::due_at;
use crate::agents::{Statuses, DONE, WORKING};
use crate::ledger::Ledger;
use crate::time::parse_ms;

/// The index entries of one ledger (none at all when the monitor can never act on it:
/// [`follow_keys`] returns `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FollowKeys {
    /// When the ledger falls due (`i64::MIN`: at once; `None`: never by time alone).
    pub due: Option<i64>,
    /// Its wait-for edges hold a cycle now.
    pub cyclic: bool,
    /// Requester → the earliest latest ask among its active records here (requesters whose
    /// records have no time to compare never cause abandonment and have no entry).
    pub askers: BTreeMap<String, i64>,
}

impl FollowKeys {
    /// The keys of a ledger that could not be read: due at once, so every follow-up reads
    /// (and reports) it until it is fixed.
    pub fn unreadable() -> FollowKeys {
        FollowKeys {
            due: Some(i64::MIN),
            ..FollowKeys::default()
        }
    }

    /// The keys of a delegation ledger that falls due at `due`.
    pub fn due_at(due: Option<i64>) -> FollowKeys {
        FollowKeys {
            due,
            ..FollowKeys::default()
        }
    }

    /// Whether the keys name anything (a store keeps no entry otherwise).
    pub fn is_empty(&self) -> bool {
        self.due.is_none() && !self.cyclic && self.askers.is_empty()
    }
}

/// One wait-for edge as data: `from` waits on `to` because of record `id`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EdgeRow {
    pub from: String,
    pub to: String,
    pub id: String,
}

/// The wait-for edges of `ledger` as the deadlock phase sees them: one per blocking record in
/// pending or stale, except a record whose question was asked back (it waits on the reply).
pub fn wait_edges(ledger: &Ledger) -> Vec<EdgeRow> {
    super::graph::waiting(ledger)
        .into_iter()
        .map(|r| EdgeRow {
            from: r.from.clone(),
            to: r.to.clone(),
            id: r.id.clone(),
        })
        .collect()
}

/// Whether `edges` hold a cycle (a strongly connected component with an edge): the deadlock
/// phase acts on the ledger exactly then.
pub fn has_cycle(edges: &[EdgeRow]) -> bool {
    if edges.len() < 2 && !edges.iter().any(|e| e.from == e.to) {
        return false;
    }
    let mut node_of: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    let wait: Vec<WaitEdge> = edges
        .iter()
        .enumerate()
        .map(|(record, e)| WaitEdge {
            from: intern(&e.from, &mut node_of, &mut names),
            to: intern(&e.to, &mut node_of, &mut names),
            record,
        })
        .collect();
    !cyclic_components(names.len(), &wait).is_empty()
}

/// The keys of `ledger` as it stands; `None` when the monitor can never act on it
/// ([`super::may_act`] does not hold).
pub fn follow_keys(ledger: &Ledger) -> Option<FollowKeys> {
    if !super::may_act(ledger) {
        return None;
    }
    let due = ledger.clarifications.iter().filter_map(due_at).min();
    let mut askers: BTreeMap<String, i64> = BTreeMap::new();
    for r in &ledger.clarifications {
        if !r.current_status().is_active() {
            continue;
        }
        if let Some(asked) = r.last_ask_ms() {
            askers
                .entry(r.from.clone())
                .and_modify(|t| *t = (*t).min(asked))
                .or_insert(asked);
        }
    }
    Some(FollowKeys {
        due,
        cyclic: has_cycle(&wait_edges(ledger)),
        askers,
    })
}

/// An agent whose status may abandon its active records: those on another issue than
/// `except` whose latest question or retry is before `since` (docs/protocol.md §7.4 with §20).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbandonCandidate {
    pub agent: String,
    pub since: i64,
    /// A `working` agent's issue: its records there are never abandoned.
    pub except: Option<u64>,
}

impl AbandonCandidate {
    /// Whether a ledger of `issue` whose keys name this agent with the earliest ask `asked`
    /// can hold a record this agent's status abandons.
    pub fn may_abandon(&self, issue: u64, asked: i64) -> bool {
        asked < self.since && self.except != Some(issue)
    }
}

/// The agents whose status may abandon some active record of theirs, ascending by name: the
/// abandonment phase's own rule read from the status side (`done`, or `working` on a non-null
/// issue, reported at a known instant: `reportedAt`). Every record it abandons has a requester here and an
/// ask before `since`, so a follow-up that reads the ledgers these name (by the
/// [`FollowKeys::askers`] of each) finds every abandonment a full pass finds.
pub fn abandon_candidates(statuses: &Statuses) -> Vec<AbandonCandidate> {
    statuses
        .iter()
        .filter_map(|(agent, s)| {
            // The report that may abandon (docs/protocol.md §28): `reportedAt`, never `lastActivity`.
            let since = s.reported_at.as_deref().and_then(parse_ms)?;
            let except = match (s.status.as_str(), s.issue) {
                (DONE, _) => None,
                (WORKING, Some(issue)) => Some(issue),
                _ => return None,
            };
            Some(AbandonCandidate {
                agent: agent.clone(),
                since,
                except,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::AgentStatus;
    use crate::config::Config;
    use crate::monitor::{monitor_ledger, wait_for_graph};

    fn edge(from: &str, to: &str, id: &str) -> EdgeRow {
        EdgeRow {
            from: from.into(),
            to: to.into(),
            id: id.into(),
        }
    }

    #[test]
    fn a_cycle_needs_two_edges_or_a_self_loop() {
        assert!(!has_cycle(&[]));
        assert!(!has_cycle(&[edge("a", "b", "1")]));
        assert!(has_cycle(&[edge("a", "a", "1")]));
        assert!(!has_cycle(&[edge("a", "b", "1"), edge("b", "c", "2")]));
        assert!(has_cycle(&[edge("a", "b", "1"), edge("b", "a", "2")]));
        assert!(has_cycle(&[
            edge("a", "b", "1"),
            edge("b", "c", "2"),
            edge("c", "a", "3")
        ]));
    }

    #[test]
    fn the_keys_agree_with_the_graph_and_the_stale_phase() {
        use crate::testkit::{ask, plain, T0};
        let keyring = crate::signing::Signers::default();
        let mut ledger = ask(
            None,
            &plain("engineer", "architect", "Cache", "Redis?"),
            T0,
            &keyring,
        );
        // The way back, as another tool could have written it (no workflow allows it).
        let mut back = ledger.clarifications[0].clone();
        back.id = "CLR-42-002".into();
        std::mem::swap(&mut back.from, &mut back.to);
        ledger.clarifications.push(back);
        let keys = follow_keys(&ledger).expect("active records");
        assert!(keys.cyclic);
        assert_eq!(
            keys.cyclic,
            !wait_for_graph(&ledger, &Config::default())
                .cycles
                .is_empty()
        );
        let due = keys.due.expect("pending records");
        // Not acting before the due instant, acting at it.
        let before = monitor_ledger(
            ledger.clone(),
            &Statuses::new(),
            &Config::default(),
            due - 1,
        );
        assert!(before.report.stale.is_empty());
        let at = monitor_ledger(ledger, &Statuses::new(), &Config::default(), due);
        assert!(!at.report.stale.is_empty());
    }

    #[test]
    fn only_done_or_working_elsewhere_at_a_known_time_may_abandon() {
        let status = |s: &str, issue: Option<u64>, at: Option<&str>| AgentStatus {
            status: s.into(),
            issue,
            last_activity: at.map(str::to_owned),
            reported_at: at.map(str::to_owned),
            clarification_id: None,
            waiting_on: None,
            responding_to: None,
            extra: serde_json::Map::new(),
        };
        let mut statuses = Statuses::new();
        let t = "2026-11-22T10:00:00.000Z";
        statuses.insert("a".into(), status(DONE, Some(3), Some(t)));
        statuses.insert("b".into(), status(WORKING, Some(4), Some(t)));
        statuses.insert("c".into(), status(WORKING, None, Some(t)));
        statuses.insert("d".into(), status(DONE, None, None));
        statuses.insert("e".into(), status("clarifying", Some(4), Some(t)));
        let found = abandon_candidates(&statuses);
        let names: Vec<&str> = found.iter().map(|c| c.agent.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let since = parse_ms(t).unwrap();
        assert!(found[0].may_abandon(4, since - 1));
        assert!(!found[0].may_abandon(4, since));
        assert!(!found[1].may_abandon(4, since - 1));
        assert!(found[1].may_abandon(5, since - 1));
    }
}
