//! `/issues/<n>` and `/agents` (statuses and the wait-for graph with its cycles, as the core
//! computes them). `/audit` and `/stats` have files of their own.

use std::sync::Arc;

use agentx_clarify_command::query;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde_json::Value;

use super::frame::{render, viewer};
use crate::html::{esc, link};
use crate::hub::App;

pub async fn issue(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: Uri,
    Path(n): Path<String>,
) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let title = format!("Issue #{}", agentx_clarify_core::error::shown(&n));
    let body = app
        .with_store(move |ws| {
            let issue = agentx_clarify_core::names::parse_issue(&n)?;
            let ledger = query::show_issue(ws, issue)?;
            let mut out = String::from(
                "<table><thead><tr><th>id</th><th>from → to</th><th>topic</th><th>status</th><th>rounds</th></tr></thead><tbody>",
            );
            for r in &ledger.clarifications {
                let status = r.current_status();
                out.push_str(&format!(
                    "<tr><td>{}</td><td>{} → {}</td><td>{}</td><td><span class=\"badge {}\">{}</span></td><td>{}/{}</td></tr>",
                    link(&format!("/clarifications/{}", r.id), &r.id),
                    esc(&r.from),
                    esc(&r.to),
                    esc(&r.topic),
                    esc(status.as_str()),
                    esc(status.as_str()),
                    r.folded_round(),
                    r.max_rounds
                ));
            }
            out.push_str("</tbody></table>");
            out.push_str(&link(&format!("/audit?issue={issue}"), "Audit this issue's ledger"));
            Ok(out)
        })
        .await;
    render(&v, &title, "", body)
}

pub async fn agents(State(app): State<Arc<App>>, headers: HeaderMap, uri: Uri) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let body = app
        .with_store(|ws| {
            let statuses = agentx_clarify_command::status::state_get(ws)?.to_json();
            let graphs = query::wait_for_graphs(ws, None)?;
            let mut out = String::from("<h2>Statuses</h2>");
            out.push_str(&statuses_table(&statuses));
            out.push_str("<h2>Who waits for whom</h2>");
            let waiting: Vec<_> = graphs.iter().filter(|g| !g.edges.is_empty()).collect();
            if waiting.is_empty() {
                out.push_str("<p class=\"empty\">No agent waits on another.</p>");
            }
            for g in waiting {
                out.push_str(&format!(
                    "<h3>{}</h3><ul class=\"edges\">",
                    link(
                        &format!("/issues/{}", g.issue_number),
                        &format!("Issue #{}", g.issue_number)
                    )
                ));
                for e in &g.edges {
                    out.push_str(&format!(
                        "<li>{} waits for {} on {} ({})</li>",
                        esc(&e.from),
                        esc(&e.to),
                        link(&format!("/clarifications/{}", e.id), &e.id),
                        esc(e.status)
                    ));
                }
                out.push_str("</ul>");
                for c in &g.cycles {
                    out.push_str(&format!(
                        "<p class=\"error cycle\" role=\"alert\">Deadlock: {} ({})</p>",
                        esc(&c.agents.join(" → ")),
                        esc(&c.ids.join(", "))
                    ));
                }
            }
            Ok(out)
        })
        .await;
    render(&v, "Agents", "/agents", body)
}

fn statuses_table(value: &Value) -> String {
    let Some(agents) = value.get("agents").and_then(Value::as_object) else {
        return "<p class=\"empty\">No agent has reported a status.</p>".into();
    };
    if agents.is_empty() {
        return "<p class=\"empty\">No agent has reported a status.</p>".into();
    }
    let mut out = String::from(
        "<table><thead><tr><th>agent</th><th>status</th><th>issue</th><th>since</th></tr></thead><tbody>",
    );
    for (name, s) in agents {
        let text = |k: &str| match s.get(k) {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            esc(&text("status")),
            esc(&text("issue")),
            esc(&super::frame::when_text(&text("updatedAt")))
        ));
    }
    out.push_str("</tbody></table>");
    out
}
