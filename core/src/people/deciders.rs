//! Who decides a record (docs/protocol.md §37): the `deciders` of its step — `deciders_block`
//! instead for a `BLOCK` record, when the step sets it — else the workspace's `[people]
//! default_deciders`, else every defined person (what every human could do before people).
//! `role:<role>` is whoever is on call for the role at `now` when the role has a rotation,
//! else every person holding it.

use super::{People, ROLE_PREFIX};
use crate::ledger::{Record, Severity};
use crate::workflow::{Step, Workflow};

/// The step whose people decide `record`: the first step its target runs (the question is
/// the target's to answer, so its owners decide what the target could not), else the step
/// that let the requester ask (as the scope check finds it: the requester's first step that
/// may clarify with the target). `None` when the workflow has neither.
pub fn governing_step<'w>(workflow: &'w Workflow, record: &Record) -> Option<&'w Step> {
    workflow
        .steps
        .iter()
        .find(|s| s.agent == record.to)
        .or_else(|| {
            workflow
                .steps
                .iter()
                .find(|s| s.agent == record.from && s.can_clarify.contains(&record.to))
        })
}

impl People {
    /// The people who decide `record` at `now_ms`, in the order the deciders list names them
    /// (a role's holders in name order), each once. `workflow` is the record's (its issue's
    /// ledger's, else the default); `default_deciders` is `[people] default_deciders`.
    /// Empty only when no people are defined. A list that names nobody defined (a role no
    /// one holds) falls back to every person, so a record is never left without a decider;
    /// `agentx people check` reports such a list.
    pub fn deciders_of(
        &self,
        record: &Record,
        workflow: Option<&Workflow>,
        default_deciders: Option<&[String]>,
        now_ms: i64,
    ) -> Vec<String> {
        if !self.is_defined() {
            return Vec::new();
        }
        let step = workflow.and_then(|w| governing_step(w, record));
        let specs = step
            .and_then(|s| {
                let block = record.severity() == Severity::Block;
                [
                    block.then_some(s.deciders_block.as_slice()),
                    Some(s.deciders.as_slice()),
                ]
                .into_iter()
                .flatten()
                .find(|d| !d.is_empty())
            })
            .or(default_deciders.filter(|d| !d.is_empty()));
        self.deciders_named(specs.unwrap_or_default(), now_ms)
    }

    /// Whom the deciders list `specs` names at `now_ms`, with the fallback every record gets:
    /// a list that names nobody defined is every person (none when no people are defined).
    pub fn deciders_named(&self, specs: &[String], now_ms: i64) -> Vec<String> {
        let expanded = self.expand(specs, now_ms);
        if expanded.is_empty() {
            self.names()
        } else {
            expanded
        }
    }

    /// The defined people `specs` name at `now_ms`, each once, in the order named.
    pub fn expand(&self, specs: &[String], now_ms: i64) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for spec in specs {
            let names = match spec.strip_prefix(ROLE_PREFIX) {
                Some(role) => match self.on_call(role, now_ms) {
                    Some(person) => vec![person.to_owned()],
                    None => self.with_role(role),
                },
                None if self.get(spec).is_some() => vec![spec.clone()],
                None => Vec::new(),
            };
            for name in names {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::record;

    const TEAM: &str = r#"
[people.alice]
roles = ["architecture", "lead"]
[people.bob]
roles = ["lead"]
[people.carol]
roles = ["architecture"]

[[rotations]]
role = "lead"
people = ["alice", "bob"]
every = "7d"
start = "2026-01-05T09:00:00Z"
"#;
    const HANDOVER: i64 = 1_767_603_600_000 + 7 * 86_400_000; // 2026-01-12T09:00:00Z
    const MINUTE: i64 = 60_000;

    fn team() -> People {
        People::parse("people.toml", TEAM, &[]).unwrap()
    }

    fn workflow(text: &str) -> Workflow {
        Workflow::parse("feature.toml", text).unwrap()
    }

    const FEATURE: &str = r#"
[[steps]]
id = "architecture"
agent = "architect"
can_clarify = ["product-manager"]
deciders = ["role:architecture"]
deciders_block = ["role:lead"]

[[steps]]
id = "implementation"
agent = "engineer"
can_clarify = ["architect", "qa"]
deciders = ["carol", "role:lead"]
"#;

    #[test]
    fn no_people_means_no_deciders() {
        let r = record("engineer", "architect", false);
        let w = workflow(FEATURE);
        assert!(People::default()
            .deciders_of(&r, Some(&w), None, 0)
            .is_empty());
    }

    #[test]
    fn the_targets_step_decides_and_a_block_record_narrows() {
        let people = team();
        let w = workflow(FEATURE);
        let warn = record("engineer", "architect", false);
        assert_eq!(
            people.deciders_of(&warn, Some(&w), None, HANDOVER),
            ["alice", "carol"]
        );
        // Blocking is BLOCK by default: deciders_block, whoever is on call for lead.
        let block = record("engineer", "architect", true);
        assert_eq!(
            people.deciders_of(&block, Some(&w), None, HANDOVER),
            ["bob"]
        );
    }

    #[test]
    fn the_requesters_step_decides_when_the_target_runs_none() {
        let people = team();
        let w = workflow(FEATURE);
        let r = record("engineer", "qa", false);
        assert_eq!(
            people.deciders_of(&r, Some(&w), None, HANDOVER - MINUTE),
            ["carol", "alice"]
        );
    }

    #[test]
    fn a_rotation_boundary_gives_different_people() {
        let people = team();
        let w = workflow(FEATURE);
        let r = record("engineer", "architect", true);
        let before = people.deciders_of(&r, Some(&w), None, HANDOVER - MINUTE);
        let after = people.deciders_of(&r, Some(&w), None, HANDOVER + MINUTE);
        assert_eq!(before, ["alice"]);
        assert_eq!(after, ["bob"]);
        // Before the rotation starts, the role is everyone who holds it.
        assert_eq!(people.expand(&["role:lead".into()], 0), ["alice", "bob"]);
    }

    #[test]
    fn defaults_apply_without_a_step_and_fall_back_to_everyone() {
        let people = team();
        let r = record("pm", "ux", false);
        assert_eq!(
            people.deciders_of(&r, None, None, 0),
            ["alice", "bob", "carol"]
        );
        let defaults = vec!["carol".to_owned()];
        assert_eq!(people.deciders_of(&r, None, Some(&defaults), 0), ["carol"]);
        // A list that names nobody defined never leaves a record without a decider.
        let nobody = vec!["role:security".to_owned(), "zed".to_owned()];
        assert_eq!(
            people.deciders_of(&r, None, Some(&nobody), 0),
            ["alice", "bob", "carol"]
        );
    }
}
