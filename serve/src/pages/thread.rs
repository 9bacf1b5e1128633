//! `/clarifications/<id>`: one record laid out for the person who decides, phone first
//! (docs/protocol.md §23 "The thread page"). From the top: the topic with the id, the facts
//! once (issue, who asks whom, status, severity, round), the question and why it came to a
//! person, the decision form (`decide.rs`) — before the history, so that on a 390×844 screen
//! the question, the options and the button are all on the first screen — then the history
//! (`history.rs`) and the remaining Layer 4 fields folded away.

use std::sync::Arc;

use agentx_clarify_command::query;
use agentx_clarify_core::ledger::{EntryKind, Status};
use agentx_clarify_core::Record;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::frame::{render_headed, viewer, when};
use crate::html::{esc, link};
use crate::hub::App;

pub async fn thread(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<String>,
) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let shown_id = agentx_clarify_core::error::shown(&id);
    let person = v.human.clone();
    let page = app
        .with_store(move |ws| {
            let (issue, record) = query::show_id(ws, &id)?;
            let routable = agentx_clarify_command::route::route_runner(ws, &record.to).is_ok();
            Ok((
                record.topic.clone(),
                heading(&record),
                render_thread(issue, &record, routable, &person),
            ))
        })
        .await;
    let title = match &page {
        Ok((topic, _, _)) => format!("{topic} ({shown_id})"),
        Err(_) => format!("Clarification {shown_id}"),
    };
    render_headed(&v, &title, "", page.map(|(_, h, b)| (h, b)))
}

/// The topic, then the id on a line of its own that never breaks (`CLR-2-` / `001`).
fn heading(r: &Record) -> String {
    format!("{} <span class=\"id\">{}</span>", esc(&r.topic), esc(&r.id))
}

fn render_thread(issue: u32, r: &Record, routable: bool, viewer: &str) -> String {
    let mut out = facts(issue, r);
    out.push_str(&question(r));
    let done = outcome(r);
    out.push_str(&done);
    match super::decide::actions(r, routable, viewer) {
        Some(actions) => out.push_str(&actions),
        // A closed record's outcome says all there is.
        None if !done.is_empty() => {}
        None => out
            .push_str("<p class=\"closed\">No action is open to a person on this record now.</p>"),
    }
    out.push_str(&super::history::history(r));
    out.push_str(&details(r));
    out
}

/// The record's facts, once: issue, who asks whom, status, severity, round, blocking.
fn facts(issue: u32, r: &Record) -> String {
    let status = r.current_status();
    format!(
        "<p class=\"facts\">{} · {} → {} · <span class=\"badge {}\">{}</span> \
         <span class=\"sev sev-{}\">{}</span> · round {}/{} · {}</p>",
        link(&format!("/issues/{issue}"), &format!("issue #{issue}")),
        esc(&r.from),
        esc(&r.to),
        esc(status.as_str()),
        esc(status.as_str()),
        esc(r.severity().as_str()),
        esc(r.severity().as_str()),
        r.folded_round(),
        r.max_rounds,
        if r.blocking {
            "blocking"
        } else {
            "non-blocking"
        },
    )
}

fn last(r: &Record, kind: EntryKind) -> Option<&agentx_clarify_core::ledger::Entry> {
    r.thread.iter().rev().find(|e| e.kind == kind)
}

/// The latest question, what the asker gave with it (context, suggestions), and why a person
/// is asked (the escalation's reason), each said once.
fn question(r: &Record) -> String {
    let mut out = String::from("<section class=\"ask\" aria-label=\"The question\">");
    if let Some(q) = last(r, EntryKind::Question) {
        out.push_str(&format!(
            "<p class=\"question\">{}</p><p class=\"asked\">{} asked {}, {}</p>",
            esc(&q.body),
            esc(&q.from),
            esc(&r.to),
            when(q.timestamp.ms())
        ));
    }
    if let Some(c) = &r.context {
        out.push_str(&format!(
            "<p class=\"context\"><span class=\"k\">Context</span> {}</p>",
            esc(c)
        ));
    }
    if !r.suggestions.is_empty() {
        out.push_str(&format!(
            "<p class=\"suggested\"><span class=\"k\">Suggested</span> {}</p>",
            esc(&r.suggestions.join(" · "))
        ));
    }
    if r.current_status() == Status::Escalated {
        if let Some(e) = last(r, EntryKind::Escalation) {
            out.push_str(&format!(
                "<p class=\"why\"><span class=\"k\">Why you</span> {} <span class=\"muted\">({}, {})</span></p>",
                esc(&e.body),
                esc(&super::history::who(e)),
                when(e.timestamp.ms())
            ));
        }
    }
    out.push_str("</section>");
    out
}

/// How a closed record ended, at the top: "Decided by alice: In-process LRU".
fn outcome(r: &Record) -> String {
    let status = r.current_status();
    let kind = match status {
        Status::Resolved => EntryKind::Resolution,
        Status::Abandoned => EntryKind::Abandonment,
        Status::Answered => EntryKind::Answer,
        _ => return String::new(),
    };
    let Some(e) = last(r, kind) else {
        return String::new();
    };
    let verb = match status {
        Status::Resolved => "Decided",
        Status::Abandoned => "Abandoned",
        _ => "Answered",
    };
    let (label, note) = super::history::value_and_note(r, e);
    let said = match (label, note) {
        (Some(l), Some(n)) => format!("<strong>{}</strong> — {}", esc(&l), esc(&n)),
        (Some(l), None) => format!("<strong>{}</strong>", esc(&l)),
        (None, Some(n)) => esc(&n),
        (None, None) => String::new(),
    };
    format!(
        "<section class=\"done {}\" aria-label=\"Outcome\"><p>{verb} by {}: {said}</p><p class=\"muted\">{}</p></section>",
        esc(status.as_str()),
        esc(&super::history::person(e)),
        when(e.timestamp.ms())
    )
}

/// The Layer 4 fields a decision rarely needs, folded away (shown once, here).
fn details(r: &Record) -> String {
    let mut rows = Vec::new();
    let mut row = |k: &str, v: String| rows.push(format!("<dt>{k}</dt><dd>{v}</dd>"));
    row("answer kind", esc(r.answer.kind.as_str()));
    if let Some(f) = &r.field {
        row("field", esc(f));
    }
    if !r.blocked_operations.is_empty() {
        row("blocks", esc(&r.blocked_operations.join(", ")));
    }
    if let Some(s) = &r.session_id {
        row("session", esc(s));
    }
    if let Some(g) = &r.gap_id {
        row("gap", esc(g));
    }
    if let Some(from) = agentx_clarify_core::replies::asked_back_from(r) {
        row(
            "asked back from",
            link(&format!("/clarifications/{from}"), from),
        );
    }
    if let Some(t) = &r.created {
        row("created", when(t.ms()));
    }
    format!(
        "<details class=\"more\"><summary>Details</summary><dl class=\"fields\">{}</dl></details>",
        rows.join("")
    )
}
