//! The actions a person may take on a record (the core's transition table's answer for
//! `human`), decision first: a form drawn from the record's answer kind (docs/protocol.md
//! §22) — the options as large tap targets, yes/no as two, a separate optional note, free
//! text instead of an option only where `allowOther` allows it — and the rarer actions
//! (escalate, abandon, route again) folded below it. The page's script posts the form to
//! `/api/v1/call`; the server decides by the core's one rule (`AnswerSpec::decision`)
//! whatever the page sends.

use agentx_clarify_core::kinds::{AnswerKind, AnswerOption};
use agentx_clarify_core::names::HUMAN;
use agentx_clarify_core::ops::{who_may, Op};
use agentx_clarify_core::{Record, Status};

use crate::html::esc;

/// Whether the core's table lets `human` take `op` on the record now.
fn human_may(r: &Record, op: Op) -> bool {
    who_may(r.current_status(), op, r.is_legacy_empty())
        .is_some_and(|who| who.admits(HUMAN, &r.from, &r.to))
}

/// One option as a tap target: the whole line is the label (≥ 48 px high in app.css).
fn option(
    input: &str,
    value: &str,
    shown: &str,
    description: Option<&str>,
    required: bool,
) -> String {
    let description = description.map_or(String::new(), |d| {
        format!("<span class=\"desc\">{}</span>", esc(d))
    });
    let required = if required { " required" } else { "" };
    format!(
        "<label class=\"option\"><input type=\"{input}\" name=\"value\" value=\"{}\"{required}>\
         <span class=\"text\"><span class=\"label\">{}</span>{description}</span></label>",
        esc(value),
        esc(shown)
    )
}

fn options(r: &Record) -> String {
    let spec = &r.answer;
    match spec.kind {
        AnswerKind::Text => String::new(),
        AnswerKind::Confirm => format!(
            "<fieldset class=\"choices yesno\"><legend>Your decision</legend>{}{}</fieldset>",
            option("radio", "true", "Yes", None, true),
            option("radio", "false", "No", None, true)
        ),
        AnswerKind::Choice | AnswerKind::MultiChoice => {
            let multi = spec.kind == AnswerKind::MultiChoice;
            // A radio group is required as a whole; checkboxes are counted by the script
            // (min/max) and by the server.
            let required = !multi && !spec.allows_other();
            let input = if multi { "checkbox" } else { "radio" };
            let all: String = spec
                .options
                .iter()
                .map(|o: &AnswerOption| {
                    option(
                        input,
                        &o.value,
                        o.shown(),
                        o.description.as_deref(),
                        required,
                    )
                })
                .collect();
            let bounds = if multi {
                let (min, max) = (spec.min(), spec.max());
                let text = if min == max {
                    format!("choose {min}")
                } else {
                    format!("choose {min} to {max}")
                };
                format!(" <span class=\"muted\">({text})</span>")
            } else {
                String::new()
            };
            format!("<fieldset class=\"choices\"><legend>Your decision{bounds}</legend>{all}</fieldset>")
        }
    }
}

/// The text fields: the decision itself for a free-text question; otherwise free text
/// *instead of* an option (only where `allowOther` allows it) and a note beside it.
fn texts(r: &Record) -> String {
    let spec = &r.answer;
    if spec.is_text() {
        return "<label class=\"note\">Your decision<textarea name=\"message\" rows=\"3\" required></textarea></label>"
            .into();
    }
    let other = if spec.kind.has_options() && spec.allows_other() {
        "<label class=\"other\">Or your own answer, instead of an option\
         <textarea name=\"other\" rows=\"2\"></textarea></label>"
    } else {
        ""
    };
    format!(
        "{other}<label class=\"note\">Note <span class=\"muted\">(optional)</span>\
         <textarea name=\"message\" rows=\"2\"></textarea></label>"
    )
}

fn decide_form(r: &Record) -> String {
    let spec = &r.answer;
    format!(
        "<form class=\"act decide\" data-op=\"decide\" data-id=\"{}\" data-kind=\"{}\" data-min=\"{}\" data-max=\"{}\" data-other=\"{}\">\
         {}{}<p class=\"problem\" role=\"alert\" hidden></p>\
         <button type=\"submit\" class=\"primary\">{}</button></form>",
        esc(&r.id),
        spec.kind.as_str(),
        spec.min(),
        spec.max(),
        spec.allows_other() && spec.kind.has_options(),
        options(r),
        texts(r),
        // Where several deciders must agree, a decision is an approval (docs/protocol.md §37).
        if agentx_clarify_core::people::quorum_of(r).is_some() {
            "Approve"
        } else {
            "Decide"
        },
    )
}

fn small_form(id: &str, op: &str, what: &str, text: &str) -> String {
    format!(
        "<form class=\"act\" data-op=\"{op}\" data-id=\"{id}\"><h3>{what}</h3>{text}\
         <button type=\"submit\">{what}</button></form>"
    )
}

/// The actions section for `viewer`, or `None` when no action is open to a person. On an
/// escalated record assigned to people, one who may not decide it is told who may instead
/// (`holding.rs`).
pub fn actions(r: &Record, routable: bool, viewer: &str) -> Option<String> {
    let id = esc(&r.id);
    let status = r.current_status();
    let holding = super::holding::holding(r, viewer);
    let may = holding.as_ref().is_none_or(|h| h.may_decide);
    // Decide: resolve an escalated record, or take an open one and resolve it.
    let escalated = status == Status::Escalated;
    let decide = (may && (human_may(r, Op::Resolve) || (!escalated && human_may(r, Op::Escalate))))
        .then(|| decide_form(r));
    let why = "<label>Why<textarea name=\"message\" rows=\"2\"></textarea></label>";
    let mut more = Vec::new();
    if let Some(form) = holding.as_ref().and_then(|h| h.hand_over.clone()) {
        more.push(form);
    }
    if human_may(r, Op::Escalate) {
        more.push(small_form(&id, "escalate", "Escalate", why));
    }
    if may && human_may(r, Op::Abandon) {
        more.push(small_form(&id, "abandon", "Abandon", why));
    }
    // Route again: the record waits on its target, and the target has a runner.
    if routable && matches!(status, Status::Pending | Status::Stale) {
        more.push(small_form(
            &id,
            "route",
            "Route again",
            &format!("<p>Run {}'s runner on this question now.</p>", esc(&r.to)),
        ));
    }
    let (line, take) = holding.map_or((String::new(), None), |h| (h.line, h.take));
    if decide.is_none() && more.is_empty() && line.is_empty() {
        return None;
    }
    let more = if more.is_empty() {
        String::new()
    } else {
        format!(
            "<details class=\"more-actions\"><summary>Other actions</summary><div class=\"small-forms\">{}</div></details>",
            more.join("")
        )
    };
    Some(format!(
        "<section class=\"actions\" aria-label=\"Decide\">{line}{}{}<p id=\"result\" role=\"status\" aria-live=\"polite\"></p>{more}</section>",
        take.unwrap_or_default(),
        decide.unwrap_or_default()
    ))
}
