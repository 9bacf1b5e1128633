//! Asking back (docs/protocol.md, "Asking back"): a request that names, in `askedBack`, the
//! pending question it answers with a question of its own. It belongs to that question's
//! conversation, so no workflow step has to allow it, and it runs under that question's round
//! limit and SLA; the monitor reads the link and never takes the pair for a deadlock or a
//! direction flip (`crate::replies::linked`).

use serde_json::Value;

use crate::error::ClarifyError;
use crate::ledger::{Ledger, Record, Status};
use crate::replies::ASKED_BACK;

use super::NewRequest;

/// What a request's `askedBack` link is.
pub(crate) enum Link<'l> {
    /// The request asks the question's requester back: the conversation's own.
    Conversation(&'l Record),
    /// A routed agent asking a third agent on the question's behalf (a `[CLARIFICATION_NEEDED]`
    /// block's `to:`): the link is kept, the scope decides as for any request.
    Forwarded,
}

/// Whether a routed agent may send its question back to someone other than the asker.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forward {
    Allowed,
    Refused,
}

/// The id a request names in `askedBack`: a string, else `INVALID_INPUT`.
pub fn asked_back_id(req: &NewRequest) -> Result<Option<&str>, ClarifyError> {
    match req.extra.get(ASKED_BACK) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) => Ok(Some(id.as_str())),
        Some(_) => Err(ClarifyError::input(
            "`askedBack` must be the id of the question asked back (a string)",
        )),
    }
}

/// Checks a request's `askedBack` against the ledger: the named record is on the same issue,
/// pending or stale, asked of the asker, and (unless forwarding is allowed) by the new target.
pub(crate) fn link<'l>(
    ledger: Option<&'l Ledger>,
    req: &NewRequest,
    forward: Forward,
) -> Result<Option<Link<'l>>, ClarifyError> {
    let Some(id) = asked_back_id(req)? else {
        return Ok(None);
    };
    let refuse = |why: String| {
        Err(ClarifyError::input(format!(
            "`askedBack` {id} cannot be asked back: {why}"
        )))
    };
    let Some(record) = ledger.and_then(|l| l.find(id)) else {
        return refuse(format!(
            "no such question on issue {}; ask back only a question of the same issue",
            req.issue_number
        ));
    };
    let status = record.current_status();
    if !matches!(status, Status::Pending | Status::Stale) {
        return refuse(format!(
            "it is {}; only a pending or stale question can be asked back",
            status.as_str()
        ));
    }
    if record.to != req.from {
        return refuse(format!(
            "it was asked of '{}', not of '{}'",
            record.to, req.from
        ));
    }
    if record.from == req.to {
        Ok(Some(Link::Conversation(record)))
    } else if forward == Forward::Allowed {
        Ok(Some(Link::Forwarded))
    } else {
        refuse(format!(
            "it was asked by '{}'; ask back its requester, not '{}'",
            record.from, req.to
        ))
    }
}
