//! A record's history on its page (below the decision form): each entry with who wrote it —
//! the person behind a `human` entry (`by`, `via`) —, when, what it says, the option it chose
//! and who signed it. Bodies are text: a ledger's markup is never markup here.

use agentx_clarify_core::ledger::{Entry, Record};

use super::frame::when;
use crate::html::esc;

fn text<'e>(e: &'e Entry, key: &str) -> Option<&'e str> {
    e.extra
        .get(key)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
}

/// Who wrote `e`: `engineer`, or `human (alice via web)`.
pub fn who(e: &Entry) -> String {
    match (text(e, "by"), text(e, "via")) {
        (Some(by), Some(via)) => format!("{} ({by} via {via})", e.from),
        (Some(by), None) => format!("{} ({by})", e.from),
        _ => e.from.clone(),
    }
}

/// The name of whoever took the step: the person behind a `human` entry, else its author.
pub fn person(e: &Entry) -> String {
    text(e, "by").unwrap_or(&e.from).to_owned()
}

/// What an answer or resolution says: the chosen option's label (from its value), and the
/// note — the body when it is more than the label.
pub fn value_and_note(r: &Record, e: &Entry) -> (Option<String>, Option<String>) {
    let label = e.value.as_ref().map(|v| r.answer.render(v));
    let body = e.body.trim();
    let note = (!body.is_empty() && Some(body) != label.as_deref()).then(|| body.to_owned());
    (label, note)
}

/// A typed value as people read it: `lru`, `redis, lru`, `true`.
pub fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            items.iter().map(value_text).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

pub fn history(r: &Record) -> String {
    let mut out = format!(
        "<section class=\"history\" aria-labelledby=\"history-title\">\
         <h2 id=\"history-title\">History <span class=\"muted\">({} entries)</span></h2><ol>",
        r.thread.len()
    );
    for e in &r.thread {
        let (label, note) = value_and_note(r, e);
        let chose = label
            .map(|l| {
                let value = e.value.as_ref().map(value_text).unwrap_or_default();
                format!(
                    "<p class=\"chose\"><span class=\"k\">chose</span> <strong>{}</strong> <code>{}</code></p>",
                    esc(&l),
                    esc(&value)
                )
            })
            .unwrap_or_default();
        let body = note
            .map(|n| format!("<p class=\"body\">{}</p>", esc(&n)))
            .unwrap_or_default();
        let signed = e.signer.as_deref().map_or_else(
            || String::from("<span class=\"unsigned\">unsigned</span>"),
            |s| format!("signed by {}", esc(s)),
        );
        let reference = text(e, "ref")
            .filter(|u| u.starts_with("https://"))
            .map(|u| format!(" · <a href=\"{}\">where</a>", esc(u)))
            .unwrap_or_default();
        out.push_str(&format!(
            "<li class=\"entry {}\"><p class=\"line\"><span class=\"kind\">{}</span> \
             <span class=\"who\">{}</span> · {} · round {} · {signed}{reference}</p>{chose}{body}</li>",
            esc(e.kind.as_str()),
            esc(e.kind.as_str()),
            esc(&who(e)),
            when(e.timestamp.ms()),
            e.round,
        ));
    }
    out.push_str("</ol></section>");
    out
}
