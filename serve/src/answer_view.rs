//! What an answer link's page shows (docs/protocol.md §35): the question and one confirm
//! button (a per-option link), or the answer form (the page link); after the record moved on,
//! what happened to it. A plain form POST to the link itself: no script, no CSRF token (the
//! token in the URL is the credential).

use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::ledger::{EntryKind, Status};
use agentx_clarify_core::Record;
use agentx_clarify_notify::links::Link;
use serde_json::Value;

use crate::html::{bare, esc};

/// `02:14` (UTC) of an epoch-ms time.
/// `02:14 UTC`: the hub's clock is UTC, and a person reading it elsewhere must know.
fn clock(ms: i64) -> String {
    format!("{} UTC", agentx_clarify_core::time::hh_mm(ms))
}

/// What happened to a record that a link can no longer decide, in one line: "Decided by bob
/// at 02:14 UTC: redis", "Abandoned by …", or `None` while it is still open.
pub fn what_happened(r: &Record) -> Option<String> {
    if !r.current_status().is_terminal() {
        return None;
    }
    let last = r
        .thread
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EntryKind::Resolution | EntryKind::Abandonment))?;
    let by = last
        .extra
        .get("by")
        .and_then(Value::as_str)
        .unwrap_or(&last.from);
    let at = clock(last.timestamp.ms());
    if last.kind == EntryKind::Abandonment {
        return Some(format!("Abandoned by {by} at {at}"));
    }
    let what = match &last.value {
        Some(v) => r.answer.render(v),
        None => last.body.lines().next().unwrap_or_default().to_owned(),
    };
    Some(format!("Decided by {by} at {at}: {what}"))
}

/// The question part every page of a link shows.
fn question(r: &Record) -> String {
    let asked = r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Question)
        .map_or("", |e| e.body.as_str());
    // What the person deciding from a notification needs beside the question: its context,
    // and why it came to a person (the escalation's reason), as the thread page shows them.
    let mut facts = String::new();
    if let Some(c) = r.context.as_deref().filter(|c| !c.trim().is_empty()) {
        facts.push_str(&format!(
            "<p class=\"context\"><span class=\"k\">Context</span> {}</p>",
            esc(c)
        ));
    }
    let why = (r.current_status() == Status::Escalated)
        .then(|| {
            r.thread
                .iter()
                .rev()
                .find(|e| e.kind == EntryKind::Escalation)
        })
        .flatten();
    if let Some(e) = why {
        facts.push_str(&format!(
            "<p class=\"why\"><span class=\"k\">Why you</span> {}</p>",
            esc(&e.body)
        ));
    }
    format!(
        "<p class=\"muted\">{} · {} → {}</p><blockquote class=\"question\">{}</blockquote>{facts}",
        esc(&r.id),
        esc(&r.from),
        esc(&r.to),
        esc(asked)
    )
}

/// The form's choices for the page link (the per-option link has its value already).
fn choices(r: &Record) -> String {
    let radio = |value: &str, shown: &str, input: &str| {
        format!(
            "<label class=\"option\"><input type=\"{input}\" name=\"value\" value=\"{}\">\
             <span class=\"text\"><span class=\"label\">{}</span></span></label>",
            esc(value),
            esc(shown)
        )
    };
    let all = match r.answer.kind {
        AnswerKind::Text => {
            return "<label class=\"note\">Your decision<textarea name=\"message\" rows=\"3\" required></textarea></label>".into()
        }
        AnswerKind::Confirm => radio("true", "Yes", "radio") + &radio("false", "No", "radio"),
        AnswerKind::Choice | AnswerKind::MultiChoice => {
            let input = if r.answer.kind == AnswerKind::MultiChoice {
                "checkbox"
            } else {
                "radio"
            };
            r.answer
                .options
                .iter()
                .map(|o| radio(&o.value, o.shown(), input))
                .collect()
        }
    };
    let other = if r.answer.allows_other() {
        "<label class=\"other\">Or your own answer<textarea name=\"other\" rows=\"2\"></textarea></label>"
    } else {
        ""
    };
    format!(
        "<fieldset class=\"choices\"><legend>Your decision</legend>{all}</fieldset>{other}\
         <label class=\"note\">Note <span class=\"muted\">(optional)</span>\
         <textarea name=\"message\" rows=\"2\"></textarea></label>"
    )
}

/// The page of a link that may still decide: the question and its one form.
pub fn confirm_page(token: &str, link: &Link, r: &Record) -> String {
    let (fields, button) = match &link.value {
        Some(v) => (
            "<label class=\"note\">Note <span class=\"muted\">(optional)</span>\
             <textarea name=\"message\" rows=\"2\"></textarea></label>"
                .to_owned(),
            format!("Confirm: {}", r.answer.render(v)),
        ),
        None => (choices(r), "Decide".to_owned()),
    };
    let body = format!(
        "{}<form method=\"post\" action=\"/a/{}\" class=\"act decide\">\
         <input type=\"hidden\" name=\"id\" value=\"{}\"><input type=\"hidden\" name=\"round\" value=\"{}\">\
         {fields}<button type=\"submit\" class=\"primary\">{}</button></form>",
        question(r),
        esc(token),
        esc(&link.record),
        link.round,
        esc(&button)
    );
    bare(&r.topic, &body)
}

/// A page that says why nothing was written (and what happened instead).
pub fn said(title: &str, text: &str, r: Option<&Record>) -> String {
    let q = r.map(question).unwrap_or_default();
    bare(
        title,
        &format!("{q}<p class=\"closed\" role=\"status\">{}</p>", esc(text)),
    )
}
