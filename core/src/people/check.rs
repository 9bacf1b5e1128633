//! `agentx people check` (docs/protocol.md §37): what `people.toml` can be valid and still
//! get wrong against the rest of the settings — a deciders list naming a role nobody holds or
//! a name nobody has (which falls back to every person, silently widening who decides).

use super::{People, ROLE_PREFIX};
use crate::config::Config;
use crate::workflow::Workflows;

/// Every problem, one line each, in a stable order: `[people] default_deciders`, then each
/// workflow (by name) and step (in file order). Empty: the people cover every deciders list.
pub fn check(people: &People, config: &Config, workflows: &Workflows) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(specs) = &config.default_deciders {
        for spec in specs {
            if let Some(why) = unmet(people, spec) {
                problems.push(format!("[people] default_deciders: {why}"));
            }
        }
    }
    for name in workflows.names() {
        let Some(Ok(workflow)) = workflows.get(name) else {
            continue;
        };
        for step in &workflow.steps {
            for (key, specs) in [
                ("deciders", &step.deciders),
                ("deciders_block", &step.deciders_block),
            ] {
                for spec in specs {
                    if let Some(why) = unmet(people, spec) {
                        problems.push(format!("workflow '{name}' step '{}' {key}: {why}", step.id));
                    }
                }
            }
        }
    }
    problems
}

/// Why `spec` names nobody, if it does.
fn unmet(people: &People, spec: &str) -> Option<String> {
    match spec.strip_prefix(ROLE_PREFIX) {
        Some(role) if people.with_role(role).is_empty() && !people.has_rotation(role) => Some(
            format!("{spec} names a role nobody holds (add it to someone's roles in people.toml)"),
        ),
        Some(_) => None,
        None if people.get(spec).is_none() => {
            Some(format!("'{spec}' is not a person of people.toml"))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_roles_nobody_holds_and_unknown_names() {
        let people =
            People::parse("people.toml", "[people.alice]\nroles = [\"lead\"]\n", &[]).unwrap();
        let mut workflows = Workflows::new();
        workflows.insert_text(
            "feature",
            "[[steps]]\nid = \"design\"\nagent = \"architect\"\ndeciders = [\"role:lead\", \"role:security\"]\ndeciders_block = [\"zed\"]\n",
        );
        workflows.insert_text("broken", "[[steps]\n");
        let config = Config {
            default_deciders: Some(vec!["alice".into(), "role:cto".into()]),
            ..Config::default()
        };
        assert_eq!(
            check(&people, &config, &workflows),
            [
                "[people] default_deciders: role:cto names a role nobody holds (add it to someone's roles in people.toml)",
                "workflow 'feature' step 'design' deciders: role:security names a role nobody holds (add it to someone's roles in people.toml)",
                "workflow 'feature' step 'design' deciders_block: 'zed' is not a person of people.toml",
            ]
        );
        assert!(check(&people, &Config::default(), &Workflows::defaults()).is_empty());
    }
}
