//! Only a decider decides (docs/protocol.md §37): a person's resolution, abandonment or
//! reopening of an escalated record that names its deciders (`assigned`) must come from one
//! of them, or from whoever holds it (a claim, a handoff). A record escalated without
//! people, or before them, is anyone's as before.

use super::assign::assigned;
use crate::error::ClarifyError;
use crate::ledger::{Record, Status};

/// `NOT_ALLOWED` unless `person` may take a person's decision (`op`) on `record` now:
/// the record is not escalated, its latest escalation names no one, or `person` is among
/// those it names. `person` is `None` when the shell could not say who decides (the CLI
/// without `--as`): such a decision is refused once the record names its deciders.
pub fn check_decider(record: &Record, person: Option<&str>, op: &str) -> Result<(), ClarifyError> {
    if record.current_status() != Status::Escalated {
        return Ok(());
    }
    let Some(mut allowed) = assigned(record) else {
        return Ok(());
    };
    // Whoever holds it — a claimant, or whom it was handed to — decides it too.
    if let Some(h) = super::claim::holder_name(record) {
        if !allowed.contains(&h) {
            allowed.push(h);
        }
    }
    if person.is_some_and(|p| allowed.iter().any(|a| a == p)) {
        return Ok(());
    }
    Err(ClarifyError::NotAllowed {
        actor: person.map(str::to_owned),
        op: op.to_owned(),
        id: record.id.clone(),
        allowed,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::ops::{act, act_by, request, Action, Attribution};
    use crate::people::{People, PeopleSettings};
    use crate::signing::Signers;
    use crate::testkit::{plain, MIN, T0};
    use crate::workflow::Workflows;
    use crate::Ledger;

    const TEAM: &str = "[people.alice]\nroles = [\"architecture\"]\n[people.bob]\n";
    const FEATURE: &str = "[[steps]]\nid = \"architecture\"\nagent = \"architect\"\ndeciders = [\"role:architecture\"]\n[[steps]]\nid = \"implementation\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n";

    fn escalated(config: &Config) -> Ledger {
        let mut workflows = Workflows::new();
        workflows.insert_text("feature", FEATURE);
        let req = plain("engineer", "architect", "Cache", "Redis?");
        let ledger = request(None, &req, config, &workflows, T0).unwrap().ledger;
        let escalate = Action::Escalate {
            from: None,
            message: None,
        };
        act(&ledger, "CLR-42-001", &escalate, config, T0 + MIN)
            .unwrap()
            .ledger
    }

    fn people_config() -> Config {
        let mut workflows = Workflows::new();
        workflows.insert_text("feature", FEATURE);
        let team = People::parse("people.toml", TEAM, &[]).unwrap();
        Config {
            people: PeopleSettings::shared(team, &workflows),
            ..Config::default()
        }
    }

    fn resolve_as(config: &Config, ledger: &Ledger, person: Option<&str>) -> Result<(), String> {
        let action = Action::Resolve {
            from: None,
            message: Some("Redis.".into()),
        };
        let by = person.map(|p| Attribution {
            by: p.to_owned(),
            via: "web".into(),
            reference: None,
        });
        act_by(
            ledger,
            "CLR-42-001",
            &action,
            config,
            T0 + 2 * MIN,
            &Signers::default(),
            by.as_ref(),
        )
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", e.code()))
    }

    #[test]
    fn only_an_assigned_person_decides() {
        let config = people_config();
        let ledger = escalated(&config);
        assert_eq!(resolve_as(&config, &ledger, Some("alice")), Ok(()));
        assert_eq!(
            resolve_as(&config, &ledger, Some("bob")),
            Err("NOT_ALLOWED: 'bob' cannot resolve CLR-42-001: it is assigned to alice, and only they may decide it".into())
        );
        let nobody = resolve_as(&config, &ledger, None).unwrap_err();
        assert!(
            nobody.starts_with("NOT_ALLOWED: a person who did not say who they are cannot resolve"),
            "{nobody}"
        );
        let abandon = Action::Abandon {
            from: Some("human".into()),
            message: None,
        };
        let e = act(&ledger, "CLR-42-001", &abandon, &config, T0 + 2 * MIN).unwrap_err();
        assert_eq!(e.code(), "NOT_ALLOWED");
    }

    #[test]
    fn a_record_escalated_without_people_is_anyones() {
        let ledger = escalated(&Config::default());
        // People defined later do not reach back: nobody was assigned.
        assert_eq!(resolve_as(&people_config(), &ledger, Some("bob")), Ok(()));
        assert_eq!(resolve_as(&Config::default(), &ledger, None), Ok(()));
    }
}
