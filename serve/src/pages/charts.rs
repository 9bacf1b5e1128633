//! The Stats page's charts, drawn here as SVG (no script, no CDN, no inline style: the CSP
//! allows none; colours come from classes in app.css). Each chart carries its numbers as text
//! too — labels on the bars and a `<title>` per bar — so no meaning rests on colour alone.

use agentx_clarify_core::decided::{Decider, Decision};

use crate::html::esc;

const MS_PER_DAY: i64 = 86_400_000;
/// Days shown at most in "decisions over time", and at least (a fortnight gives a day's bar
/// its context).
const MAX_DAYS: i64 = 30;
const MIN_DAYS: i64 = 14;
const WIDTH: i64 = 640;
const HEIGHT: i64 = 220;
const LEFT: i64 = 36;
const BOTTOM: i64 = 28;

/// `YYYY-MM-DD` of a day number (days since 1970-01-01).
fn day_text(day: i64) -> String {
    agentx_clarify_core::time::format_ms(day * MS_PER_DAY)
        .get(..10)
        .unwrap_or_default()
        .to_owned()
}

fn legend() -> String {
    let items: String = Decider::ALL
        .iter()
        .map(|d| {
            format!(
                "<li><span class=\"swatch c-{0}\"></span>{0}</li>",
                d.as_str()
            )
        })
        .collect();
    format!("<ul class=\"legend\">{items}</ul>")
}

/// The height in pixels of `n` of `max` in a plot `plot` pixels high.
fn scaled(n: usize, max: usize, plot: i64) -> i64 {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    let max = i64::try_from(max.max(1)).unwrap_or(1);
    n.saturating_mul(plot) / max
}

/// Decisions per day (UTC), stacked by who decided: agent, person, elicitation, GitHub.
pub fn over_time(decisions: &[Decision], now: i64) -> String {
    let last = now.div_euclid(MS_PER_DAY);
    let first = decisions
        .first()
        .map_or(last, |d| d.at.div_euclid(MS_PER_DAY))
        .clamp(last - MAX_DAYS + 1, last - MIN_DAYS + 1);
    let days: Vec<i64> = (first..=last).collect();
    let count = |day: i64, who: Decider| {
        decisions
            .iter()
            .filter(|d| d.at.div_euclid(MS_PER_DAY) == day && d.decider == who)
            .count()
    };
    let totals: Vec<usize> = days
        .iter()
        .map(|d| Decider::ALL.iter().map(|w| count(*d, *w)).sum())
        .collect();
    let max = totals.iter().copied().max().unwrap_or(0).max(1);
    let plot = HEIGHT - BOTTOM - 16;
    let slot = (WIDTH - LEFT) / i64::try_from(days.len()).unwrap_or(1).max(1);
    let bar = (slot * 7 / 10).max(2);
    let mut out = format!(
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-labelledby=\"over-time-title\">\
         <title id=\"over-time-title\">Decisions per day by who decided</title>\
         <line class=\"axis\" x1=\"{LEFT}\" y1=\"{0}\" x2=\"{WIDTH}\" y2=\"{0}\"/>\
         <text x=\"0\" y=\"14\">{max}</text><text x=\"0\" y=\"{0}\">0</text>",
        HEIGHT - BOTTOM
    );
    for (i, (day, total)) in days.iter().zip(&totals).enumerate() {
        let x = LEFT + i64::try_from(i).unwrap_or(0) * slot + (slot - bar) / 2;
        let mut y = HEIGHT - BOTTOM;
        for who in Decider::ALL {
            let n = count(*day, who);
            if n == 0 {
                continue;
            }
            let h = scaled(n, max, plot).max(1);
            y -= h;
            out.push_str(&format!(
                "<rect class=\"c-{0}\" x=\"{x}\" y=\"{y}\" width=\"{bar}\" height=\"{h}\">\
                 <title>{1}: {n} by {0}</title></rect>",
                who.as_str(),
                day_text(*day)
            ));
        }
        if *total > 0 {
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{total}</text>",
                x + bar / 2,
                y - 3
            ));
        }
        // A date under the first, the last and every seventh bar.
        let labelled = i == 0 || i + 1 == days.len() || i % 7 == 0;
        if labelled {
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + bar / 2,
                HEIGHT - 8,
                day_text(*day).get(5..).unwrap_or_default()
            ));
        }
    }
    out.push_str("</svg>");
    figure(
        "Who decided, per day",
        &out,
        &format!(
            "Decisions per day (UTC), {} to {}, by who decided.",
            day_text(first),
            day_text(last)
        ),
        &legend(),
    )
}

/// The buckets of "time to decision", with their upper bounds in ms.
const BUCKETS: [(&str, i64); 7] = [
    ("< 1 min", 60_000),
    ("1–5 min", 300_000),
    ("5–15 min", 900_000),
    ("15–60 min", 3_600_000),
    ("1–4 h", 14_400_000),
    ("4–24 h", MS_PER_DAY),
    ("> 1 day", i64::MAX),
];

/// How long decisions took from the question, as a histogram.
pub fn time_to_decision(decisions: &[Decision]) -> String {
    let mut counts = [0usize; BUCKETS.len()];
    for d in decisions {
        if let Some(i) = BUCKETS.iter().position(|(_, up)| d.took_ms < *up) {
            if let Some(c) = counts.get_mut(i) {
                *c += 1;
            }
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let plot = HEIGHT - BOTTOM - 16;
    let slot = (WIDTH - LEFT) / i64::try_from(BUCKETS.len()).unwrap_or(1);
    let bar = slot * 7 / 10;
    let mut out = format!(
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-labelledby=\"took-title\">\
         <title id=\"took-title\">Time from question to decision</title>\
         <line class=\"axis\" x1=\"{LEFT}\" y1=\"{0}\" x2=\"{WIDTH}\" y2=\"{0}\"/>",
        HEIGHT - BOTTOM
    );
    for (i, ((label, _), n)) in BUCKETS.iter().zip(counts).enumerate() {
        let label = esc(label);
        let x = LEFT + i64::try_from(i).unwrap_or(0) * slot + (slot - bar) / 2;
        let h = scaled(n, max, plot);
        let y = HEIGHT - BOTTOM - h;
        out.push_str(&format!(
            "<rect class=\"c-bar\" x=\"{x}\" y=\"{y}\" width=\"{bar}\" height=\"{h}\"><title>{label}: {n}</title></rect>\
             <text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">{n}</text>\
             <text x=\"{0}\" y=\"{2}\" text-anchor=\"middle\">{label}</text>",
            x + bar / 2,
            y - 3,
            HEIGHT - 8
        ));
    }
    out.push_str("</svg>");
    figure(
        "How long a decision took",
        &out,
        &format!(
            "Time from the question to the decision, {} decision(s).",
            decisions.len()
        ),
        "",
    )
}

fn figure(title: &str, svg: &str, caption: &str, extra: &str) -> String {
    format!(
        "<figure class=\"chart\"><h3>{}</h3>{svg}{extra}<figcaption>{}</figcaption></figure>",
        esc(title),
        esc(caption)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(at: i64, decider: Decider, took_ms: i64) -> Decision {
        Decision {
            issue: 1,
            id: "CLR-1-001".into(),
            at,
            decider,
            took_ms,
        }
    }

    #[test]
    fn the_charts_say_their_numbers_in_text() {
        let day = 20_400 * MS_PER_DAY;
        let all = [
            decision(day, Decider::Agent, 30_000),
            decision(day + 1, Decider::Person, 600_000),
            decision(day + MS_PER_DAY, Decider::Person, 2 * MS_PER_DAY),
        ];
        let svg = over_time(&all, day + MS_PER_DAY + 5);
        assert!(
            svg.contains("<title>2025-11-08: 1 by agent</title>"),
            "{svg}"
        );
        assert!(svg.contains("<title>2025-11-09: 1 by person</title>"));
        assert!(svg.contains(">2</text>"), "the day's total is written");
        assert!(!svg.contains("style="));
        let svg = time_to_decision(&all);
        assert!(svg.contains("<title>&lt; 1 min: 1</title>"), "{svg}");
        assert!(svg.contains("<title>5–15 min: 1</title>"));
        assert!(svg.contains("<title>&gt; 1 day: 1</title>"));
        // No decisions: still a chart, of today.
        assert!(over_time(&[], day).contains("<svg"));
    }
}
