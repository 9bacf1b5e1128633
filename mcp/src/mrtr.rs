//! Elicitation for 2026-07-28 clients (docs/protocol.md §24), which take no server-to-client
//! request: `clarify_wait` on the agent's own escalated record *returns* an
//! `InputRequiredResult` with the form (the one 2025-era clients get by `elicitation/create`)
//! and a sealed `requestState` ([`crate::sealed`]); the client retries the call with the
//! person's answer in `inputResponses` and the state echoed. The retry decides as today's
//! elicitation does (`via: "elicitation"`), once; a decline or cancel writes nothing, and the
//! wait then goes on without asking again while the record stays as it was.

use std::collections::BTreeMap;

use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::Record;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitResult, InputRequest, InputRequiredResult,
    InputResponses,
};
use rmcp::ErrorData;

use crate::hub::Hub;
use crate::sealed::{self, Claims};

/// The key of the one input request (the form) in `inputRequests` / `inputResponses`.
pub const FORM_KEY: &str = "decision";

/// The one answer to every refused state: the spec's invalid-params error, naming no reason
/// (which would tell a forger what to change); the reason goes to the server's log.
fn refused(id: &str, why: &impl std::fmt::Display) -> ErrorData {
    tracing::warn!("the requestState of a wait on {id} was refused: {why}");
    ErrorData::invalid_params(
        "requestState is not valid for this call (altered, expired, already answered, or \
         another agent's or record's): call clarify_wait again without it",
        None,
    )
}

/// Whether the request's client declared form elicitation (on 2026-07-28 the capabilities
/// come with each request).
pub fn forms_declared(caps: Option<&ClientCapabilities>) -> bool {
    caps.and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

async fn record(hub: &Hub, id: &str) -> Option<Record> {
    let issue = ClarificationId::parse(id).ok()?.issue;
    let ledger = hub.ledger(issue).await.ok()??;
    ledger.find(id).cloned()
}

fn claims_of(record: &Record, agent: &str) -> Result<Claims, agentx_clarify_core::ClarifyError> {
    Ok(Claims {
        agent: agent.to_owned(),
        id: record.id.clone(),
        round: record.output_fold().round,
        entries: record.thread.len(),
        nonce: sealed::nonce()?,
    })
}

/// Who waits: the agent, and the person at its client when its token names them.
#[derive(Clone, Copy, Debug)]
pub struct Asker<'a> {
    pub agent: &'a str,
    pub operator: Option<&'a str>,
}

/// The form for `agent`'s person, when record `id` is theirs to decide now and they did not
/// decline it as it is; `None`: wait as usual.
pub async fn offer(hub: &Hub, who: &Asker<'_>, id: &str) -> Option<InputRequiredResult> {
    let (agent, operator) = (who.agent, who.operator);
    let record = record(hub, id).await?;
    if !crate::elicit::wanted(&record, agent, operator)
        || hub.declined(agent, id, record.thread.len())
    {
        return None;
    }
    let form = crate::elicit::form(&record, operator)?;
    let claims = match claims_of(&record, agent) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("no input-required form for {id}: {e}");
            return None;
        }
    };
    let state = hub
        .with_store("seal", move |store, now| sealed::seal(store, now, &claims))
        .await;
    let state = match state {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("no input-required form for {id}: {e}");
            return None;
        }
    };
    let mut requests = BTreeMap::new();
    requests.insert(
        FORM_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form)),
    );
    Some(InputRequiredResult::new(Some(requests), Some(state)))
}

/// The retry of `agent`'s wait on record `id` with `state` and the client's `responses`: the
/// decision written (or the decline noted) and `Ok`, after which the wait goes on; a state
/// that is not good for this call is refused and nothing is written.
pub async fn answer(
    hub: &Hub,
    asker: &Asker<'_>,
    id: &str,
    state: String,
    responses: Option<InputResponses>,
) -> Result<(), ErrorData> {
    let (agent, operator) = (asker.agent, asker.operator);
    let (who, what) = (agent.to_owned(), id.to_owned());
    let claims = hub
        .with_store("open", move |store, _| {
            Ok(sealed::open(store, &state, &who, &what))
        })
        .await
        .map_err(|e| refused(id, &e))?
        .map_err(|e| refused(id, &e))?;
    let Some(record) = record(hub, id).await else {
        return Err(refused(id, &"the record is gone"));
    };
    if record.thread.len() != claims.entries
        || record.output_fold().round != claims.round
        || !crate::elicit::wanted(&record, agent, operator)
    {
        return Err(refused(
            id,
            &"the record changed since the form was offered",
        ));
    }
    let response = responses
        .as_ref()
        .and_then(|r| r.get(FORM_KEY))
        .cloned()
        .ok_or_else(|| refused(id, &"no response to the form"))?;
    let response: ElicitResult = serde_json::from_value(response).map_err(|e| refused(id, &e))?;
    let nonce = claims.nonce.clone();
    hub.with_store("strike", move |store, now| {
        Ok(sealed::strike(store, now, &nonce))
    })
    .await
    .map_err(|e| refused(id, &e))?
    .map_err(|e| refused(id, &e))?;
    match crate::elicit::accepted(&record, response) {
        // A refusal of the decision itself (a race with another writer) is logged; the wait
        // then reads the record as it is.
        Some(answered) => {
            let _ = crate::elicit::decide(hub, id, agent, operator, answered).await;
        }
        None => hub.decline(agent, id, record.thread.len()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ElicitationCapability;

    #[test]
    fn forms_are_declared_by_an_empty_or_form_capability() {
        let caps = |e: Option<ElicitationCapability>| {
            let mut c = ClientCapabilities::default();
            c.elicitation = e;
            c
        };
        assert!(!forms_declared(None));
        assert!(!forms_declared(Some(&caps(None))));
        assert!(forms_declared(Some(&caps(Some(
            ElicitationCapability::new()
        )))));
    }
}
