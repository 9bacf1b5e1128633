//! `/clarifications/<id>`: the whole thread (the core's markdown, sent as text), its Layer 4
//! fields, who wrote each entry, and the actions the transition table allows `human`, each as
//! a form the page's script posts to `/api/v1/call` (the result shows without a reload).

use std::sync::Arc;

use agentx_clarify_command::query;
use agentx_clarify_core::names::HUMAN;
use agentx_clarify_core::ops::{who_may, Op};
use agentx_clarify_core::render::markdown_thread;
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::Record;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;

use super::frame::{render, viewer};
use super::inbox::answer_kind;
use crate::html::{esc, link};
use crate::hub::App;

pub async fn thread(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let v = match viewer(&app, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let title = format!("Clarification {id}");
    let body = app
        .with_store(move |ws| {
            let (issue, record) = query::show_id(ws, &id)?;
            let routable = agentx_clarify_command::route::route_runner(ws, &record.to).is_ok();
            Ok(render_thread(issue, &record, routable))
        })
        .await;
    render(&v, &title, "", body)
}

/// Whether the core's table lets `human` take `op` on the record now.
fn human_may(r: &Record, op: Op) -> bool {
    who_may(r.current_status(), op, r.is_legacy_empty())
        .is_some_and(|who| who.admits(HUMAN, &r.from, &r.to))
}

fn render_thread(issue: u32, r: &Record, routable: bool) -> String {
    let status = r.current_status();
    let mut out = format!(
        "<p class=\"meta\">{} · {} → {} · <span class=\"badge {}\">{}</span> · {} · round {}/{} · {}</p>",
        link(&format!("/issues/{issue}"), &format!("issue #{issue}")),
        esc(&r.from),
        esc(&r.to),
        esc(status.as_str()),
        esc(status.as_str()),
        esc(r.severity().as_str()),
        r.folded_round(),
        r.max_rounds,
        if r.blocking { "blocking" } else { "non-blocking" },
    );
    out.push_str(&layer4(r));
    out.push_str(&format!(
        "<section aria-label=\"Thread\"><div class=\"md\" data-md>{}</div></section>",
        esc(&markdown_thread(issue, r))
    ));
    out.push_str(&entries(r));
    out.push_str(&actions(r, routable));
    out
}

fn layer4(r: &Record) -> String {
    let mut rows = Vec::new();
    let mut row = |k: &str, v: String| rows.push(format!("<dt>{k}</dt><dd>{v}</dd>"));
    if let Some(f) = &r.field {
        row("field", esc(f));
    }
    if let Some(c) = &r.context {
        row("context", format!("<span class=\"pre\">{}</span>", esc(c)));
    }
    if !r.blocked_operations.is_empty() {
        row("blocks", esc(&r.blocked_operations.join(", ")));
    }
    if !r.suggestions.is_empty() {
        row("suggestions", esc(&r.suggestions.join(" · ")));
    }
    if let Some(s) = &r.session_id {
        row("session", esc(s));
    }
    if let Some(g) = &r.gap_id {
        row("gap", esc(g));
    }
    row("answer kind", esc(answer_kind(r)));
    format!("<dl class=\"fields\">{}</dl>", rows.join(""))
}

/// Who wrote what: author, the person behind a `human` entry (`by`, `via`), the signer.
fn entries(r: &Record) -> String {
    let mut out = String::from(
        "<details class=\"entries\"><summary>Entries (who wrote each, signatures)</summary>\
         <table><thead><tr><th>round</th><th>type</th><th>from</th><th>by</th><th>signed</th><th>time</th></tr></thead><tbody>",
    );
    for e in &r.thread {
        let text = |k: &str| e.extra.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let by = match (text("by"), text("via")) {
            ("", _) => String::new(),
            (by, "") => esc(by),
            (by, via) => format!("{} via {}", esc(by), esc(via)),
        };
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"by\">{by}</td><td>{}</td><td>{}</td></tr>",
            e.round,
            esc(e.kind.as_str()),
            esc(&e.from),
            esc(e.signer.as_deref().unwrap_or("")),
            esc(&format_ms(e.timestamp.ms())),
        ));
    }
    out.push_str("</tbody></table></details>");
    out
}

/// The answer field for the record's kind (docs/protocol.md §22): yes/no for `confirm`, a
/// choice per option for `choice` (radio) and `multi_choice` (checkboxes), and a text box for
/// text — and for "other" or a note beside a typed decision. The server checks the value
/// against the kind whatever the page sends (`INVALID_ANSWER`).
fn answer_field(r: &Record, label: &str) -> String {
    use agentx_clarify_core::kinds::AnswerKind;
    let spec = &r.answer;
    let choice = |input: &str, value: &str, shown: &str, note: Option<&str>| {
        let note = note.map_or(String::new(), |d| {
            format!(" <span class=\"muted\">{}</span>", esc(d))
        });
        format!(
            "<label class=\"option\"><input type=\"{input}\" name=\"value\" value=\"{}\"> {}{note}</label>",
            esc(value),
            esc(shown)
        )
    };
    let (choices, text_label) = match spec.kind {
        AnswerKind::Text => (String::new(), label.to_owned()),
        AnswerKind::Confirm => (
            format!(
                "<fieldset><legend>{label}</legend>{}{}</fieldset>",
                choice("radio", "true", "Yes", None),
                choice("radio", "false", "No", None)
            ),
            String::from("Note (optional)"),
        ),
        AnswerKind::Choice | AnswerKind::MultiChoice => {
            let input = if spec.kind == AnswerKind::Choice {
                "radio"
            } else {
                "checkbox"
            };
            let bounds = if spec.kind == AnswerKind::MultiChoice {
                format!(
                    " <span class=\"muted\">(choose {} to {})</span>",
                    spec.min(),
                    spec.max()
                )
            } else {
                String::new()
            };
            let options: String = spec
                .options
                .iter()
                .map(|o| choice(input, &o.value, o.shown(), o.description.as_deref()))
                .collect();
            let text = if spec.allows_other() {
                "Other (free text, instead of an option)"
            } else {
                "Note (optional)"
            };
            (
                format!("<fieldset><legend>{label}{bounds}</legend>{options}</fieldset>"),
                text.to_owned(),
            )
        }
    };
    format!(
        "{choices}<label>{}<textarea name=\"message\" rows=\"3\"></textarea></label>",
        esc(&text_label)
    )
}

fn actions(r: &Record, routable: bool) -> String {
    let id = esc(&r.id);
    let mut forms = Vec::new();
    // Decide: resolve an escalated record, or take an open one and resolve it.
    let escalated = r.current_status() == agentx_clarify_core::Status::Escalated;
    if human_may(r, Op::Resolve) || (!escalated && human_may(r, Op::Escalate)) {
        forms.push(format!(
            "<form class=\"act\" data-op=\"decide\" data-id=\"{id}\" data-kind=\"{}\"><h3>Decide</h3>{}\
             <button type=\"submit\">Decide</button></form>",
            r.answer.kind.as_str(),
            answer_field(r, "Decision")
        ));
    }
    if human_may(r, Op::Escalate) {
        forms.push(format!(
            "<form class=\"act\" data-op=\"escalate\" data-id=\"{id}\"><h3>Escalate</h3>\
             <label>Why<textarea name=\"message\" rows=\"2\"></textarea></label>\
             <button type=\"submit\">Escalate</button></form>"
        ));
    }
    if human_may(r, Op::Abandon) {
        forms.push(format!(
            "<form class=\"act\" data-op=\"abandon\" data-id=\"{id}\"><h3>Abandon</h3>\
             <label>Why<textarea name=\"message\" rows=\"2\"></textarea></label>\
             <button type=\"submit\">Abandon</button></form>"
        ));
    }
    // Route again: the record waits on its target, and the target has a runner.
    let waits = matches!(
        r.current_status(),
        agentx_clarify_core::Status::Pending | agentx_clarify_core::Status::Stale
    );
    if routable && waits {
        forms.push(format!(
            "<form class=\"act\" data-op=\"route\" data-id=\"{id}\"><h3>Route again</h3>\
             <p>Run {}'s runner on this question now.</p>\
             <button type=\"submit\">Route again</button></form>",
            esc(&r.to)
        ));
    }
    if forms.is_empty() {
        return "<p class=\"closed\">No action is open to a person on this record now.</p>".into();
    }
    format!(
        "<section class=\"actions\" aria-label=\"Actions\">{}<p id=\"result\" role=\"status\" aria-live=\"polite\"></p></section>",
        forms.join("")
    )
}
