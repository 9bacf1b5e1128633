//! People by name (docs/protocol.md §37): who the persons of a workspace are (`people.toml`),
//! who is on call for a role at an instant (`[[rotations]]`), and who decides an escalated
//! record (`deciders` of its step, else `[people] default_deciders`, else everyone).
//!
//! Pure like the rest of the core: the file's text comes in, `now` is an argument, the answer
//! is data. The same instant gives the same person on every surface.

mod approval;
mod assign;
mod check;
mod claim;
mod decide;
mod deciders;
mod file;
mod ladder;
mod quorum;
mod rotation;
mod view;

pub use approval::approve_decision;
pub use assign::{assigned, PeopleSettings, ASSIGNED};
pub(crate) use assign::{escalation_fields, Assigner};
pub use check::check;
pub(crate) use claim::lapse;
pub use claim::{
    holder, lapse_due, take, Holder, PersonCall, Taking, DEFAULT_CLAIM_TIMEOUT_MINUTES, HANDED_TO,
    UNTIL,
};
pub use decide::check_decider;
pub use deciders::governing_step;
pub use ladder::{
    assign_more, due as ladder_due, next_step as ladder_next, Due as LadderDue, ADDED, LADDER,
};
pub(crate) use quorum::{approve, Approval};
pub use quorum::{proposals, quorum_of, summary, Proposal, APPROVED_BY, QUORUM, SECONDS};
pub use rotation::{parse_every, Override, Rotation};
pub use view::view;

use crate::sorted_map::SortedMap;

/// The file people are defined in, as errors name it.
pub const PEOPLE_FILE: &str = ".agentx/people.toml";

/// The prefix of a decider that names a role (`role:architecture`) rather than a person.
pub const ROLE_PREFIX: &str = "role:";

/// One person of `[people.<name>]`: the roles they hold and how to reach them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Person {
    /// Role names (`^[a-z0-9][a-z0-9_-]{0,63}$`), as written.
    pub roles: Vec<String>,
    /// Their GitHub login, for GitHub Mode's `/resolve`.
    pub github: Option<String>,
    /// Contact hooks the notification sinks can address.
    pub slack: Option<String>,
    pub email: Option<String>,
    pub ntfy: Option<String>,
}

impl Person {
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }
}

/// The people of a workspace and their rotations. An empty value is "no people defined":
/// everything behaves as it did before people existed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct People {
    /// By name, so listings and "every person" come out in one order everywhere.
    pub persons: SortedMap<String, Person>,
    /// In file order: the first rotation of a role that has someone on call wins.
    pub rotations: Vec<Rotation>,
}

/// Whether a person's token (or sign-in link) may be made for `name` (docs/protocol.md §37):
/// once people are defined, only for one of them — a token for anyone else would decide as a
/// name no deciders list can hold. `None` when it may, else why not.
pub fn token_refusal(people: &People, name: &str) -> Option<String> {
    if !people.is_defined() || people.get(name).is_some() {
        return None;
    }
    Some(format!(
        "'{name}' is not a person of .agentx/people.toml (people: {}); add [people.{name}] there first",
        people.names().join(", ")
    ))
}

impl People {
    /// Whether any person is defined (no `people.toml`, or one without `[people.*]`: none).
    pub fn is_defined(&self) -> bool {
        !self.persons.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Person> {
        self.persons.get(name)
    }

    /// Every person's name, in name order.
    pub fn names(&self) -> Vec<String> {
        self.persons.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Every person holding `role`, in name order.
    pub fn with_role(&self, role: &str) -> Vec<String> {
        self.persons
            .iter()
            .filter(|(_, p)| p.has_role(role))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Who is on call for `role` at `now_ms`: the first rotation of that role that names
    /// someone then (an override first, else the schedule). `None`: no rotation of the role
    /// has anyone at that instant (none exists, or every one starts later).
    pub fn on_call(&self, role: &str, now_ms: i64) -> Option<&str> {
        self.rotations
            .iter()
            .filter(|r| r.role == role)
            .find_map(|r| r.on_call(now_ms))
    }

    /// The person whose `github = "<login>"` is `login` (GitHub logins are case-insensitive).
    /// The person whose `slack` is this Slack user id (`U…`; ids are compared exactly).
    pub fn by_slack(&self, user: &str) -> Option<&str> {
        self.persons
            .iter()
            .find(|(_, p)| p.slack.as_deref() == Some(user))
            .map(|(n, _)| n.as_str())
    }

    pub fn by_github(&self, login: &str) -> Option<&str> {
        self.persons
            .iter()
            .find(|(_, p)| {
                p.github
                    .as_deref()
                    .is_some_and(|g| g.eq_ignore_ascii_case(login))
            })
            .map(|(n, _)| n.as_str())
    }

    /// Whether a rotation exists for `role` (then `role:<role>` means whoever is on call).
    pub fn has_rotation(&self, role: &str) -> bool {
        self.rotations.iter().any(|r| r.role == role)
    }
}

/// Who a GitHub commenter is (docs/protocol.md §37): without people, their login (lowercased,
/// as before); with people, the person whose `github` is that login, and a login no person
/// claims is refused — taken as a name, a login `alice` would decide as the person alice.
pub fn github_person(people: Option<&People>, login: &str) -> Result<String, String> {
    match people.filter(|p| p.is_defined()) {
        None => crate::github::login_name(login),
        Some(p) => p.by_github(login).map(str::to_owned).ok_or_else(|| {
            format!(
                "the GitHub login '{}' is no person of .agentx/people.toml: add github = \"{}\" to their [people.<name>]",
                crate::error::shown(login),
                crate::error::shown(login)
            )
        }),
    }
}

impl People {
    /// The people of a workspace from its settings: `bytes` of `people.toml` (`None`: no
    /// file, no people), checked against the agents `config` and `workflows` name.
    pub fn from_settings(
        file: &str,
        bytes: Option<&[u8]>,
        config: &crate::Config,
        workflows: &crate::Workflows,
    ) -> Result<People, crate::ClarifyError> {
        let Some(bytes) = bytes else {
            return Ok(People::default());
        };
        let agents = workspace_agents(config, workflows);
        let agents: Vec<&str> = agents.iter().map(String::as_str).collect();
        People::parse_bytes(file, bytes, &agents)
    }
}

/// Every agent name a workspace's settings know — `[clarify] priority`, the `[agents.*]`
/// runner tables, the agents and targets of every workflow step (a workflow that does not
/// parse names none) — in name order: no person may take one.
pub fn workspace_agents(config: &crate::Config, workflows: &crate::Workflows) -> Vec<String> {
    let mut names: Vec<String> = config.priority.clone();
    names.extend(config.agents.agents.iter().map(|(n, _)| n.clone()));
    for name in workflows.names() {
        if let Some(Ok(w)) = workflows.get(name) {
            for step in w.steps {
                names.push(step.agent);
                names.extend(step.can_clarify);
            }
        }
    }
    crate::stable_sort::sort_dedup(&mut names);
    names
}

/// Role names: `^[a-z0-9][a-z0-9_-]{0,63}$` (the workflow-name rule: roles are often named
/// after steps, `architecture`, `on_call`).
pub fn is_role_name(name: &str) -> bool {
    crate::names::is_workflow_name(name)
}

/// Why `name` cannot be a person's name, if it cannot: the agent-name rule, and never a
/// reserved actor or one of the workspace's agents (an entry's `from` must say which it is).
pub fn person_name_refusal(name: &str, agents: &[&str]) -> Option<String> {
    if let Err(e) = crate::names::check_agent(name) {
        return Some(match e {
            crate::ClarifyError::InvalidAgent { why, .. } => {
                format!(
                    "person name '{}' is invalid: {why}",
                    crate::error::shown(name)
                )
            }
            other => other.to_string(),
        });
    }
    if crate::names::is_reserved(name) {
        return Some(format!(
            "'{name}' is a reserved actor (human, monitor, agent-x) and cannot be a person"
        ));
    }
    if agents.contains(&name) {
        return Some(format!(
            "'{name}' is an agent of this workspace and cannot also be a person"
        ));
    }
    None
}

/// Whether `spec` is a decider as `deciders` lists them: `role:<role>` or a person's name.
pub fn is_decider_spec(spec: &str) -> bool {
    match spec.strip_prefix(ROLE_PREFIX) {
        Some(role) => is_role_name(role),
        None => crate::names::check_agent(spec).is_ok(),
    }
}

/// A `deciders` array of a settings file (a workflow step, `[people] default_deciders`),
/// each item checked where it stands.
pub(crate) fn read_deciders(
    src: &crate::toml_read::Source<'_>,
    key: &str,
    v: &crate::toml_read::Value<'_>,
) -> Result<Vec<String>, crate::ClarifyError> {
    src.strings(
        key,
        v,
        (
            "deciders",
            "person names or role:<role>, e.g. \"alice\" or \"role:lead\"",
        ),
        is_decider_spec,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn person_names_follow_the_agent_rule_and_refuse_actors_and_agents() {
        assert_eq!(person_name_refusal("alice", &["engineer"]), None);
        for reserved in ["human", "monitor", "agent-x"] {
            let why = person_name_refusal(reserved, &[]).unwrap();
            assert!(why.contains("reserved actor"), "{why}");
        }
        let why = person_name_refusal("engineer", &["engineer"]).unwrap();
        assert!(why.contains("is an agent"), "{why}");
        let why = person_name_refusal("Alice", &[]).unwrap();
        assert!(why.contains("only lowercase"), "{why}");
    }

    #[test]
    fn the_workspaces_agents_cannot_be_people() {
        let config = crate::Config::default();
        let workflows = crate::Workflows::defaults();
        let agents = workspace_agents(&config, &workflows);
        assert!(agents.iter().any(|a| a == "architect"), "{agents:?}");
        let e = People::from_settings(
            "people.toml",
            Some(b"[people.architect]\n"),
            &config,
            &workflows,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("is an agent of this workspace"),
            "{e}"
        );
        let none = People::from_settings("people.toml", None, &config, &workflows).unwrap();
        assert!(!none.is_defined());
    }

    #[test]
    fn decider_specs() {
        for ok in ["alice", "role:architecture", "role:on_call"] {
            assert!(is_decider_spec(ok), "{ok}");
        }
        for bad in ["", "role:", "role:Lead", "Alice", "team:x", "role:-x"] {
            assert!(!is_decider_spec(bad), "{bad}");
        }
    }
}
