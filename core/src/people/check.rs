//! `agentx people check` (docs/protocol.md §37): what `people.toml` can be valid and still
//! get wrong against the rest of the settings — a deciders list naming a role nobody holds or
//! a name nobody has (which falls back to every person, silently widening who decides), a
//! rotation that leaves a role with nobody on call from `now` until it starts, and a quorum
//! larger than the people its deciders can name.

use super::{People, ROLE_PREFIX};
use crate::config::Config;
use crate::workflow::Workflows;

/// Every problem, one line each, in a stable order: `[people] default_deciders`, then each
/// workflow (by name) and step (in file order). Empty: the people cover every deciders list.
pub fn check(people: &People, config: &Config, workflows: &Workflows, now_ms: i64) -> Vec<String> {
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
            if let Some(why) = short_quorum(people, step, config) {
                problems.push(format!("workflow '{name}' step '{}': {why}", step.id));
            }
        }
    }
    problems.extend(gaps(people, now_ms));
    problems
}

/// A quorum no deciders list of the step can meet: it asks for more people than the list
/// can ever name (a role counts everyone who holds it or takes its shifts).
fn short_quorum(people: &People, step: &crate::workflow::Step, config: &Config) -> Option<String> {
    let q = step.quorum_block.into_iter().chain(step.quorum).max()?;
    let specs = [&step.deciders_block, &step.deciders]
        .into_iter()
        .find(|d| !d.is_empty())
        .or(config.default_deciders.as_ref())?;
    let mut names: Vec<String> = Vec::new();
    for spec in specs {
        match spec.strip_prefix(ROLE_PREFIX) {
            Some(role) => {
                names.extend(people.with_role(role));
                names.extend(
                    people
                        .rotations
                        .iter()
                        .filter(|r| r.role == role)
                        .flat_map(|r| r.people.clone()),
                );
            }
            None if people.get(spec).is_some() => names.push(spec.clone()),
            None => {}
        }
    }
    crate::stable_sort::sort_dedup(&mut names);
    // Assigned by a rotation, a role is one person at a time.
    let on_call_only = specs.iter().all(|s| {
        s.strip_prefix(ROLE_PREFIX)
            .is_some_and(|r| people.has_rotation(r))
    });
    let most = if on_call_only {
        specs.len()
    } else {
        names.len()
    };
    (q as usize > most).then(|| {
        format!(
            "quorum {q} asks for more deciders than {} can name ({most}): it is capped at {most} when a record escalates",
            specs.join(", ")
        )
    })
}

/// Each role whose rotations name nobody at `now_ms` and which nobody holds otherwise: until
/// its first rotation starts, `role:<role>` falls back to every person.
fn gaps(people: &People, now_ms: i64) -> Vec<String> {
    let mut roles: Vec<&str> = people.rotations.iter().map(|r| r.role.as_str()).collect();
    crate::stable_sort::sort_dedup(&mut roles);
    roles
        .into_iter()
        .filter(|role| people.on_call(role, now_ms).is_none() && people.with_role(role).is_empty())
        .map(|role| {
            let start = people
                .rotations
                .iter()
                .filter(|r| r.role == role && r.start_ms > now_ms)
                .map(|r| r.start_ms)
                .min();
            let when = start.map_or_else(
                || String::from("at any time"),
                |t| format!("before {}", crate::time::format_ms(t)),
            );
            format!(
                "role:{role} has nobody on call {when} (its rotations have not started): it falls back to every person; start the rotation earlier or give someone the role"
            )
        })
        .collect()
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
            check(&people, &config, &workflows, 0),
            [
                "[people] default_deciders: role:cto names a role nobody holds (add it to someone's roles in people.toml)",
                "workflow 'feature' step 'design' deciders: role:security names a role nobody holds (add it to someone's roles in people.toml)",
                "workflow 'feature' step 'design' deciders_block: 'zed' is not a person of people.toml",
            ]
        );
        assert!(check(&people, &Config::default(), &Workflows::defaults(), 0).is_empty());
    }

    #[test]
    fn reports_a_rotation_gap_and_a_quorum_nobody_can_meet() {
        let text = "[people.alice]\n[people.bob]\n[[rotations]]\nrole = \"night\"\npeople = [\"alice\", \"bob\"]\nevery = \"1d\"\nstart = \"2026-12-10T09:00:00Z\"\n";
        let people = People::parse("people.toml", text, &[]).unwrap();
        let mut workflows = Workflows::new();
        workflows.insert_text(
            "feature",
            "[[steps]]\nid = \"design\"\nagent = \"architect\"\ndeciders = [\"role:night\"]\nquorum = 2\n",
        );
        let before = crate::time::parse_ms("2026-12-01T00:00:00.000Z").unwrap();
        let after = crate::time::parse_ms("2026-12-11T00:00:00.000Z").unwrap();
        let found = check(&people, &Config::default(), &workflows, before);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("workflow 'feature' step 'design': quorum 2 asks for more deciders than role:night can name (1)"), "{found:?}");
        assert!(
            found[1].starts_with("role:night has nobody on call before 2026-12-10T09:00:00.000Z"),
            "{found:?}"
        );
        assert_eq!(
            check(&people, &Config::default(), &workflows, after).len(),
            1
        );
    }
}
