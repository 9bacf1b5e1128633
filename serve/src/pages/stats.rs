//! `/stats`: the workspace's numbers as tables, and two charts drawn on the server
//! (`charts.rs`): decisions over time by who decided, and the time they took.

use std::sync::Arc;

use agentx_clarify_command::query;
use agentx_clarify_core::render::short_duration;
use agentx_clarify_core::stats::{PersonStats, Stats};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::charts;
use super::frame::{render, viewer};
use crate::html::esc;
use crate::hub::App;

pub async fn stats(State(app): State<Arc<App>>, headers: HeaderMap, uri: Uri) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let body = app
        .with_store(|ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            let s = query::stats_people(ws, None)?;
            let (ledgers, _) = query::read_all(ws)?;
            let decisions = agentx_clarify_core::decided::decisions(&ledgers, None);
            let mut out = String::from("<h2>Decisions</h2>");
            out.push_str(&charts::over_time(&decisions, now));
            out.push_str(&charts::time_to_decision(&decisions));
            out.push_str(&numbers(&s.stats));
            out.push_str(&pairs(&s.stats));
            out.push_str(&people(s.people.as_deref().unwrap_or_default()));
            if let Some(m) = &s.stats.memory {
                out.push_str(&memory(m));
            }
            if let Some(d) = &s.stats.delegations {
                out.push_str(&format!(
                    "<h2>Delegations</h2><pre class=\"stats\">{}</pre>",
                    esc(&d.text_lines().join("\n"))
                ));
            }
            Ok(out)
        })
        .await;
    render(&v, "Stats", "/stats", body)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| String::from("n/a"), |r| format!("{:.0}%", r * 100.0))
}

#[allow(clippy::cast_precision_loss)] // milliseconds far below 2^52
fn duration(ms: Option<i64>) -> String {
    match ms {
        None => String::from("n/a"),
        Some(ms) if ms < 60_000 => format!("{:.0} s", ms as f64 / 1000.0),
        Some(ms) if ms < 3_600_000 => format!("{:.0} min", ms as f64 / 60_000.0),
        Some(ms) => format!("{:.1} h", ms as f64 / 3_600_000.0),
    }
}

fn numbers(s: &Stats) -> String {
    let statuses: String = s
        .by_status
        .iter()
        .map(|(status, n)| {
            format!(
                "<tr><th scope=\"row\">{}</th><td>{n}</td></tr>",
                status.as_str()
            )
        })
        .collect();
    let rows = [
        ("auto-resolution rate", pct(s.auto_resolution_rate)),
        ("escalation rate", pct(s.escalation_rate)),
        (
            "average rounds to resolution",
            s.average_rounds_to_resolution
                .map_or_else(|| String::from("n/a"), |v| format!("{v:.1}")),
        ),
        (
            "time to first answer (median)",
            duration(s.time_to_first_answer_ms.median),
        ),
        (
            "time to first answer (p90)",
            duration(s.time_to_first_answer_ms.p90),
        ),
        ("went stale", s.stale_count.to_string()),
        ("deadlocks broken", s.deadlock_count.to_string()),
        ("re-asks not asked twice", s.reasks_suppressed.to_string()),
    ];
    let rates: String = rows
        .iter()
        .map(|(k, v)| format!("<tr><th scope=\"row\">{k}</th><td>{}</td></tr>", esc(v)))
        .collect();
    format!(
        "<h2>Records <span class=\"muted\">({} in all)</span></h2><div class=\"tables\">\
         <table class=\"narrow\"><caption>By status</caption><tbody>{statuses}</tbody></table>\
         <table class=\"narrow\"><caption>How they went</caption><tbody>{rates}</tbody></table></div>",
        s.total
    )
}

fn pairs(s: &Stats) -> String {
    if s.pairs.is_empty() {
        return String::new();
    }
    let rows: String = s
        .pairs
        .iter()
        .map(|p| {
            format!(
                "<tr><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&p.from),
                esc(&p.to),
                p.total,
                p.resolved,
                p.escalated
            )
        })
        .collect();
    format!(
        "<h2>Who asks whom</h2><div class=\"table\"><table><thead><tr><th>pair</th><th>asked</th>\
         <th>resolved</th><th>escalated</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )
}

/// Per person (docs/protocol.md §37): drawn like "Who asks whom" (a table that scrolls
/// sideways on a phone rather than squeezing six columns), absent without any person.
fn people(rows: &[PersonStats]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let rows: String = rows
        .iter()
        .map(|p| {
            format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                esc(&p.name),
                p.decisions,
                p.claims,
                esc(&short_duration(p.median_decision_ms)),
                p.open_assigned,
                p.holding
            )
        })
        .collect();
    format!(
        "<h2>People</h2><div class=\"table\"><table class=\"people\"><thead><tr>\
         <th scope=\"col\">person</th><th scope=\"col\">decisions</th>\
         <th scope=\"col\">claims</th><th scope=\"col\" title=\"median time from the escalation \
         to their decision\">median</th><th scope=\"col\" title=\"escalated records assigned to \
         them now\">open</th><th scope=\"col\" title=\"escalated records they hold now\">holding</th>\
         </tr></thead><tbody>{rows}</tbody></table></div>"
    )
}

/// What the hub's memory saved (docs/protocol.md §36): re-asks suppressed and decisions
/// reused per agent, and the agent-minutes they saved.
fn memory(m: &agentx_clarify_core::stats::Memory) -> String {
    let rows: String = m
        .by_agent
        .iter()
        .map(|a| {
            format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td></tr>",
                esc(&a.agent),
                a.reasks_suppressed,
                a.decisions_reused
            )
        })
        .collect();
    let saved = m.agent_minutes_saved.map_or_else(
        || String::from("not measured yet (no decision taken the long way)"),
        |n| format!("about {n} agent-minutes"),
    );
    format!(
        "<h2>The hub's memory</h2><p>Saved {saved}: each re-ask suppressed or decision reused \
         counts the median time a decision took ({}).</p>\
         <table class=\"narrow\"><thead><tr><th scope=\"col\">Agent</th>\
         <th scope=\"col\">Re-asks suppressed</th><th scope=\"col\">Decisions reused</th>\
         </tr></thead><tbody>{rows}</tbody></table>",
        duration(m.median_decision_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_people_table_escapes_names_and_is_absent_without_people() {
        assert_eq!(people(&[]), "");
        let row = PersonStats {
            name: String::from("<b>eve</b>"),
            decisions: 2,
            claims: 1,
            handoffs: 0,
            median_decision_ms: Some(1_800_000),
            open_assigned: 3,
            holding: 1,
        };
        let html = people(&[row]);
        assert!(html.contains("<th scope=\"row\">&lt;b&gt;eve&lt;/b&gt;</th><td>2</td><td>1</td><td>30m</td><td>3</td><td>1</td>"), "{html}");
        assert!(!html.contains("<b>eve"), "{html}");
    }
}
