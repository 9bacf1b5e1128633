//! `/`: what waits for a person first — escalated records, BLOCK before WARN, oldest first —
//! then the other open records. Filters: status, issue, agent, text. Paged.

use std::sync::Arc;

use agentx_clarify_command::{query, State as _};
use agentx_clarify_core::ledger::{EntryKind, Record, Severity, Status};
use agentx_clarify_core::listing::ListFilter;
use agentx_clarify_core::ClarifyError;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;

use super::frame::{age, render, viewer};
use crate::html::{esc, link, query_value};
use crate::hub::App;

const PAGE: usize = 50;

#[derive(Deserialize, Default, Clone)]
pub struct Filters {
    #[serde(default)]
    status: String,
    #[serde(default)]
    issue: String,
    #[serde(default)]
    agent: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<usize>,
}

pub async fn inbox(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(f): Query<Filters>,
) -> Response {
    let v = match viewer(&app, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let filters = f.clone();
    let root = app.root.clone();
    let open_view = Arc::clone(&app);
    let body = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            let filter = list_filter(&filters)?;
            // The open records from the server's view when it can answer (docs: open.rs);
            // an issue's own ledger is one read anyway. The view is memory: the store is
            // asked first, so a store that cannot be reached is a 503 as on every page,
            // never a page of remembered records.
            ws.read_statuses()?;
            // A page reloaded on a live event waits (briefly) for the view to apply that
            // event's write; a view that does not catch up within 1 s is not used.
            let latest = open_view.revision.load(std::sync::atomic::Ordering::SeqCst);
            let mut from_view = None;
            if filter.issue.is_none() && !filter.all && filter.statuses.iter().all(|s| s.is_open())
            {
                // Woken when the view applies the revision (no timer), within 1 s or not used.
                open_view
                    .open
                    .wait_applied(latest, std::time::Duration::from_secs(1));
                from_view = open_view
                    .open
                    .with(latest, &filter.statuses, |rows, errors| {
                        render_rows(&filters, rows, errors, now)
                    });
            }
            let page = match from_view {
                Some(page) => page,
                None => render_inbox(&filters, query::list(ws, &filter)?, now),
            };
            let trouble = super::deliveries::trouble(&root, now)?;
            Ok(format!("{trouble}{page}"))
        })
        .await;
    render(&v, "Inbox", "/", body)
}

fn list_filter(f: &Filters) -> Result<ListFilter, ClarifyError> {
    let issue = match f.issue.trim() {
        "" => None,
        n => Some(agentx_clarify_core::names::parse_issue(n)?),
    };
    let (statuses, all) = match f.status.as_str() {
        "" | "open" => (Vec::new(), false),
        "all" => (Vec::new(), true),
        s => (
            vec![Status::parse(s).ok_or_else(|| {
                ClarifyError::input(format!(
                    "unknown status '{}'",
                    agentx_clarify_core::error::shown(s)
                ))
            })?],
            false,
        ),
    };
    Ok(ListFilter {
        issue,
        statuses,
        all,
    })
}

/// The inbox order: escalated first, then BLOCK before WARN, then the oldest.
fn order_key(r: &Record) -> (bool, bool, i64, u64) {
    (
        r.current_status() != Status::Escalated,
        r.severity() != Severity::Block,
        r.created.as_ref().map_or(i64::MAX, |t| t.ms()),
        r.seq().unwrap_or(u64::MAX),
    )
}

fn matches(f: &Filters, r: &Record) -> bool {
    let agent = f.agent.trim();
    if !agent.is_empty() && r.from != agent && r.to != agent {
        return false;
    }
    let q = f.q.trim().to_lowercase();
    q.is_empty()
        || r.topic.to_lowercase().contains(&q)
        || r.id.to_lowercase().contains(&q)
        || r.thread.iter().any(|e| e.body.to_lowercase().contains(&q))
}

fn escalation_reason(r: &Record) -> Option<&str> {
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

fn render_inbox(f: &Filters, listed: query::Listed, now: i64) -> String {
    let rows = listed.records.iter().map(|(i, r)| (*i, r)).collect();
    render_rows(f, rows, listed.errors.len(), now)
}

/// The page from the listed records, borrowed (the server's view lends them without a copy:
/// only the page's rows are rendered, whatever the number of open records).
pub fn render_rows(f: &Filters, rows: Vec<(u32, &Record)>, errors: usize, now: i64) -> String {
    let mut rows: Vec<(u32, &Record)> = rows.into_iter().filter(|(_, r)| matches(f, r)).collect();
    rows.sort_by_key(|(_, r)| order_key(r));
    let total = rows.len();
    let page = f.page.unwrap_or(1).max(1);
    let shown: Vec<&(u32, &Record)> = rows.iter().skip((page - 1) * PAGE).take(PAGE).collect();
    let mut out = filters_form(f);
    if errors > 0 {
        out.push_str(&format!(
            "<p class=\"error\" role=\"alert\">{errors} ledger(s) could not be read: see Audit.</p>"
        ));
    }
    if shown.is_empty() {
        out.push_str("<p class=\"empty\">Nothing waits here.</p>");
    } else {
        out.push_str(
            "<table class=\"inbox\"><thead><tr><th>id</th><th>issue</th><th>from → to</th>\
             <th>topic</th><th>status</th><th>age</th><th>rounds</th><th>reason</th><th>kind</th>\
             </tr></thead><tbody>",
        );
        for (issue, r) in shown {
            let status = r.current_status();
            let severity = r.severity().as_str();
            out.push_str(&format!(
                "<tr class=\"{} sev-{}\" data-id=\"{}\"><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td>\
                 <td><span class=\"badge {}\">{}</span> <span class=\"sev\">{}</span></td><td>{}</td><td>{}/{}</td><td>{}</td><td>{}</td></tr>",
                esc(status.as_str()),
                esc(severity),
                esc(&r.id),
                link(&format!("/clarifications/{}", r.id), &r.id),
                link(&format!("/issues/{issue}"), &format!("#{issue}")),
                esc(&r.from),
                esc(&r.to),
                esc(&r.topic),
                esc(status.as_str()),
                esc(status.as_str()),
                esc(severity),
                r.created.as_ref().map_or(String::new(), |t| age(now, t.ms())),
                r.folded_round(),
                r.max_rounds,
                esc(escalation_reason(r).unwrap_or("")),
                esc(answer_kind(r)),
            ));
        }
        out.push_str("</tbody></table>");
    }
    out.push_str(&pager(f, page, total));
    out
}

fn filters_form(f: &Filters) -> String {
    let option = |value: &str, label: &str| {
        let selected = if f.status == value { " selected" } else { "" };
        format!("<option value=\"{value}\"{selected}>{label}</option>")
    };
    let statuses: String = [
        ("open", "open"),
        ("escalated", "escalated"),
        ("pending", "pending"),
        ("stale", "stale"),
        ("answered", "answered"),
        ("resolved", "resolved"),
        ("abandoned", "abandoned"),
        ("all", "all"),
    ]
    .iter()
    .map(|(v, l)| option(v, l))
    .collect();
    format!(
        "<form method=\"get\" action=\"/\" class=\"filters\" role=\"search\">\
         <label>Status <select name=\"status\">{statuses}</select></label>\
         <label>Issue <input name=\"issue\" inputmode=\"numeric\" size=\"6\" value=\"{}\"></label>\
         <label>Agent <input name=\"agent\" size=\"12\" value=\"{}\"></label>\
         <label>Text <input name=\"q\" type=\"search\" value=\"{}\"></label>\
         <button type=\"submit\">Filter</button></form>",
        esc(&f.issue),
        esc(&f.agent),
        esc(&f.q)
    )
}

fn pager(f: &Filters, page: usize, total: usize) -> String {
    let pages = total.div_ceil(PAGE).max(1);
    let href = |p: usize| {
        format!(
            "/?status={}&issue={}&agent={}&q={}&page={p}",
            query_value(&f.status),
            query_value(&f.issue),
            query_value(&f.agent),
            query_value(&f.q)
        )
    };
    let mut out = format!("<nav class=\"pager\" aria-label=\"Pages\"><span>{total} record(s) · page {page} of {pages}</span>");
    if page > 1 {
        out.push_str(&link(&href(page - 1), "← previous page"));
    }
    if page < pages {
        out.push_str(&link(&href(page + 1), "next page →"));
    }
    out.push_str("</nav>");
    out
}
