//! The scope preview (docs/protocol.md §13): for a requester, what a request would run under and whom it
//! may ask, so a form offers only what scope allows and shows the limits before asking. Built
//! from the same steps as [`super::check`], whose verdict it carries, so the two never differ.

use serde::Serialize;

use super::{check, default_max_rounds, workflow_name, Ask};
use crate::config::Config;
use crate::error::ClarifyError;
use crate::workflow::Workflows;

/// A request's scope fields as a form or a command line gives them: any may be empty (not
/// chosen yet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Question {
    pub from: String,
    pub to: String,
    pub blocking: bool,
    pub workflow: Option<String>,
    pub step: Option<String>,
}

impl Question {
    /// The scope check's question, on an issue whose ledger records `ledger_workflow`.
    pub fn ask<'a>(&'a self, ledger_workflow: Option<&'a str>) -> Ask<'a> {
        Ask {
            from: &self.from,
            to: &self.to,
            blocking: self.blocking,
            workflow: self.workflow.as_deref().filter(|w| !w.is_empty()),
            step: self.step.as_deref().filter(|s| !s.is_empty()),
            ledger_workflow,
        }
    }
}

/// What the governing step grants (or would, but for `blocking`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Governing {
    pub step: String,
    pub max_rounds: u32,
    pub sla_minutes: u32,
    pub blocking_allowed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The workflow the request would run under.
    pub workflow: String,
    /// Every workflow there is.
    pub workflows: Vec<String>,
    /// Agents that run a step of the workflow (who may ask at all), in file order.
    pub requesters: Vec<String>,
    /// The requester's steps, in file order.
    pub steps: Vec<String>,
    /// Whom the requester may ask from those steps (narrowed by `step`), sorted.
    pub targets: Vec<String>,
    /// The governing step for this requester and target, if one allows the target.
    pub governing: Option<Governing>,
    /// The refusal a request with exactly these fields would get (`{code, message}`), if any.
    pub refusal: Option<serde_json::Value>,
}

/// The preview for `ask`; `from` and `to` may be empty (not chosen yet), and then the
/// verdict needs them and is left out.
pub fn preview(ask: &Ask<'_>, config: &Config, workflows: &Workflows) -> Preview {
    let name = workflow_name(ask.workflow, ask.ledger_workflow, config);
    let parsed = workflows.get(name);
    let steps = match &parsed {
        Some(Ok(w)) => w.steps.as_slice(),
        _ => &[],
    };
    let mut requesters: Vec<String> = Vec::new();
    for s in steps {
        if !requesters.contains(&s.agent) {
            requesters.push(s.agent.clone());
        }
    }
    let mine: Vec<_> = steps.iter().filter(|s| s.agent == ask.from).collect();
    let narrowed: Vec<_> = mine
        .iter()
        .filter(|s| ask.step.is_none_or(|id| s.id == id))
        .collect();
    let mut targets: Vec<&str> = narrowed
        .iter()
        .flat_map(|s| s.can_clarify.iter().map(String::as_str))
        .collect();
    crate::stable_sort::sort_dedup(&mut targets);
    let governing = narrowed
        .iter()
        .find(|s| s.can_clarify.iter().any(|a| a == ask.to))
        .map(|s| Governing {
            step: s.id.clone(),
            max_rounds: s
                .clarify_max_rounds
                .unwrap_or_else(|| default_max_rounds(ask.blocking)),
            sla_minutes: s.clarify_sla_minutes,
            blocking_allowed: s.clarify_blocking_allowed,
        });
    let refusal = match &parsed {
        // A workflow that does not parse refuses every request, whoever asks.
        Some(Err(e)) => Some(refusal_of(e)),
        _ if ask.from.is_empty() || ask.to.is_empty() => None,
        _ => check(ask, config, workflows).err().map(|e| refusal_of(&e)),
    };
    Preview {
        workflow: name.to_owned(),
        workflows: workflows.names().map(str::to_owned).collect(),
        requesters,
        steps: mine.iter().map(|s| s.id.clone()).collect(),
        targets: targets.into_iter().map(str::to_owned).collect(),
        governing,
        refusal,
    }
}

fn refusal_of(e: &ClarifyError) -> serde_json::Value {
    crate::envelope::error_value(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask<'a>(from: &'a str, to: &'a str, blocking: bool) -> Ask<'a> {
        Ask {
            from,
            to,
            blocking,
            workflow: None,
            step: None,
            ledger_workflow: None,
        }
    }

    #[test]
    fn offers_what_scope_allows_and_carries_its_verdict() {
        let (c, w) = (Config::default(), Workflows::defaults());
        let p = preview(&ask("engineer", "architect", true), &c, &w);
        assert_eq!(p.workflow, "feature");
        assert_eq!(p.requesters, ["architect", "engineer"]);
        assert_eq!(p.steps, ["implement"]);
        assert_eq!(p.targets, ["architect", "product-manager"]);
        assert_eq!(
            p.governing,
            Some(Governing {
                step: "implement".into(),
                max_rounds: 3,
                sla_minutes: 60,
                blocking_allowed: true
            })
        );
        assert_eq!(p.refusal, None);

        let p = preview(&ask("engineer", "reviewer", true), &c, &w);
        assert_eq!(p.governing, None);
        assert_eq!(p.refusal.unwrap()["code"], "SCOPE_VIOLATION");

        // Nothing chosen yet: the pickers, no verdict.
        let p = preview(&ask("", "", true), &c, &w);
        assert!(p.targets.is_empty() && p.refusal.is_none());
    }

    #[test]
    fn limits_follow_blocking_and_the_step() {
        let c = Config::default();
        let mut w = Workflows::new();
        w.insert_text(
            "bug",
            "[[steps]]\nid = \"fix\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_blocking_allowed = false\n",
        );
        let mut a = ask("engineer", "architect", true);
        a.workflow = Some("bug");
        let p = preview(&a, &c, &w);
        assert_eq!(p.governing.as_ref().map(|g| g.max_rounds), Some(5));
        assert_eq!(p.refusal.unwrap()["code"], "BLOCKING_NOT_ALLOWED");
        a.blocking = false;
        let p = preview(&a, &c, &w);
        assert_eq!(p.governing.map(|g| g.max_rounds), Some(6));
        assert_eq!(p.refusal, None);
        a.workflow = Some("nope");
        assert_eq!(
            preview(&a, &c, &w).refusal.unwrap()["code"],
            "INVALID_WORKFLOW"
        );
    }
}
