//! Who decides an escalated record, as the signed-in person sees it (docs/protocol.md §37):
//! whom it is assigned to, who is on it, and what they may do — "Take it" when nobody holds
//! it, "Hand over" for its holder or a decider. A person who may not decide it sees why and
//! who may, and no decision form: the server refuses their POST anyway (`NOT_ALLOWED`).

use agentx_clarify_core::people::{assigned, holder};
use agentx_clarify_core::{Record, Status};

use super::frame::when;
use crate::html::esc;

/// The people part of a record's actions for `viewer`.
pub struct Holding {
    /// Whether `viewer` may decide the record (always, for a record nobody was assigned).
    pub may_decide: bool,
    /// Assigned to whom, who is on it: shown above the decision.
    pub line: String,
    /// "Take it" (beside the line) and "Hand over" (with the other actions).
    pub take: Option<String>,
    pub hand_over: Option<String>,
}

/// How `r` stands for `viewer`; `None` for a record that is not escalated.
pub fn holding(r: &Record, viewer: &str) -> Option<Holding> {
    if r.current_status() != Status::Escalated {
        return None;
    }
    let names = assigned(r);
    let held = holder(r);
    let holds = held.as_ref().is_some_and(|h| h.person == viewer);
    let is_assigned = names.as_ref().is_none_or(|n| n.iter().any(|a| a == viewer));
    let may_decide = is_assigned || holds;
    let mut line = Vec::new();
    if let Some(n) = names.as_ref().filter(|n| !n.is_empty()) {
        line.push(format!("Assigned to {}", esc(&n.join(", "))));
    }
    if let Some(h) = &held {
        let who = if holds {
            String::from("You are")
        } else {
            format!("{} is", esc(&h.person))
        };
        let until = h
            .until
            .map_or(String::new(), |t| format!(" until {}", when(t)));
        line.push(format!("{who} on it (since {}{until})", when(h.since)));
    }
    if let Some(s) = agentx_clarify_core::people::summary(r) {
        line.push(esc(&s));
    }
    if !may_decide {
        let who = names.unwrap_or_default().join(", ");
        line.push(format!("Only {} may decide it", esc(&who)));
    }
    let id = esc(&r.id);
    let take = (held.is_none() && is_assigned).then(|| {
        format!(
            "<form class=\"act take\" data-op=\"claim\" data-id=\"{id}\">\
             <button type=\"submit\">Take it</button></form>"
        )
    });
    let hand_over = (holds || (held.is_none() && is_assigned)).then(|| {
        format!(
            "<form class=\"act\" data-op=\"handoff\" data-id=\"{id}\"><h3>Hand over</h3>\
             <label>To<input name=\"to\" autocomplete=\"off\" required></label>\
             <label>Note<textarea name=\"message\" rows=\"2\"></textarea></label>\
             <button type=\"submit\">Hand over</button></form>"
        )
    });
    Some(Holding {
        may_decide,
        line: if line.is_empty() {
            String::new()
        } else {
            format!("<p class=\"holding\">{}</p>", line.join(" · "))
        },
        take,
        hand_over,
    })
}
