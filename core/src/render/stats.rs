//! `stats` in words, for the terminal.

use crate::stats::{PersonStats, Stats};

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

/// A duration for a table cell: `45s`, `12m`, `3h 5m`, `2d 4h` (rounded down), `—` for none.
pub fn short_duration(ms: Option<i64>) -> String {
    let Some(ms) = ms.filter(|ms| *ms >= 0) else {
        return String::from("—");
    };
    let (s, m, h) = (ms / 1000, ms / 60_000, ms / 3_600_000);
    if s < 60 {
        format!("{s}s")
    } else if m < 60 {
        format!("{m}m")
    } else if h < 24 {
        // Whole hours read as `2h`, not `2h 0m`.
        if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h {}m", m % 60)
        }
    } else if h % 24 == 0 {
        format!("{}d", h / 24)
    } else {
        format!("{}d {}h", h / 24, h % 24)
    }
}

/// The people table of `agentx clarify stats --people` (docs/protocol.md §37): the name
/// left-aligned, every number right-aligned under its heading.
pub fn text_people(rows: &[PersonStats]) -> String {
    if rows.is_empty() {
        return String::from("no people: .agentx/people.toml defines none, and no person decided, claimed or handed over a record");
    }
    let head = ["person", "decisions", "claims", "median", "open", "holding"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                r.decisions.to_string(),
                r.claims.to_string(),
                short_duration(r.median_decision_ms),
                r.open_assigned.to_string(),
                r.holding.to_string(),
            ]
        })
        .collect();
    let mut widths = head.map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |row: &[String]| {
        let mut out = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            match i {
                0 => out.push_str(&format!("{cell}{pad}")),
                _ => out.push_str(&format!("  {pad}{cell}")),
            }
        }
        out.trim_end().to_owned()
    };
    let mut lines = vec![line(&head.map(String::from))];
    lines.extend(cells.iter().map(|row| line(row)));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_for_a_cell() {
        let min = 60_000;
        assert_eq!(short_duration(None), "—");
        assert_eq!(short_duration(Some(45_900)), "45s");
        assert_eq!(short_duration(Some(12 * min + 59_000)), "12m");
        assert_eq!(short_duration(Some(185 * min)), "3h 5m");
        assert_eq!(short_duration(Some(120 * min)), "2h");
        assert_eq!(short_duration(Some((52 * 60 + 7) * min)), "2d 4h");
        assert_eq!(short_duration(Some(48 * 60 * min)), "2d");
    }

    #[test]
    fn the_people_table_lines_up() {
        let row = |name: &str, decisions, median| PersonStats {
            name: name.into(),
            decisions,
            claims: 1,
            handoffs: 0,
            median_decision_ms: median,
            open_assigned: 2,
            holding: 0,
        };
        let text = text_people(&[row("alice", 12, Some(1_800_000)), row("bo", 0, None)]);
        assert_eq!(
            text,
            "person  decisions  claims  median  open  holding\n\
             alice          12       1     30m     2        0\n\
             bo              0       1       —     2        0"
        );
    }
}
