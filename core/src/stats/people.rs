//! Stats per person (docs/protocol.md §37): what each person decided, claimed and handed
//! over, how long their decisions took from the escalation, and what is theirs now.
//!
//! Read from the ledgers alone: a person's entry is `from: "human"` with `by` naming them
//! (a resolution or abandonment through a door, §23), or a `claim` / `handoff`. "Now" is the
//! ledgers' present state (`assigned`, the holder), so no clock is needed.

use serde::{Deserialize, Serialize};

use super::nearest_rank;
use crate::ledger::{Entry, EntryKind, Ledger, Record, Status};
use crate::names::{check_agent, HUMAN};
use crate::people::{assigned, holder};
use crate::sorted_map::SortedMap;

/// One person's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonStats {
    pub name: String,
    /// Resolutions written by them (at or after `since`).
    pub decisions: usize,
    /// Claims they wrote (at or after `since`).
    pub claims: usize,
    /// Handoffs they gave (at or after `since`).
    pub handoffs: usize,
    /// Nearest-rank median, over their decisions that followed an escalation, of the time
    /// from the record's latest escalation before the decision to the decision.
    pub median_decision_ms: Option<i64>,
    /// Escalated records assigned to them now.
    pub open_assigned: usize,
    /// Escalated records they hold now (claimed by them, or handed to them).
    pub holding: usize,
}

/// What is counted for one person before the median is taken.
#[derive(Default)]
struct Tally {
    decisions: usize,
    claims: usize,
    handoffs: usize,
    waits: Vec<i64>,
    open_assigned: usize,
    holding: usize,
}

/// The person an entry was written by, when a person wrote it. A `by` that cannot be a
/// person's name (`operator of <agent>`, MCP elicitation's, §24) is nobody's row.
fn person_of(e: &Entry) -> Option<&str> {
    let person_kind = matches!(
        e.kind,
        EntryKind::Resolution | EntryKind::Abandonment | EntryKind::Claim | EntryKind::Handoff
    );
    if !person_kind || e.from != HUMAN {
        return None;
    }
    let by = e.extra.get("by")?.as_str()?;
    check_agent(by).is_ok().then_some(by)
}

/// One row per person named by a person's entry or in `defined` (those with zeros), in
/// name order. `since` (epoch ms) limits the counted decisions, claims and handoffs to
/// those written at or after it; what is assigned and held is always as of now.
pub fn people_stats(
    ledgers: &[Ledger],
    defined: &[String],
    since: Option<i64>,
) -> Vec<PersonStats> {
    let mut tallies: SortedMap<String, Tally> = SortedMap::new();
    for name in defined {
        tallies.update(name.clone(), Tally::default, |_| {});
    }
    let records = || ledgers.iter().flat_map(|l| l.clarifications.iter());
    // Every row first: what is assigned or held now counts only for a row (a name in an
    // old `assigned` that nobody defines and who never acted is not a person we know).
    for record in records() {
        count_entries(record, since, &mut tallies);
    }
    for record in records() {
        count_now(record, &mut tallies);
    }
    tallies
        .iter()
        .map(|(name, t)| {
            let mut waits = t.waits.clone();
            crate::stable_sort::sort_by(&mut waits, Ord::cmp);
            PersonStats {
                name: name.clone(),
                decisions: t.decisions,
                claims: t.claims,
                handoffs: t.handoffs,
                median_decision_ms: nearest_rank(&waits, 0.5),
                open_assigned: t.open_assigned,
                holding: t.holding,
            }
        })
        .collect()
}

/// The person's entries of `record`: every one names a row, the ones since `since` count.
fn count_entries(record: &Record, since: Option<i64>, tallies: &mut SortedMap<String, Tally>) {
    for (i, e) in record.thread.iter().enumerate() {
        let Some(by) = person_of(e) else {
            continue;
        };
        let at = e.timestamp.ms();
        let counted = since.is_none_or(|s| at >= s);
        // The wait is measured from the escalation that asked for this decision: a record
        // reopened and escalated again waited only since the last one.
        let wait = record
            .thread
            .get(..i)
            .and_then(|before| {
                before
                    .iter()
                    .rev()
                    .find(|p| p.kind == EntryKind::Escalation)
            })
            .map(|p| at - p.timestamp.ms());
        tallies.update(by.to_owned(), Tally::default, |t| {
            if !counted {
                return;
            }
            match e.kind {
                EntryKind::Resolution => {
                    t.decisions += 1;
                    t.waits.extend(wait);
                }
                EntryKind::Claim => t.claims += 1,
                EntryKind::Handoff => t.handoffs += 1,
                _ => {}
            }
        });
    }
}

/// What `record` is now to the people who have a row: assigned to them, or held.
fn count_now(record: &Record, tallies: &mut SortedMap<String, Tally>) {
    if record.current_status() != Status::Escalated {
        return;
    }
    let mut bump = |name: &str, f: fn(&mut Tally)| {
        if tallies.contains_key(name) {
            tallies.update(name.to_owned(), Tally::default, f);
        }
    };
    for name in assigned(record).unwrap_or_default() {
        bump(&name, |t| t.open_assigned += 1);
    }
    if let Some(h) = holder(record) {
        bump(&h.person, |t| t.holding += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::ops::{act, act_by, request, Action, Attribution};
    use crate::people::{take, People, PeopleSettings, Taking};
    use crate::signing::Signers;
    use crate::testkit::{plain, MIN, T0};
    use crate::time::Timestamp;
    use crate::workflow::Workflows;

    fn config() -> Config {
        let workflows = Workflows::defaults();
        let team = People::parse(
            "people.toml",
            "[people.alice]\n[people.bob]\n[people.carol]\n",
            &[],
        )
        .unwrap();
        Config {
            people: PeopleSettings::shared(team, &workflows),
            ..Config::default()
        }
    }

    fn person(name: &str) -> Attribution {
        Attribution {
            by: name.into(),
            via: "web".into(),
            reference: None,
        }
    }

    /// `ledger` with one more record, asked at `at` and escalated a minute later.
    fn escalated(config: &Config, ledger: Option<&Ledger>, at: i64) -> Ledger {
        // A new question each time: the same one again would be a re-ask of the first.
        let n = ledger.map_or(0, |l| l.clarifications.len()) + 1;
        let req = plain(
            "engineer",
            "architect",
            "Cache",
            &format!("Which, part {n}?"),
        );
        let asked = request(ledger, &req, config, &Workflows::defaults(), at).unwrap();
        assert!(!asked.reused && !asked.idempotent, "{}", asked.id);
        let (id, asked) = (asked.id, asked.ledger);
        let escalate = Action::Escalate {
            from: None,
            message: None,
        };
        act(&asked, &id, &escalate, config, at + MIN)
            .unwrap()
            .ledger
    }

    fn taking(config: &Config, l: &Ledger, id: &str, who: &str, t: Taking<'_>, at: i64) -> Ledger {
        let (by, signers) = (person(who), Signers::default());
        let call = crate::people::PersonCall {
            id,
            by: &by,
            config,
            now: at,
            signers: &signers,
        };
        take(l, call, t, None).unwrap().ledger
    }

    fn resolve(config: &Config, l: &Ledger, id: &str, who: &str, at: i64) -> Ledger {
        let action = Action::Resolve {
            from: None,
            message: Some("Redis.".into()),
        };
        let s = Signers::default();
        act_by(l, id, &action, config, at, &s, Some(&person(who)))
            .unwrap()
            .ledger
    }

    /// CLR-42-001: alice claims and decides it 30 minutes after the escalation. CLR-42-002:
    /// bob claims it and hands it to carol, who holds it; still assigned to all three.
    fn team_ledger(config: &Config) -> Ledger {
        let l = escalated(config, None, T0);
        let l = taking(
            config,
            &l,
            "CLR-42-001",
            "alice",
            Taking::Claim,
            T0 + 2 * MIN,
        );
        let l = resolve(config, &l, "CLR-42-001", "alice", T0 + 31 * MIN);
        let l = escalated(config, Some(&l), T0 + 9 * MIN);
        let l = taking(
            config,
            &l,
            "CLR-42-002",
            "bob",
            Taking::Claim,
            T0 + 11 * MIN,
        );
        let to = Taking::Handoff { to: "carol" };
        taking(config, &l, "CLR-42-002", "bob", to, T0 + 12 * MIN)
    }

    fn row(name: &str, counts: [usize; 5], median: Option<i64>) -> PersonStats {
        let [decisions, claims, handoffs, open_assigned, holding] = counts;
        PersonStats {
            name: name.into(),
            decisions,
            claims,
            handoffs,
            median_decision_ms: median,
            open_assigned,
            holding,
        }
    }

    #[test]
    fn each_person_decides_claims_hands_over_and_holds() {
        let config = config();
        let ledgers = [team_ledger(&config)];
        let defined: Vec<String> = ["alice", "bob", "carol", "dave"].map(String::from).into();
        let rows = people_stats(&ledgers, &defined, None);
        assert_eq!(
            rows,
            vec![
                row("alice", [1, 1, 0, 1, 0], Some(30 * MIN)),
                row("bob", [0, 1, 1, 1, 0], None),
                row("carol", [0, 0, 0, 1, 1], None),
                row("dave", [0, 0, 0, 0, 0], None),
            ]
        );
        let v = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"name": "alice", "decisions": 1, "claims": 1, "handoffs": 0,
                "medianDecisionMs": 1_800_000, "openAssigned": 1, "holding": 0})
        );

        // Since bob's claim: alice's earlier claim no longer counts, her decision does; what
        // is assigned and held is as of now whatever `since` says.
        let rows = people_stats(&ledgers, &defined, Some(T0 + 11 * MIN));
        assert_eq!(rows[0], row("alice", [1, 0, 0, 1, 0], Some(30 * MIN)));
        assert_eq!(rows[1], row("bob", [0, 1, 1, 1, 0], None));
        assert_eq!(rows[2], row("carol", [0, 0, 0, 1, 1], None));
    }

    #[test]
    fn a_decision_waits_from_the_latest_escalation_before_it() {
        let config = config();
        let mut ledger = team_ledger(&config);
        // A second escalation 10 minutes before alice's decision (as after a reopen): the
        // wait is from it, not from the first.
        let thread = &mut ledger.clarifications[0].thread;
        let mut again = thread[1].clone();
        again.timestamp = Timestamp::from_ms(T0 + 21 * MIN);
        let at = thread.len() - 1;
        thread.insert(at, again);
        let rows = people_stats(&[ledger], &[], None);
        assert_eq!(rows[0].median_decision_ms, Some(10 * MIN));
    }

    #[test]
    fn the_median_of_two_is_the_lower_and_only_people_have_rows() {
        // Without people anyone's name decides; the operator of an agent (MCP elicitation)
        // is nobody's row, and the engineer abandoning its own ask is an agent's entry.
        let config = Config::default();
        let l = escalated(&config, None, T0);
        let l = resolve(&config, &l, "CLR-42-001", "erin", T0 + 11 * MIN);
        let l = escalated(&config, Some(&l), T0 + 20 * MIN);
        let l = resolve(&config, &l, "CLR-42-002", "erin", T0 + 41 * MIN);
        let l = escalated(&config, Some(&l), T0 + 50 * MIN);
        let l = resolve(
            &config,
            &l,
            "CLR-42-003",
            "operator of engineer",
            T0 + 52 * MIN,
        );
        let req = plain("engineer", "architect", "Cache", "Redis?");
        let l = request(
            Some(&l),
            &req,
            &config,
            &Workflows::defaults(),
            T0 + 60 * MIN,
        )
        .unwrap()
        .ledger;
        let own = Action::Abandon {
            from: Some("engineer".into()),
            message: Some("Not needed.".into()),
        };
        let l = act(&l, "CLR-42-004", &own, &config, T0 + 61 * MIN)
            .unwrap()
            .ledger;
        let rows = people_stats(&[l], &[], None);
        assert_eq!(rows, vec![row("erin", [2, 0, 0, 0, 0], Some(10 * MIN))]);
        assert!(people_stats(&[], &[], None).is_empty());
    }
}
