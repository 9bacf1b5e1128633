//! Words for the commands whose JSON is the answer itself (scope, wakeup, graph).

use agentx_clarify_core::monitor::WaitForGraph;
use agentx_clarify_core::scope::{Preview, Question};
use agentx_clarify_core::time::format_ms;

pub fn scope_text(q: &Question, p: &Preview) -> String {
    let mut lines = vec![format!("workflow: {}", p.workflow)];
    if q.from.is_empty() {
        lines.push(format!("agents that may ask: {}", list(&p.requesters)));
    } else if p.steps.is_empty() {
        lines.push(format!(
            "{} has no step in {}; agents that may ask: {}",
            q.from,
            p.workflow,
            list(&p.requesters)
        ));
    } else {
        lines.push(format!("{}'s steps: {}", q.from, p.steps.join(", ")));
        lines.push(format!("may ask: {}", list(&p.targets)));
    }
    if let Some(g) = &p.governing {
        lines.push(format!(
            "asking {}: step {}, at most {} round(s), SLA {} min, blocking {}",
            q.to,
            g.step,
            g.max_rounds,
            g.sla_minutes,
            if g.blocking_allowed {
                "allowed"
            } else {
                "not allowed"
            }
        ));
    }
    if let Some(r) = &p.refusal {
        lines.push(format!(
            "a request would be refused: {}: {}",
            r["code"].as_str().unwrap_or_default(),
            r["message"].as_str().unwrap_or_default()
        ));
    }
    lines.join("\n")
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        String::from("(nobody)")
    } else {
        items.join(", ")
    }
}

pub fn wakeup_text(wakeup: Option<i64>, now: i64) -> String {
    match wakeup {
        None => String::from(
            "nothing is due: only a change (a write, a status) can make the monitor act",
        ),
        Some(t) if t <= now => String::from("due now: run `agentx clarify monitor`"),
        Some(t) => format!(
            "next due at {} (in {} s)",
            format_ms(t),
            (t - now).div_euclid(1000)
        ),
    }
}

pub fn graph_text(graphs: &[WaitForGraph]) -> String {
    let mut lines = Vec::new();
    for g in graphs.iter().filter(|g| !g.edges.is_empty()) {
        lines.push(format!("#{}", g.issue_number));
        for e in &g.edges {
            lines.push(format!(
                "  {} waits on {} ({}, {})",
                e.from, e.to, e.id, e.status
            ));
        }
        for c in &g.cycles {
            lines.push(format!(
                "  cycle: {} between {}",
                c.ids.join(", "),
                c.agents.join(", ")
            ));
        }
    }
    if lines.is_empty() {
        String::from("nobody waits on anyone")
    } else {
        lines.join("\n")
    }
}
