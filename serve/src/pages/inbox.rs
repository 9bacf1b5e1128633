//! `/`: what needs a person first — "Needs you": escalated records and open ones addressed to
//! a person, BLOCK before WARN, oldest first; the count in the tab's title — then the other
//! open records, each a card (`cards.rs`). Filters (folded away): status, issue, agent, text.
//! Paged.

use std::sync::Arc;

use agentx_clarify_command::{query, State as _};
use agentx_clarify_core::ledger::{Record, Severity, Status};
use agentx_clarify_core::listing::ListFilter;
use agentx_clarify_core::ClarifyError;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde::Deserialize;

use super::cards::Context;
use super::frame::{render_headed, viewer};
use crate::html::{esc, link, query_value};
use crate::hub::App;

const PAGE: usize = 50;

/// The search over every record and decision (the Decisions page's, §36), after the page's
/// records: the first screen stays what needs a person.
const SEARCH_FORM: &str = "<form method=\"get\" action=\"/decisions\" role=\"search\" \
     class=\"find\" aria-label=\"Search every record\"><label for=\"find\">Asked or decided \
     before?</label> <input type=\"search\" id=\"find\" name=\"q\" \
     placeholder=\"session cache\"> <button type=\"submit\">Search</button></form>";

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
    uri: Uri,
    Query(f): Query<Filters>,
) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let filters = f.clone();
    let open_view = Arc::clone(&app);
    let me = v.human.clone();
    let viewer = v.human.clone();
    let page = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            let filter = list_filter(&filters)?;
            // The open records from the server's view when it can answer (docs: open.rs);
            // an issue's own ledger is one read anyway. The view is memory: the store is
            // asked first, so a store that cannot be reached is a 503 as on every page,
            // never a page of remembered records.
            ws.read_statuses()?;
            // Who counts as a person here: whoever holds a human token, and the viewer.
            let mut people: Vec<String> = open_view
                .tokens
                .load()?
                .into_iter()
                .filter(|t| t.kind == crate::tokens::Kind::Human)
                .map(|t| t.name)
                .collect();
            people.push(me);
            let ctx = Context {
                now,
                people: &people,
                viewer: &viewer,
            };
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
                        render_rows(&filters, rows, errors, &ctx)
                    });
            }
            let (needs_you, page) = match from_view {
                Some(page) => page,
                None => render_inbox(&filters, query::list(ws, &filter)?, &ctx),
            };
            let trouble = super::deliveries::trouble(ws, now)?;
            Ok((needs_you, format!("{trouble}{page}")))
        })
        .await;
    // The count of what waits for a person, in the tab's title too.
    let title = match &page {
        Ok((n, _)) if *n > 0 => format!("({n}) Inbox"),
        _ => String::from("Inbox"),
    };
    // Signing in on a phone: a one-time link for the person at this screen.
    let phone = v.csrf.as_deref().map_or(String::new(), |t| {
        format!(
            "<form method=\"post\" action=\"/login/link\" class=\"phone-link\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\">A sign-in link for {} (for a phone)</button></form>",
            esc(t),
            esc(&v.human)
        )
    });
    render_headed(
        &v,
        &title,
        "/",
        page.map(|(_, body)| (String::from("Inbox"), format!("{body}{phone}"))),
    )
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

/// Whether the signed-in person must act: the record is escalated and theirs (assigned to
/// them and held by nobody else, held by them, or assigned to nobody: docs/protocol.md §37),
/// or it is addressed to a person and still open.
fn needs_person(r: &Record, ctx: &Context<'_>) -> bool {
    let status = r.current_status();
    if status == Status::Escalated {
        return super::cards::for_viewer(r, ctx.viewer);
    }
    status.is_open() && ctx.people.contains(&r.to)
}

fn render_inbox(f: &Filters, listed: query::Listed, ctx: &Context<'_>) -> (usize, String) {
    let rows = listed.records.iter().map(|(i, r)| (*i, r)).collect();
    render_rows(f, rows, listed.errors.len(), ctx)
}

/// The page from the listed records, borrowed (the server's view lends them without a copy:
/// only the page's rows are rendered, whatever the number of open records), and how many
/// need a person. "Needs you" comes first; a question asked back sits under the one it was
/// asked back from (one conversation, one place).
pub fn render_rows(
    f: &Filters,
    rows: Vec<(u32, &Record)>,
    errors: usize,
    ctx: &Context<'_>,
) -> (usize, String) {
    let mut rows: Vec<(u32, &Record)> = rows.into_iter().filter(|(_, r)| matches(f, r)).collect();
    rows.sort_by_key(|(_, r)| (!needs_person(r, ctx), order_key(r)));
    let total = rows.len();
    let needs_you = rows.iter().filter(|(_, r)| needs_person(r, ctx)).count();
    let page = f.page.unwrap_or(1).max(1);
    let shown: Vec<(u32, &Record)> = rows
        .iter()
        .skip((page - 1) * PAGE)
        .take(PAGE)
        .copied()
        .collect();
    let mut out = filters_form(f);
    if errors > 0 {
        out.push_str(&format!(
            "<p class=\"error\" role=\"alert\">{errors} ledger(s) could not be read: see Audit.</p>"
        ));
    }
    if shown.is_empty() {
        out.push_str("<p class=\"empty\">Nothing waits here.</p>");
    } else {
        let (mine, rest): (Vec<_>, Vec<_>) = shown.iter().partition(|(_, r)| needs_person(r, ctx));
        if !mine.is_empty() {
            out.push_str(&format!(
                "<section class=\"needs-you\" aria-labelledby=\"needs-you\">\
                 <h2 id=\"needs-you\">Needs you <span class=\"count\">{needs_you}</span></h2>{}</section>",
                super::cards::list(&mine, &rows, ctx)
            ));
        }
        if !rest.is_empty() {
            let heading = if mine.is_empty() && needs_you == 0 {
                "<h2 id=\"others\">Nothing needs you now <span class=\"muted\">— open records</span></h2>"
            } else {
                "<h2 id=\"others\">Other records</h2>"
            };
            out.push_str(&format!(
                "<section class=\"others\" aria-labelledby=\"others\">{heading}{}</section>",
                super::cards::list(&rest, &rows, ctx)
            ));
        }
    }
    out.push_str(&pager(f, page, total));
    out.push_str(SEARCH_FORM);
    (needs_you, out)
}

/// The filters, folded away (open when one is set): on a phone they would push the records
/// off the first screen.
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
    let set = [&f.issue, &f.agent, &f.q]
        .iter()
        .any(|v| !v.trim().is_empty())
        || !matches!(f.status.as_str(), "" | "open");
    format!(
        "<details class=\"filters\"{}><summary>Filter</summary>\
         <form method=\"get\" action=\"/\" role=\"search\">\
         <label>Status <select name=\"status\">{statuses}</select></label>\
         <label>Issue <input name=\"issue\" inputmode=\"numeric\" size=\"6\" value=\"{}\"></label>\
         <label>Agent <input name=\"agent\" size=\"12\" value=\"{}\"></label>\
         <label>Text <input name=\"q\" type=\"search\" value=\"{}\"></label>\
         <button type=\"submit\">Filter</button></form></details>",
        if set { " open" } else { "" },
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
