//! The inbox's records as cards (a list on a phone, a grid on a wide screen): the topic as the
//! link, status and severity, and labelled facts — who asks whom, how long it has waited,
//! the round, why a person is asked. A question asked back from another sits inside that
//! one's card: one conversation, one place.

use agentx_clarify_core::ledger::{EntryKind, Record, Status};
use agentx_clarify_core::replies::asked_back_from;

use super::frame::{age, when};
use crate::html::{esc, link};

/// The cards of `items` (in order); `all` is every record of the page, to find the record a
/// question was asked back from.
pub fn list(items: &[&(u32, &Record)], all: &[(u32, &Record)], ctx: &Context<'_>) -> String {
    let here = |id: &str| items.iter().any(|(_, r)| r.id == id);
    let mut out = String::from("<ul class=\"cards\">");
    for (issue, r) in items {
        // Shown inside the card of the record it was asked back from.
        if asked_back_from(r).is_some_and(here) {
            continue;
        }
        let replies: Vec<&(u32, &Record)> = items
            .iter()
            .copied()
            .filter(|(_, c)| asked_back_from(c) == Some(r.id.as_str()))
            .collect();
        out.push_str(&card(*issue, r, &replies, all, ctx));
    }
    out.push_str("</ul>");
    out
}

fn card(
    issue: u32,
    r: &Record,
    replies: &[&(u32, &Record)],
    all: &[(u32, &Record)],
    ctx: &Context<'_>,
) -> String {
    let status = r.current_status();
    let severity = r.severity().as_str();
    let mut facts = vec![
        fact("asks", &format!("{} → {}", esc(&r.from), esc(&r.to))),
        fact(
            "issue",
            &link(&format!("/issues/{issue}"), &format!("#{issue}")),
        ),
    ];
    if let Some(t) = &r.created {
        facts.push(fact(
            "waiting",
            &format!(
                "{} <span class=\"muted\">since {}</span>",
                age(ctx.now, t.ms()),
                when(t.ms())
            ),
        ));
    }
    facts.push(fact(
        "round",
        &format!("{}/{}", r.folded_round(), r.max_rounds),
    ));
    facts.push(fact("answer", &esc(answer_kind(r))));
    if let Some(reason) = escalation_reason(r) {
        facts.push(fact("why", &esc(reason)));
    }
    if status == Status::Escalated {
        if let Some(names) = agentx_clarify_core::people::assigned(r) {
            facts.push(fact("assigned", &esc(&names.join(", "))));
        }
        if let Some(h) = agentx_clarify_core::people::holder(r) {
            facts.push(fact("on it", &esc(&h.person)));
        }
        if let Some(summary) = agentx_clarify_core::people::summary(r) {
            facts.push(fact("approvals", &esc(&summary)));
        }
    }
    if let Some(from) = asked_back_from(r) {
        if !all.iter().any(|(_, p)| p.id == from) {
            facts.push(fact(
                "asked back from",
                &link(&format!("/clarifications/{from}"), from),
            ));
        }
    }
    let nested = if replies.is_empty() {
        String::new()
    } else {
        let inner: Vec<&(u32, &Record)> = replies.to_vec();
        format!(
            "<div class=\"conversation\"><p class=\"k\">asked back</p>{}</div>",
            list(&inner, all, ctx)
        )
    };
    // The question itself, shortly: what is asked, before who and how long.
    let question = r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == agentx_clarify_core::ledger::EntryKind::Question)
        .map(|q| format!("<p class=\"q\">{}</p>", esc(&shorten(&q.body, 140))))
        .unwrap_or_default();
    format!(
        "<li class=\"card {} sev-{}\" data-id=\"{}\"><p class=\"top\">{} \
         <span class=\"badge {}\">{}</span> <span class=\"sev sev-{}\">{}</span> \
         <span class=\"id\">{}</span></p>{question}<dl class=\"facts\">{}</dl>{nested}</li>",
        esc(status.as_str()),
        esc(severity),
        esc(&r.id),
        link(&format!("/clarifications/{}", r.id), &r.topic),
        esc(status.as_str()),
        esc(status.as_str()),
        esc(severity),
        esc(severity),
        esc(&r.id),
        facts.join(""),
    )
}

/// The first `max` characters of `text` on one line, `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn fact(label: &str, value: &str) -> String {
    format!("<div><dt>{label}</dt><dd>{value}</dd></div>")
}

/// What rendering a page of the inbox needs besides the records.
pub struct Context<'a> {
    pub now: i64,
    /// The names of people (human tokens, the viewer): a record addressed to one needs them.
    pub people: &'a [String],
    /// The signed-in person: an escalated record assigned to others, or held by another, is
    /// not theirs (docs/protocol.md §37).
    pub viewer: &'a str,
}

/// Whether escalated `r` is for `viewer`: nobody was assigned (anyone's), or they are among
/// its assignees and nobody else holds it, or they hold it.
pub fn for_viewer(r: &Record, viewer: &str) -> bool {
    let held = agentx_clarify_core::people::holder(r);
    if let Some(h) = &held {
        return h.person == viewer;
    }
    agentx_clarify_core::people::assigned(r).is_none_or(|names| names.iter().any(|n| n == viewer))
}

pub fn escalation_reason(r: &Record) -> Option<&str> {
    (r.current_status() == Status::Escalated)
        .then(|| {
            r.thread
                .iter()
                .rev()
                .find(|e| e.kind == EntryKind::Escalation)
                .map(|e| e.body.as_str())
        })
        .flatten()
}

/// The answer kind (docs/protocol.md §22): `text` until a record says otherwise.
pub fn answer_kind(r: &Record) -> &str {
    r.answer.kind.as_str()
}
