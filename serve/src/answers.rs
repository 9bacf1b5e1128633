//! `GET` and `POST /a/<token>`: answer links (docs/protocol.md §35). A GET never decides
//! (mail scanners, chat unfurls and link previews fetch URLs): it shows the question and its
//! form. A POST takes the link under the `answer-links` document's lock — the first use wins
//! on every server — and decides through the command layer as the inbox does, the entry the
//! sink holder's (`by: "<sink>-link"`, `via: "link"` or `"ntfy"`, `ref: "<sink>/<delivery>"`).
//! A link for a record that moved on says what happened and writes nothing; a revoked link (its
//! person's token revoked, or the person removed from `people.toml`) says so, shows nothing of
//! the record, and writes nothing. Wrong tokens are counted as failed sign-ins are
//! (`sessions::Logins`); a log line shows a token's first six characters only.

use std::net::SocketAddr;
use std::sync::Arc;

use agentx_clarify_command::{query, Files as _};
use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::ops::{Attribution, Verdict};
use agentx_clarify_core::people::People;
use agentx_clarify_core::Record;
use agentx_clarify_notify::links::{self, Claim, Link};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

use crate::answer_view::{confirm_page, said, what_happened};
use crate::hub::App;

/// A token as minted: 32 bytes in unpadded base64url.
fn well_formed(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn html(status: StatusCode, page: String) -> Response {
    (status, Html(page)).into_response()
}

/// The link, its record and the workspace's people (read on every use, so a person removed
/// from `people.toml` is refused at once), or the page that refuses (unknown, rate-limited,
/// unreadable).
async fn look(
    app: &Arc<App>,
    peer: SocketAddr,
    token: &str,
) -> Result<(Link, Record, People), Response> {
    let counted = format!("a/{}", links::shown(token));
    if app.link_failures.blocked(peer.ip(), &counted) {
        return Err(html(
            StatusCode::TOO_MANY_REQUESTS,
            said(
                "Too many tries",
                "Too many unknown links from here; wait a minute.",
                None,
            ),
        ));
    }
    let owned = token.to_owned();
    let found = if well_formed(token) {
        app.with_store(move |ws| {
            let Some(link) = links::find(ws, &owned)? else {
                return Ok(None);
            };
            let (_, record) = query::show_id(ws, &link.record)?;
            Ok(Some((link, record, ws.load_people()?)))
        })
        .await
    } else {
        Ok(None)
    };
    match found {
        Ok(Some(found)) => Ok(found),
        Ok(None) => {
            crate::log::line(&format!(
                "unknown answer link {}… from {}",
                links::shown(token),
                peer.ip()
            ));
            if app.link_failures.failed(peer.ip(), &counted) {
                tokio::time::sleep(crate::sessions::SLOW_FOR).await;
            }
            Err(html(
                StatusCode::NOT_FOUND,
                said("Unknown link", "This answer link is not valid.", None),
            ))
        }
        Err(e) => Err(html(
            StatusCode::SERVICE_UNAVAILABLE,
            said("Not now", &format!("The store cannot be read: {e}"), None),
        )),
    }
}

/// The page of a revoked link: 403, and nothing of the record (its holder may no longer
/// decide, so they need not learn how it went either).
fn revoked() -> Response {
    html(
        StatusCode::FORBIDDEN,
        said(
            "Link revoked",
            "This answer link was revoked: the person it was sent to may no longer decide from it. Nothing was written.",
            None,
        ),
    )
}

/// Why `link` cannot decide `r` now, as the page that says so; `None` while it can. A revoked
/// link is refused first, before anything about the record is told.
fn moved_on(link: &Link, r: &Record, people: &People, now: i64) -> Option<Response> {
    if link.revoked_for(people) {
        return Some(revoked());
    }
    if let Some(text) = what_happened(r) {
        return Some(html(
            StatusCode::CONFLICT,
            said("Already decided", &text, Some(r)),
        ));
    }
    if let Some(at) = link.used {
        let text = format!(
            "This link was used at {}.",
            agentx_clarify_core::time::format_ms(at)
        );
        return Some(html(
            StatusCode::CONFLICT,
            said("Link used", &text, Some(r)),
        ));
    }
    if r.folded_round() != link.round {
        let text = "The question changed since this link was sent (a follow-up): open the thread to answer it.";
        return Some(html(
            StatusCode::CONFLICT,
            said("Question changed", text, Some(r)),
        ));
    }
    if link.expires <= now || !links::decidable(r) {
        let text = "This answer link has expired.";
        return Some(html(StatusCode::GONE, said("Link expired", text, Some(r))));
    }
    None
}

pub async fn page(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
) -> Response {
    let (link, record, people) = match look(&app, peer, &token).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let now = agentx_clarify_store::clock::system_now_ms();
    if let Some(refused) = moved_on(&link, &record, &people, now) {
        return refused;
    }
    html(StatusCode::OK, confirm_page(&token, &link, &record))
}

pub async fn answer(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(token): Path<String>,
    body: Bytes,
) -> Response {
    let (link, record, people) = match look(&app, peer, &token).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let now = agentx_clarify_store::clock::system_now_ms();
    if let Some(refused) = moved_on(&link, &record, &people, now) {
        return refused;
    }
    let form = form_fields(&body);
    let field = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    // The page names the record and round it was drawn for: a page of one record cannot
    // decide another, and a page of an earlier round none.
    if field("id").is_some_and(|id| id != link.record)
        || field("round").is_some_and(|n| n != link.round.to_string())
    {
        let text = format!("This link is for {} only.", link.record);
        return html(
            StatusCode::BAD_REQUEST,
            said("Wrong record", &text, Some(&record)),
        );
    }
    let verdict = match decision(&link, &record, &form) {
        Ok(verdict) => verdict,
        Err(why) => {
            return html(
                StatusCode::BAD_REQUEST,
                said("Not a decision yet", &why, Some(&record)),
            )
        }
    };
    decide(&app, &token, link, verdict).await
}

/// Takes the link, decides, and gives the link back when the decision was refused.
async fn decide(app: &Arc<App>, token: &str, link: Link, verdict: Verdict) -> Response {
    let owned = token.to_owned();
    let now = agentx_clarify_store::clock::system_now_ms();
    let claimed = app
        .with_store(move |ws| {
            // People read again at the claim: a removal saved since the page's check still
            // refuses.
            links::claim(ws, &ws.load_config()?, &ws.load_people()?, &owned, now)
        })
        .await;
    let won = match claimed {
        Ok(Claim::Won(l)) => l,
        Ok(Claim::Revoked(_)) => return revoked(),
        Ok(Claim::Used(_)) | Ok(Claim::Expired(_)) | Ok(Claim::Unknown) => {
            return after_the_fact(app, &link).await
        }
        Err(e) => {
            return html(
                StatusCode::SERVICE_UNAVAILABLE,
                said(
                    "Not now",
                    &format!("The store cannot be written: {e}"),
                    None,
                ),
            )
        }
    };
    let by = Attribution {
        by: won.by(),
        via: won.via(),
        reference: Some(won.reference()),
    };
    // The command layer's own `decide`, as the inbox's API call runs it: typed inside the
    // house, the attribution the link's.
    let id = won.record.clone();
    let done = app
        .with_store(move |ws| {
            let now = agentx_clarify_store::clock::system_now_ms();
            agentx_clarify_command::decide(ws, now, &id, verdict.message, verdict.value, &by)
        })
        .await;
    let refused = match done {
        Ok(mutation) => match mutation.error {
            None => {
                crate::log::line(&format!(
                    "answer link {}… decided {} ({})",
                    links::shown(token),
                    won.record,
                    won.by()
                ));
                let text = match mutation.clarification {
                    Some(_) => "Decided. The agent that asked goes on with your answer.",
                    None => "Decided.",
                };
                return after(app, &won, StatusCode::OK, text).await;
            }
            Some(e) => e,
        },
        Err(e) => e,
    };
    // Refused: the link may be used again (until it expires), unless the record moved on.
    let sha = won.sha256.clone();
    let _ = app
        .with_store(move |ws| links::release(ws, &ws.load_config()?, &sha))
        .await;
    let why = refused.to_string();
    let status = crate::status::of_code(refused.error_code());
    let id = link.record.clone();
    let now = app.with_store(move |ws| query::show_id(ws, &id)).await;
    match now {
        Ok((_, r)) if what_happened(&r).is_some() => after_the_fact(app, &link).await,
        _ => html(status, said("Not decided", &why, None)),
    }
}

/// The page after a decision: the record as it is now, with `text`.
async fn after(app: &Arc<App>, link: &Link, status: StatusCode, text: &str) -> Response {
    let id = link.record.clone();
    let record = app.with_store(move |ws| query::show_id(ws, &id)).await;
    let shown = record
        .as_ref()
        .ok()
        .and_then(|(_, r)| what_happened(r))
        .unwrap_or_else(|| text.to_owned());
    html(
        status,
        said("Decided", &shown, record.as_ref().ok().map(|(_, r)| r)),
    )
}

/// The page of a link someone else used first: what happened to its record.
async fn after_the_fact(app: &Arc<App>, link: &Link) -> Response {
    let id = link.record.clone();
    let record = app.with_store(move |ws| query::show_id(ws, &id)).await;
    match record {
        Ok((_, r)) => {
            let text = what_happened(&r)
                .unwrap_or_else(|| "This link was just used; nothing was written.".into());
            html(
                StatusCode::CONFLICT,
                said("Already decided", &text, Some(&r)),
            )
        }
        Err(e) => html(
            StatusCode::SERVICE_UNAVAILABLE,
            said("Not now", &format!("The store cannot be read: {e}"), None),
        ),
    }
}

/// The decision the link and the form give: a per-option link's value, or the page's choice
/// (the same rule as the inbox's form; the command checks it again).
fn decision(link: &Link, r: &Record, form: &[(String, String)]) -> Result<Verdict, String> {
    let text = |k: &str| {
        form.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let note = text("message");
    if let Some(value) = &link.value {
        return Ok(Verdict {
            message: note,
            value: Some(value.clone()),
        });
    }
    let checked: Vec<&str> = form
        .iter()
        .filter(|(n, _)| n == "value")
        .map(|(_, v)| v.as_str())
        .collect();
    let kind = r.answer.kind;
    if kind == AnswerKind::Text {
        let note = note.ok_or("Write your decision first.")?;
        return Ok(Verdict {
            message: Some(note),
            value: None,
        });
    }
    if let Some(other) = text("other") {
        if !checked.is_empty() {
            return Err("Choose an option or write your own answer, not both.".into());
        }
        let message = note.map_or(other.clone(), |n| format!("{other}\n\n{n}"));
        return Ok(Verdict {
            message: Some(message),
            value: None,
        });
    }
    let value = match (kind, checked.as_slice()) {
        (_, []) => return Err("Choose one of the options first.".into()),
        (AnswerKind::MultiChoice, all) => json!(all),
        (AnswerKind::Confirm, [one]) => json!(*one == "true"),
        (_, [one]) => json!(one),
        _ => return Err("Choose one option.".into()),
    };
    Ok(Verdict {
        message: note,
        value: Some(value),
    })
}

/// An `application/x-www-form-urlencoded` body's fields, in order (a repeated name, as
/// checkboxes send, stays repeated). Any other body (an ntfy action's empty POST) has none.
pub(crate) fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(body);
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_form_body_decodes_and_repeats() {
        assert_eq!(
            form_fields(b"value=a&value=b+c&message=x%26y%zz&id="),
            vec![
                ("value".into(), "a".into()),
                ("value".into(), "b c".into()),
                ("message".into(), "x&y%zz".into()),
                ("id".into(), String::new()),
            ]
        );
        assert!(form_fields(b"").is_empty());
        assert_eq!(percent_decode("%4"), "%4");
        assert!(well_formed(&"a".repeat(43)) && !well_formed("short"));
    }
}
