//! Who may ask whom (docs/protocol.md §6.4, steps 2–7, in this order; the first failure wins), and the
//! preview a request form shows before asking.

mod preview;

pub use preview::{preview, Governing, Preview, Question};

use crate::config::Config;
use crate::error::ClarifyError;
use crate::names::is_reserved;
use crate::workflow::Workflows;

/// What the governing step grants a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub workflow: String,
    pub step: String,
    pub max_rounds: u32,
    pub sla_minutes: u32,
}

/// Default round limits when the governing step sets none.
pub const DEFAULT_MAX_ROUNDS_BLOCKING: u32 = 5;
pub const DEFAULT_MAX_ROUNDS_NON_BLOCKING: u32 = 6;

/// The round limit of a record whose governing step sets none (docs/protocol.md §4, §6.1).
pub fn default_max_rounds(blocking: bool) -> u32 {
    if blocking {
        DEFAULT_MAX_ROUNDS_BLOCKING
    } else {
        DEFAULT_MAX_ROUNDS_NON_BLOCKING
    }
}

/// The workflow a request runs under (docs/protocol.md §6.4 step 3): the one it names, else the one its
/// issue's ledger records, else the default.
pub fn workflow_name<'a>(
    explicit: Option<&'a str>,
    ledger: Option<&'a str>,
    config: &'a Config,
) -> &'a str {
    explicit
        .or(ledger)
        .unwrap_or(config.default_workflow.as_str())
}

/// The question a scope check answers.
pub struct Ask<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub blocking: bool,
    /// `--workflow`, when given.
    pub workflow: Option<&'a str>,
    /// `--step`, when given.
    pub step: Option<&'a str>,
    /// The workflow recorded in the ledger by its first request.
    pub ledger_workflow: Option<&'a str>,
}

/// Steps 2–7 of the scope check; input validation (step 1) has already passed.
pub fn check(ask: &Ask<'_>, config: &Config, workflows: &Workflows) -> Result<Grant, ClarifyError> {
    // 2. Nobody asks itself; reserved actors are never asked.
    if ask.from == ask.to {
        return Err(ClarifyError::SelfClarification {
            agent: ask.from.to_owned(),
        });
    }
    if is_reserved(ask.to) {
        return Err(ClarifyError::InvalidAgent {
            name: ask.to.to_owned(),
            why: String::from("reserved actors (human, monitor, agent-x) cannot be asked"),
        });
    }
    // 3. The workflow: explicit, else the issue's, else the default.
    let name = workflow_name(ask.workflow, ask.ledger_workflow, config);
    let workflow = workflows
        .get(name)
        .ok_or_else(|| ClarifyError::InvalidWorkflow {
            name: name.to_owned(),
            why: if workflows.names().next().is_none() {
                String::from("does not exist: no workflows are defined; run `agentx init` to create the defaults")
            } else {
                format!("does not exist; available: [{}]", workflows.names().collect::<Vec<_>>().join(", "))
            },
        })??;
    // 4. Candidate steps: those run by the requester, narrowed by --step.
    let candidates: Vec<_> = workflow
        .steps
        .iter()
        .filter(|s| s.agent == ask.from && ask.step.is_none_or(|id| s.id == id))
        .collect();
    if candidates.is_empty() {
        let message = match ask.step {
            Some(step) => format!(
                "agent '{}' has no step '{step}' in workflow '{name}'",
                ask.from
            ),
            None => format!(
                "agent '{}' has no step in workflow '{name}', so it cannot ask anyone",
                ask.from
            ),
        };
        return Err(ClarifyError::ScopeViolation { message });
    }
    // 5. The target must be allowed by at least one candidate; 6. the first such step governs.
    let Some(governing) = candidates
        .iter()
        .find(|s| s.can_clarify.iter().any(|a| a == ask.to))
    else {
        let mut allowed: Vec<&str> = candidates
            .iter()
            .flat_map(|s| s.can_clarify.iter().map(String::as_str))
            .collect();
        crate::stable_sort::sort_dedup(&mut allowed);
        return Err(ClarifyError::ScopeViolation {
            message: format!(
                "agent '{}' cannot clarify with '{}'; allowed: [{}]",
                ask.from,
                ask.to,
                allowed.join(", ")
            ),
        });
    };
    // 7. Blocking only where the step allows it.
    if ask.blocking && !governing.clarify_blocking_allowed {
        return Err(ClarifyError::BlockingNotAllowed {
            workflow: name.to_owned(),
            step: governing.id.clone(),
        });
    }
    Ok(Grant {
        workflow: name.to_owned(),
        step: governing.id.clone(),
        max_rounds: governing
            .clarify_max_rounds
            .unwrap_or_else(|| default_max_rounds(ask.blocking)),
        sla_minutes: governing.clarify_sla_minutes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask<'a>(from: &'a str, to: &'a str) -> Ask<'a> {
        Ask {
            from,
            to,
            blocking: true,
            workflow: None,
            step: None,
            ledger_workflow: None,
        }
    }

    #[test]
    fn default_feature_workflow() {
        let (c, w) = (Config::default(), Workflows::defaults());
        let g = check(&ask("engineer", "architect"), &c, &w).unwrap();
        assert_eq!(
            (
                g.workflow.as_str(),
                g.step.as_str(),
                g.max_rounds,
                g.sla_minutes
            ),
            ("feature", "implement", 3, 60)
        );
        let e = check(&ask("engineer", "reviewer"), &c, &w).unwrap_err();
        assert_eq!(e.to_string(), "agent 'engineer' cannot clarify with 'reviewer'; allowed: [architect, product-manager]");
        assert_eq!(
            check(&ask("reviewer", "architect"), &c, &w)
                .unwrap_err()
                .code(),
            "SCOPE_VIOLATION"
        );
    }

    #[test]
    fn order_of_checks() {
        let (c, w) = (Config::default(), Workflows::defaults());
        assert_eq!(
            check(&ask("reviewer", "reviewer"), &c, &w)
                .unwrap_err()
                .code(),
            "SELF_CLARIFICATION"
        );
        assert_eq!(
            check(&ask("reviewer", "human"), &c, &w).unwrap_err().code(),
            "INVALID_AGENT"
        );
        let mut a = ask("reviewer", "architect");
        a.workflow = Some("epic");
        let e = check(&a, &c, &w).unwrap_err();
        assert_eq!(
            e.to_string(),
            "workflow 'epic' does not exist; available: [bug, feature, story]"
        );
    }

    #[test]
    fn blocking_and_defaults() {
        let (c, w) = (Config::default(), Workflows::defaults());
        let mut a = ask("engineer", "architect");
        a.workflow = Some("bug");
        assert_eq!(
            check(&a, &c, &w).unwrap_err().code(),
            "BLOCKING_NOT_ALLOWED"
        );
        a.blocking = false;
        assert_eq!(check(&a, &c, &w).unwrap().max_rounds, 2);
        let mut custom = Workflows::new();
        custom.insert_text(
            "feature",
            "[[steps]]\nid = \"s\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n",
        );
        assert_eq!(
            check(&ask("engineer", "architect"), &c, &custom)
                .unwrap()
                .max_rounds,
            5
        );
        let mut nb = ask("engineer", "architect");
        nb.blocking = false;
        assert_eq!(check(&nb, &c, &custom).unwrap().max_rounds, 6);
    }

    #[test]
    fn ledger_workflow_and_step_narrowing() {
        let (c, w) = (Config::default(), Workflows::defaults());
        let mut a = ask("engineer", "architect");
        a.ledger_workflow = Some("bug");
        a.blocking = false;
        assert_eq!(check(&a, &c, &w).unwrap().workflow, "bug");
        let mut s = ask("engineer", "architect");
        s.step = Some("architecture");
        assert_eq!(check(&s, &c, &w).unwrap_err().code(), "SCOPE_VIOLATION");
    }
}
