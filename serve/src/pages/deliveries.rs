//! The notifications that are not getting through (docs/notifications.md), on top of the
//! inbox: a delivery that failed and waits for its next try, or one that is dead. The person
//! who opens the inbox is then told that nobody else was — the reason a notification exists.
//! The outbox is wherever the workspace keeps its state (`agentx_clarify_notify::home`).

use agentx_clarify_command::Store;
use agentx_clarify_core::notify::outbox::{Delivery, State};
use agentx_clarify_core::ClarifyError;

use super::frame::age;
use crate::html::{esc, link};

/// Rows shown at most; the rest are counted (`agentx notify status` lists them all).
const SHOWN: usize = 20;
/// Characters of a delivery's last error shown at most.
const SHOWN_ERROR: usize = 300;

/// The block, or nothing when every delivery is fine.
pub fn trouble<S: Store>(store: &S, now: i64) -> Result<String, ClarifyError> {
    let outbox = match agentx_clarify_notify::home::Home(store).read_outbox() {
        Ok(o) => o,
        // A store that cannot be reached is the page's error (503, as every page answers).
        Err(e @ ClarifyError::Io { .. }) => return Err(e),
        Err(e) => {
            return Ok(format!(
            "<p class=\"error\" role=\"alert\">The notification outbox could not be read: {}</p>",
            esc(&e.to_string())
        ))
        }
    };
    let mut bad: Vec<&Delivery> = outbox
        .deliveries
        .values()
        .filter(|d| d.state == State::Dead || (d.state == State::Pending && d.last_error.is_some()))
        .collect();
    if bad.is_empty() {
        return Ok(String::new());
    }
    // Dead first (nothing will try them again), then by how long they have waited.
    bad.sort_by_key(|d| (d.state != State::Dead, d.due));
    let dead = bad.iter().filter(|d| d.state == State::Dead).count();
    let mut out = format!(
        "<section class=\"deliveries\" aria-labelledby=\"deliveries-title\">\
         <h2 id=\"deliveries-title\">Notifications not delivered</h2>\
         <p role=\"alert\">{} failing, {} dead: the people these sinks tell have not heard of these events. \
         <code>agentx notify status</code> lists them; <code>agentx notify retry --dead</code> tries the dead again.</p>\
         <table><thead><tr><th>state</th><th>sink</th><th>event</th><th>record</th><th>tries</th>\
         <th>last error</th><th>next try</th></tr></thead><tbody>",
        bad.len() - dead,
        dead
    );
    for d in bad.iter().take(SHOWN) {
        let (state, next) = if d.state == State::Dead {
            ("dead", String::from("never (dead)"))
        } else if d.next <= now {
            ("failing", String::from("now"))
        } else {
            ("failing", format!("in {}", age(d.next, now)))
        };
        out.push_str(&format!(
            "<tr class=\"{state}\"><td><span class=\"badge {state}\">{state}</span></td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.sink),
            esc(d.name.as_str()),
            link(&format!("/clarifications/{}", d.record), &d.record),
            d.attempts,
            // A sink's stderr: shown to every reader of the inbox, so what looks like a
            // secret is hidden and the text cut (issue 48).
            esc(&agentx_clarify_core::origin::redacted(
                d.last_error.as_deref().unwrap_or(""),
                SHOWN_ERROR,
            )),
            esc(&next),
        ));
    }
    out.push_str("</tbody></table>");
    if bad.len() > SHOWN {
        out.push_str(&format!(
            "<p>{} more: <code>agentx notify status</code>.</p>",
            bad.len() - SHOWN
        ));
    }
    out.push_str("</section>");
    Ok(out)
}
