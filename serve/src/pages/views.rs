//! `/issues/<n>`, `/agents` (statuses and the wait-for graph with its cycles, as the core
//! computes them), `/audit` (`verify`: chains and signatures) and `/stats`.

use std::sync::Arc;

use agentx_clarify_command::{layer4, query};
use agentx_clarify_core::render::text_stats;
use agentx_clarify_core::ClarifyError;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::frame::{render, viewer};
use crate::html::{esc, link};
use crate::hub::App;

pub async fn issue(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(n): Path<String>,
) -> Response {
    let v = match viewer(&app, &headers).await {
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

pub async fn agents(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let v = match viewer(&app, &headers).await {
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
            esc(&text("updatedAt"))
        ));
    }
    out.push_str("</tbody></table>");
    out
}

#[derive(Deserialize, Default)]
pub struct AuditQuery {
    issue: Option<String>,
}

pub async fn audit(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> Response {
    let v = match viewer(&app, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let body = app
        .with_store(move |ws| {
            let verified = query::verify(ws)?;
            let mut out = if verified.problems.is_empty() {
                format!(
                    "<p class=\"ok\">verify: {} ledger file(s), every chain and signature intact.</p>",
                    verified.files
                )
            } else {
                format!(
                    "<p class=\"error\" role=\"alert\">verify: {} problem(s) in {} ledger file(s).</p>",
                    verified.problems.len(),
                    verified.files
                )
            };
            let problems = serde_json::to_value(&verified.problems).unwrap_or(Value::Null);
            if let Some(list) = problems.as_array().filter(|l| !l.is_empty()) {
                out.push_str("<ul class=\"problems\">");
                for p in list {
                    out.push_str(&format!("<li>{}</li>", esc(&compact(p))));
                }
                out.push_str("</ul>");
            }
            out.push_str(
                "<form method=\"get\" action=\"/audit\" class=\"filters\"><label>Issue \
                 <input name=\"issue\" inputmode=\"numeric\" size=\"6\"></label>\
                 <button type=\"submit\">Audit</button></form>",
            );
            if let Some(n) = q.issue.filter(|n| !n.trim().is_empty()) {
                let issue = agentx_clarify_core::names::parse_issue(n.trim())?;
                let audited = layer4::audit_json(&layer4::audit(
                    ws,
                    &layer4::AuditTarget::Issue(issue),
                )?);
                let text = serde_json::to_string_pretty(&audited).map_err(|e| {
                    ClarifyError::Internal {
                        message: e.to_string(),
                    }
                })?;
                out.push_str(&format!(
                    "<h2>Audit of issue #{issue}</h2><pre class=\"json\">{}</pre>",
                    esc(&text)
                ));
            }
            Ok(out)
        })
        .await;
    render(&v, "Audit", "/audit", body)
}

fn compact(v: &Value) -> String {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(" · "),
        other => other.to_string(),
    }
}

pub async fn stats(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let v = match viewer(&app, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let body = app
        .with_store(|ws| {
            let s = query::stats(ws, None)?;
            Ok(format!(
                "<pre class=\"stats\">{}</pre>",
                esc(&text_stats(&s.stats))
            ))
        })
        .await;
    render(&v, "Stats", "/stats", body)
}
