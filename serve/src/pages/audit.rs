//! `/audit`: `verify` over every ledger (chains and signatures), then the audit of an issue —
//! or, without one, of the issues decided most recently — as a table that leads with the
//! decision: per round who answered and who decided (the person, the door), what they chose
//! and wrote, when, who signed, and a mark for whether the record verifies.

use std::sync::Arc;

use agentx_clarify_command::{layer4, query};
use agentx_clarify_core::layer4::{Audit, AuditRound, AuditStep};
use agentx_clarify_core::ClarifyError;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde::Deserialize;

use super::frame::{render, viewer, when_text};
use crate::html::{esc, link};
use crate::hub::App;

/// Issues audited when none is asked for.
const RECENT: usize = 5;

#[derive(Deserialize, Default)]
pub struct AuditQuery {
    issue: Option<String>,
}

pub async fn audit(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<AuditQuery>,
) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let body = app
        .with_store(move |ws| {
            let mut out = verified(&query::verify(ws)?);
            let asked = q.issue.filter(|n| !n.trim().is_empty());
            out.push_str(&format!(
                "<form method=\"get\" action=\"/audit\" class=\"filters\"><label>Issue \
                 <input name=\"issue\" inputmode=\"numeric\" size=\"6\" value=\"{}\"></label>\
                 <button type=\"submit\">Audit</button></form>",
                esc(asked.as_deref().unwrap_or(""))
            ));
            let issues = match asked {
                Some(n) => vec![agentx_clarify_core::names::parse_issue(n.trim())?],
                None => recent_issues(ws)?,
            };
            if issues.is_empty() {
                out.push_str("<p class=\"empty\">No ledger to audit yet.</p>");
            }
            for issue in issues {
                let audited = layer4::audit(ws, &layer4::AuditTarget::Issue(issue))?;
                out.push_str(&table(issue, &audited));
            }
            Ok(out)
        })
        .await;
    render(&v, "Audit", "/audit", body)
}

fn verified(v: &query::VerifyOutcome) -> String {
    if v.problems.is_empty() {
        return format!(
            "<p class=\"ok\"><span class=\"mark-ok\" aria-hidden=\"true\">✓</span> verify: {} ledger file(s), every chain and signature intact.</p>",
            v.files
        );
    }
    let items: String = v
        .problems
        .iter()
        .map(|p| {
            format!(
                "<li><code>{}</code> {}: {}</li>",
                esc(&p.file),
                esc(p.id.as_deref().unwrap_or("-")),
                esc(&p.message)
            )
        })
        .collect();
    format!(
        "<p class=\"error\" role=\"alert\"><span class=\"mark-bad\" aria-hidden=\"true\">✗</span> verify: {} problem(s) in {} ledger file(s).</p><ul class=\"problems\">{items}</ul>",
        v.problems.len(),
        v.files
    )
}

/// The issues whose ledgers changed last (their latest entry), newest first.
fn recent_issues(ws: &agentx_clarify_workspace::WorkspaceStore) -> Result<Vec<u32>, ClarifyError> {
    let (ledgers, _) = query::read_all(ws)?;
    let mut latest: Vec<(i64, u32)> = ledgers
        .iter()
        .filter_map(|l| {
            let at = l
                .clarifications
                .iter()
                .flat_map(|r| r.thread.iter().map(|e| e.timestamp.ms()))
                .max()?;
            Some((at, l.issue_number))
        })
        .collect();
    latest.sort_unstable_by(|a, b| b.cmp(a));
    Ok(latest.into_iter().take(RECENT).map(|(_, i)| i).collect())
}

fn table(issue: u32, a: &Audit) -> String {
    let mark = if a.verified {
        "<span class=\"mark-ok\">✓ verified</span>"
    } else {
        "<span class=\"mark-bad\">✗ not verified</span>"
    };
    let mut out = format!(
        "<h2>{} <span class=\"muted\">{} round(s), {}</span> {mark}</h2>\
         <div class=\"table\"><table class=\"audit\"><thead><tr><th>round</th><th>question</th>\
         <th>answered</th><th>decided</th><th>chain</th></tr></thead><tbody>",
        link(&format!("/issues/{issue}"), &format!("Issue #{issue}")),
        a.total_rounds,
        if a.all_resolved {
            "all resolved"
        } else {
            "not all resolved"
        },
    );
    for r in &a.chain {
        out.push_str(&row(r, a));
    }
    out.push_str("</tbody></table></div>");
    for p in &a.problems {
        out.push_str(&format!(
            "<p class=\"error\">✗ {} {}: {}</p>",
            esc(p.code),
            esc(p.id.as_deref().unwrap_or("-")),
            esc(&p.message)
        ));
    }
    out
}

fn row(r: &AuditRound, a: &Audit) -> String {
    let ok = !a
        .problems
        .iter()
        .any(|p| p.id.as_deref() == Some(r.clarification_id.as_str()));
    let chain = if ok {
        "<span class=\"mark-ok\">✓</span> intact"
    } else {
        "<span class=\"mark-bad\">✗</span> broken"
    };
    format!(
        "<tr><td data-label=\"round\">{} · {}</td>\
         <td data-label=\"question\">{}<br><span class=\"muted\">{}, {}</span></td>\
         <td data-label=\"answered\">{}</td><td data-label=\"decided\">{}</td>\
         <td data-label=\"chain\">{chain}</td></tr>",
        r.round,
        link(
            &format!("/clarifications/{}", r.clarification_id),
            &r.clarification_id
        ),
        esc(&r.gap.question),
        esc(&when_text(&r.ask_timestamp)),
        signature(r.ask_signature.as_ref(), None),
        step(r.answered.as_ref()),
        step(r.decided.as_ref()),
    )
}

fn signature(sig: Option<&String>, signer: Option<&str>) -> String {
    match (sig, signer) {
        (Some(_), Some(s)) => format!("<span class=\"mark-ok\">✓</span> signed by {}", esc(s)),
        (Some(_), None) => String::from("<span class=\"mark-ok\">✓</span> signed"),
        (None, _) => String::from("<span class=\"unsigned\">unsigned</span>"),
    }
}

/// Who, what (label, value, note), when and who signed.
fn step(s: Option<&AuditStep>) -> String {
    let Some(s) = s else {
        return String::from("<span class=\"muted\">—</span>");
    };
    let what = match (&s.label, &s.value) {
        (Some(l), Some(v)) => format!(
            "<strong>{}</strong> <code>{}</code>",
            esc(l),
            esc(&super::history::value_text(v))
        ),
        _ => String::new(),
    };
    let note = s
        .note
        .as_deref()
        .map(|n| format!("<br>{}", esc(n)))
        .unwrap_or_default();
    format!(
        "<span class=\"by\">{}</span><br>{what}{note}<br><span class=\"muted\">{}, {}</span>",
        esc(&s.who()),
        esc(&when_text(&s.timestamp)),
        signature(s.signature.as_ref(), s.signer.as_deref()),
    )
}
