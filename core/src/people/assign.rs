//! Assignment at escalation (docs/protocol.md §37): the escalation entry names the people
//! who decide the record at that instant (`assigned`), hashed and signed with the entry, so
//! the audit says whose decision it was to make — and a later change of `people.toml` or a
//! rotation's handover does not change who was asked.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::People;
use crate::config::Config;
use crate::ledger::Record;
use crate::sorted_map::SortedMap;
use crate::workflow::{Workflow, Workflows};

/// The people a shell hands the core with the settings (`Config::people`), with the
/// workflows their deciders are read from. Shared: a config is cloned for every command.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeopleSettings {
    pub people: People,
    /// Every workflow that parses, by name (one that does not is a step with no deciders:
    /// the requests that use it fail on their own).
    pub workflows: SortedMap<String, Workflow>,
}

impl PeopleSettings {
    /// `None` when no person is defined: the settings then carry nothing and every entry is
    /// written as before people existed.
    pub fn shared(people: People, workflows: &Workflows) -> Option<Arc<PeopleSettings>> {
        if !people.is_defined() {
            return None;
        }
        let mut parsed = SortedMap::new();
        for name in workflows.names() {
            if let Some(Ok(w)) = workflows.get(name) {
                parsed.insert(name.to_owned(), w);
            }
        }
        Some(Arc::new(PeopleSettings {
            people,
            workflows: parsed,
        }))
    }

    /// Who decides `record` (of a ledger whose workflow is `ledger_workflow`) at `now_ms`,
    /// under `config`'s default workflow and `[people] default_deciders`.
    pub fn deciders(
        &self,
        config: &Config,
        ledger_workflow: Option<&str>,
        record: &Record,
        now_ms: i64,
    ) -> Vec<String> {
        let name = ledger_workflow.unwrap_or(&config.default_workflow);
        self.deciders_in(name, config.default_deciders.as_deref(), record, now_ms)
    }

    /// [`PeopleSettings::deciders`] of a record of workflow `name`.
    fn deciders_in(
        &self,
        name: &str,
        default_deciders: Option<&[String]>,
        record: &Record,
        now_ms: i64,
    ) -> Vec<String> {
        self.people
            .deciders_of(record, self.workflows.get(name), default_deciders, now_ms)
    }
}

/// What assigns an escalation: the settings' people with the two settings of `config` that
/// choose among deciders. Owned, for a decision taken before its record is built (a record
/// created escalated, `ops::request_escalated`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Assigner {
    settings: Arc<PeopleSettings>,
    default_workflow: String,
    default_deciders: Option<Vec<String>>,
}

impl Assigner {
    /// `None` when `config` carries no people.
    pub(crate) fn of(config: &Config) -> Option<Assigner> {
        Some(Assigner {
            settings: Arc::clone(config.people.as_ref()?),
            default_workflow: config.default_workflow.clone(),
            default_deciders: config.default_deciders.clone(),
        })
    }

    /// `{"assigned": [...]}` for an escalation of `record` at `now_ms`.
    pub(crate) fn fields(
        &self,
        ledger_workflow: Option<&str>,
        record: &Record,
        now_ms: i64,
    ) -> Map<String, Value> {
        let name = ledger_workflow.unwrap_or(&self.default_workflow);
        let assigned =
            self.settings
                .deciders_in(name, self.default_deciders.as_deref(), record, now_ms);
        let mut fields = Map::new();
        // How many must agree, never more than there are to agree (docs/protocol.md §37).
        let quorum = self
            .settings
            .workflows
            .get(name)
            .and_then(|w| super::governing_step(w, record))
            .and_then(|s| match record.severity() {
                crate::ledger::Severity::Block => s.quorum_block.or(s.quorum),
                crate::ledger::Severity::Warn => s.quorum,
            })
            .map(|q| q.min(u32::try_from(assigned.len()).unwrap_or(u32::MAX)))
            .filter(|q| *q > 1);
        fields.insert(
            String::from(ASSIGNED),
            Value::Array(assigned.into_iter().map(Value::String).collect()),
        );
        if let Some(q) = quorum {
            fields.insert(super::quorum::QUORUM.into(), q.into());
        }
        fields
    }
}

/// The fields an escalation entry of `record` carries besides the protocol's: `assigned`
/// when the settings define people, nothing otherwise (ledgers stay byte-identical).
pub(crate) fn escalation_fields(
    config: &Config,
    ledger_workflow: Option<&str>,
    record: &Record,
    now_ms: i64,
) -> Map<String, Value> {
    Assigner::of(config).map_or_else(Map::new, |a| a.fields(ledger_workflow, record, now_ms))
}

/// The field of an escalation entry that names its deciders.
pub const ASSIGNED: &str = "assigned";

/// The people an escalated `record` is assigned to: the `assigned` of its latest escalation
/// escalation, lapse or assign entry (a lapsed claim assigns it again, a ladder's next step
/// adds people), `None` when that entry has none
/// (written without people, or before them).
pub fn assigned(record: &Record) -> Option<Vec<String>> {
    use crate::ledger::EntryKind;
    let escalation = record.thread.iter().rev().find(|e| {
        matches!(
            e.kind,
            EntryKind::Escalation | EntryKind::Lapse | EntryKind::Assign
        )
    })?;
    let Value::Array(items) = escalation.extra.get(ASSIGNED)? else {
        return None;
    };
    Some(
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Statuses;
    use crate::monitor::monitor_ledger;
    use crate::ops::{act, request, request_escalated, Action};
    use crate::testkit::{plain, MIN, T0};

    const TEAM: &str =
        "[people.alice]\nroles = [\"architecture\"]\n[people.bob]\nroles = [\"lead\"]\n";
    const FEATURE: &str = "[[steps]]\nid = \"architecture\"\nagent = \"architect\"\ndeciders = [\"role:architecture\"]\n[[steps]]\nid = \"implementation\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n";

    fn setup(people: bool) -> (Config, Workflows) {
        let mut workflows = Workflows::new();
        workflows.insert_text("feature", FEATURE);
        let mut config = Config::default();
        if people {
            let team = People::parse("people.toml", TEAM, &[]).unwrap();
            config.people = PeopleSettings::shared(team, &workflows);
        }
        (config, workflows)
    }

    fn asked(config: &Config, workflows: &Workflows) -> crate::Ledger {
        let req = plain("engineer", "architect", "Cache", "Redis?");
        request(None, &req, config, workflows, T0).unwrap().ledger
    }

    fn escalate(config: &Config, ledger: &crate::Ledger) -> crate::Ledger {
        let action = Action::Escalate {
            from: None,
            message: Some("needs a person".into()),
        };
        act(ledger, "CLR-42-001", &action, config, T0 + MIN)
            .unwrap()
            .ledger
    }

    #[test]
    fn an_escalation_names_its_deciders_and_verifies() {
        let (config, workflows) = setup(true);
        let ledger = escalate(&config, &asked(&config, &workflows));
        let record = &ledger.clarifications[0];
        let entry = record.thread.last().unwrap();
        assert_eq!(entry.extra["assigned"], serde_json::json!(["alice"]));
        assert_eq!(assigned(record), Some(vec!["alice".to_owned()]));
        let found = crate::verify::check_ledger("issue-42.json", &ledger);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn without_people_nothing_changes() {
        let (with, workflows) = setup(true);
        let (without, _) = setup(false);
        let before = escalate(&without, &asked(&without, &workflows));
        let entry = before.clarifications[0].thread.last().unwrap();
        assert!(entry.extra.get("assigned").is_none());
        assert_eq!(assigned(&before.clarifications[0]), None);
        // The same write without people is byte-identical to one from before people.
        let plain = escalate(&Config::default(), &asked(&Config::default(), &workflows));
        assert_eq!(before.to_pretty_json(), plain.to_pretty_json());
        assert_ne!(
            before.to_pretty_json(),
            escalate(&with, &asked(&with, &workflows)).to_pretty_json()
        );
    }

    #[test]
    fn the_monitor_and_a_record_created_escalated_assign_too() {
        let (config, workflows) = setup(true);
        let ledger = asked(&config, &workflows);
        // Stale past its SLA with no retry left: the monitor escalates.
        let config = Config {
            max_retries: 0,
            ..config
        };
        let out = monitor_ledger(ledger, &Statuses::default(), &config, T0 + 120 * MIN);
        let entry = out.ledger.clarifications[0].thread.last().unwrap();
        assert_eq!(
            entry.kind,
            crate::ledger::EntryKind::Escalation,
            "{entry:?}"
        );
        assert_eq!(entry.extra["assigned"], serde_json::json!(["alice"]));

        let req = plain("engineer", "human", "Stop", "Stopped work");
        let applied =
            request_escalated(None, &req, "stopped", &config, T0, &Default::default()).unwrap();
        let entry = applied.ledger.clarifications[0].thread.last().unwrap();
        // No step is the target's or governs the ask: every person decides.
        assert_eq!(entry.extra["assigned"], serde_json::json!(["alice", "bob"]));
    }
}
