//! `/decisions`: what the hub remembers (docs/protocol.md §36). Without a query, the decisions
//! the ledgers hold (the same ones `agentx decisions list` gives), each standing or superseded;
//! with `?q=`, a search over every record, the query's words marked in what is shown. Every
//! text is a ledger's, escaped before it is marked: a question holding markup shows it as text.

use std::collections::BTreeSet;
use std::sync::Arc;

use agentx_clarify_core::decisions::{Decision, Select, Standing};
use agentx_clarify_core::search::{query_words, Filter, Hit, Query as SearchQuery};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde::Deserialize;

use super::frame::{render, viewer, when_text};
use crate::html::{esc, link};
use crate::hub::App;

/// The most hits a page shows.
const SHOWN: usize = 50;

#[derive(Debug, Default, Deserialize)]
pub struct DecisionsQuery {
    q: Option<String>,
}

pub async fn decisions(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<DecisionsQuery>,
) -> Response {
    let v = match viewer(&app, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let asked = q.q.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let body = app
        .with_store(move |ws| {
            let mut out = form(asked.as_deref());
            match &asked {
                Some(text) => {
                    let query = SearchQuery { text, field: None };
                    let filter = Filter {
                        limit: Some(SHOWN),
                        ..Filter::default()
                    };
                    let found = agentx_clarify_command::search::search(ws, &query, &filter)?;
                    out.push_str(&hits(text, &found.hits));
                }
                None => {
                    let listed = agentx_clarify_command::decisions::list(ws, Select::default())?;
                    out.push_str(&table(&listed.decisions));
                }
            }
            Ok(out)
        })
        .await;
    render(&v, "Decisions", "/decisions", body)
}

fn form(q: Option<&str>) -> String {
    format!(
        "<form method=\"get\" action=\"/decisions\" role=\"search\" class=\"filters\">\
         <label for=\"q\">Search every question, answer and decision</label> \
         <input type=\"search\" id=\"q\" name=\"q\" value=\"{}\" placeholder=\"cache layer\"> \
         <button type=\"submit\">Search</button></form>",
        esc(q.unwrap_or_default())
    )
}

/// The decisions standing and superseded, newest issue last (the CLI's order).
fn table(ds: &[Decision]) -> String {
    if ds.is_empty() {
        return String::from(
            "<p class=\"empty\">No decisions yet: a decision is a resolved record that decides \
             a field or is of severity BLOCK.</p>",
        );
    }
    let rows: String = ds
        .iter()
        .map(|d| {
            let status = match (&d.status, &d.superseded_by) {
                (Standing::Superseded, Some(by)) => format!(
                    "superseded by {}",
                    link(&format!("/clarifications/{by}"), by)
                ),
                _ => String::from("accepted"),
            };
            let chosen = d
                .decision
                .label
                .as_deref()
                .map(|l| format!("<strong>{}</strong> ", esc(l)))
                .unwrap_or_default();
            format!(
                "<tr><td data-label=\"record\">{}</td><td data-label=\"topic\">{}</td>\
                 <td data-label=\"decision\">{chosen}{}</td><td data-label=\"by\">{}</td>\
                 <td data-label=\"when\">{}</td><td data-label=\"status\">{status}</td></tr>",
                link(&format!("/clarifications/{}", d.id), &d.id),
                esc(&d.topic),
                esc(&d.decision.text),
                esc(&d.decision.by),
                esc(&when_text(d.decision.at.as_str())),
            )
        })
        .collect();
    format!(
        "<table class=\"decisions\"><caption>{} decision(s)</caption><thead><tr>\
         <th scope=\"col\">Record</th><th scope=\"col\">Topic</th><th scope=\"col\">Decision</th>\
         <th scope=\"col\">By</th><th scope=\"col\">When</th><th scope=\"col\">Status</th>\
         </tr></thead><tbody>{rows}</tbody></table>",
        ds.len()
    )
}

/// The hits, best first, each with the query's words marked.
fn hits(text: &str, hits: &[Hit]) -> String {
    let words: BTreeSet<String> = query_words(text).into_iter().collect();
    if hits.is_empty() {
        return format!("<p class=\"empty\">Nothing matches “{}”.</p>", esc(text));
    }
    let items: String = hits
        .iter()
        .map(|h| {
            let decided = h.decision.as_ref().map_or_else(String::new, |d| {
                format!(
                    "<p class=\"decided\">Decided by {}: {}</p>",
                    esc(&d.by),
                    marked(&d.text, &words)
                )
            });
            let superseded = h.superseded_by.as_deref().map_or_else(String::new, |by| {
                format!(
                    " · superseded by {}",
                    link(&format!("/clarifications/{by}"), by)
                )
            });
            format!(
                "<li class=\"hit\"><p>{} · issue #{} · {}{superseded}</p><h2>{}</h2><p>{}</p>{decided}</li>",
                link(&format!("/clarifications/{}", h.id), &h.id),
                h.issue,
                esc(h.status.as_str()),
                marked(&h.topic, &words),
                marked(&h.question, &words),
            )
        })
        .collect();
    format!(
        "<p>{} record(s) for “{}”, best first.</p><ol class=\"hits\">{items}</ol>",
        hits.len(),
        esc(text)
    )
}

/// `text` escaped, with each of its words that is one of `words` (lowercased, as the search
/// splits words) inside `<mark>`.
fn marked(text: &str, words: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        if words.contains(&word.to_lowercase()) {
            out.push_str(&format!("<mark>{}</mark>", esc(word)));
        } else {
            out.push_str(&esc(word));
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push_str(&esc(&c.to_string()));
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_put_around_escaped_words_only() {
        let words: BTreeSet<String> = ["redis".to_owned(), "img".to_owned()].into();
        let shown = marked("Redis <img src=x onerror=alert(1)>?", &words);
        assert_eq!(
            shown,
            "<mark>Redis</mark> &lt;<mark>img</mark> src=x onerror=alert(1)&gt;?"
        );
    }
}
