//! `stats` in words, for the terminal.

use crate::stats::Stats;

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| String::from("n/a"), |v| format!("{:.0}%", v * 100.0))
}

/// `agentx clarify stats` in words (the terminal's rendering of `stats`).
pub fn text_stats(s: &Stats) -> String {
    let mut lines = vec![format!(
        "{} clarifications: {}",
        s.total,
        s.by_status
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{n} {}", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    lines.push(format!(
        "auto-resolution rate: {}   escalation rate: {}",
        pct(s.auto_resolution_rate),
        pct(s.escalation_rate)
    ));
    lines.push(format!(
        "average rounds to resolution: {}",
        s.average_rounds_to_resolution
            .map_or_else(|| String::from("n/a"), |v| format!("{v:.1}"))
    ));
    #[allow(clippy::cast_precision_loss)] // milliseconds far below 2^52
    let secs = |ms: Option<i64>| {
        ms.map_or_else(
            || String::from("n/a"),
            |v| format!("{:.0}s", v as f64 / 1000.0),
        )
    };
    lines.push(format!(
        "time to first answer: median {}, p90 {} (over {})",
        secs(s.time_to_first_answer_ms.median),
        secs(s.time_to_first_answer_ms.p90),
        s.time_to_first_answer_ms.count
    ));
    lines.push(format!(
        "went stale: {}   deadlocks broken: {}",
        s.stale_count, s.deadlock_count
    ));
    // Only when there were any (docs/protocol.md §22): the output of workspaces without is as before.
    if s.reasks_suppressed > 0 {
        lines.push(format!(
            "re-asks answered from an existing record (not asked twice): {}",
            s.reasks_suppressed
        ));
    }
    if let Some(m) = &s.memory {
        lines.extend(memory_lines(m));
    }
    for p in &s.pairs {
        lines.push(format!(
            "  {} -> {}: {} asked, {} resolved, {} escalated",
            p.from, p.to, p.total, p.resolved, p.escalated
        ));
    }
    // Delegations, their gap scores and any suggestion (docs/protocol.md §18), when there are any.
    if let Some(d) = &s.delegations {
        lines.extend(d.text_lines());
    }
    lines.join("\n")
}

/// What the hub's memory saved (docs/protocol.md §36), per agent, when it saved anything.
pub fn memory_lines(m: &crate::stats::Memory) -> Vec<String> {
    let saved = m.agent_minutes_saved.map_or_else(
        || String::from("n/a (no decision taken the long way to measure by)"),
        |n| format!("~{n} agent-minutes"),
    );
    let mut lines = vec![format!(
        "the hub's memory saved {saved}: re-asks suppressed and decisions reused, by agent:"
    )];
    for a in &m.by_agent {
        lines.push(format!(
            "  {}: {} re-asks suppressed, {} decisions reused",
            a.agent, a.reasks_suppressed, a.decisions_reused
        ));
    }
    lines
}
