//! What an agent may read through a network door (`/mcp` and `/a2a` of `agentx serve`,
//! docs/protocol.md §23): the records of the issues it takes part in — it asked, or was
//! asked, a question of that issue. One rule for every door (issue 48): each door reads as it
//! always did, through the command layer's JSON envelope, and hands the reply of a read
//! operation to [`scope`], with the issues [`issues_of`] found for the agent.
//!
//! A record or ledger the agent may not see is answered as one that does not exist, word for
//! word (`NOT_FOUND`, the store's own message): the answer tells nothing of what others asked.
//! Writes need no scoping: the transition table already lets only a record's participants act
//! on it (`NOT_PARTICIPANT`).

use std::collections::BTreeSet;

use agentx_clarify_core::envelope::failure;
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::ClarifyError;
use serde_json::Value;

/// The read operations whose replies name records: the ones [`scope`] narrows.
/// `ask` is one for its `related` records (of other issues).
pub const SCOPED: &[&str] = &["list", "show", "audit", "resumePrompt", "search", "ask"];

/// The input that gives a door what [`issues_of`] reads: every record of every issue.
pub fn all_records() -> Value {
    serde_json::json!({"all": true})
}

/// Whether `agent` takes part in `record`'s issue by it: it is the record's asker (`from`) or
/// its target (`to`).
pub fn in_record(agent: &str, record: &Value) -> bool {
    record.get("from").and_then(Value::as_str) == Some(agent)
        || record.get("to").and_then(Value::as_str) == Some(agent)
}

/// Whether `agent` takes part in the issue whose records (its ledger's) are `records`.
pub fn takes_part(agent: &str, records: &[Value]) -> bool {
    records.iter().any(|r| in_record(agent, r))
}

/// The issues `agent` takes part in, read from the reply of `list {"all": true}`
/// ([`all_records`]).
pub fn issues_of(agent: &str, listed_all: &Value) -> BTreeSet<u64> {
    listed_all
        .get("clarifications")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| in_record(agent, r))
        .filter_map(|r| r.get("issueNumber").and_then(Value::as_u64))
        .collect()
}

/// Whether `op`'s reply is narrowed by [`scope`].
pub fn scoped(op: &str) -> bool {
    SCOPED.contains(&op)
}

/// The issue an input names: its record `id`'s, else its `issue` (a number or its digits).
fn target(input: &Value) -> Option<Target> {
    if let Some(id) = input.get("id").and_then(Value::as_str) {
        return ClarificationId::parse(id)
            .ok()
            .map(|parsed| Target::Record(id.to_owned(), u64::from(parsed.issue)));
    }
    let issue = input.get("issue")?;
    let n = issue
        .as_u64()
        .or_else(|| issue.as_str().and_then(|s| s.parse().ok()))?;
    u32::try_from(n).ok().map(Target::Issue)
}

enum Target {
    Record(String, u64),
    Issue(u32),
}

/// `reply` (of `op` on `input`) as an agent taking part in `issues` sees it: a record or a
/// ledger of another issue is `NOT_FOUND` as a missing one is, and a listing keeps only the
/// records of its issues. Replies of other operations, and refusals, pass unchanged.
pub fn scope(op: &str, input: &Value, reply: Value, issues: &BTreeSet<u64>) -> Value {
    if !scoped(op) || reply.get("ok") != Some(&Value::Bool(true)) {
        return reply;
    }
    match target(input) {
        Some(Target::Record(id, issue)) if !issues.contains(&issue) => {
            return failure(&ClarifyError::NotFound { id });
        }
        // A listing (or search) of one issue is an empty one; a ledger is one that does not
        // exist.
        Some(Target::Issue(issue))
            if !issues.contains(&u64::from(issue)) && op != "list" && op != "search" =>
        {
            return failure(&ClarifyError::NoLedger { issue });
        }
        _ => {}
    }
    let mut reply = reply;
    narrow(&mut reply, issues);
    reply
}

/// Keeps only the records of `issues` in a reply's lists: a listing's `clarifications`
/// (`issueNumber`), a search's `hits` and an ask's `related` (`issue`).
pub fn narrow(reply: &mut Value, issues: &BTreeSet<u64>) {
    for (list, key) in [
        ("clarifications", "issueNumber"),
        ("hits", "issue"),
        ("related", "issue"),
    ] {
        if let Some(Value::Array(records)) = reply.get_mut(list) {
            records.retain(|r| {
                r.get(key)
                    .and_then(Value::as_u64)
                    .is_some_and(|n| issues.contains(&n))
            });
        }
    }
}

/// The hits of `hits` (an ask's `related`, a search's) that `agent` may see, typed: those of
/// the issues it takes part in. Only the hits' own ledgers are read (at most a few).
pub fn visible_hits<S: crate::store::Store>(
    store: &S,
    agent: &str,
    hits: Vec<agentx_clarify_core::search::Hit>,
) -> Result<Vec<agentx_clarify_core::search::Hit>, ClarifyError> {
    let mut seen: std::collections::BTreeMap<u32, bool> = std::collections::BTreeMap::new();
    for issue in hits.iter().map(|h| h.issue) {
        if seen.contains_key(&issue) {
            continue;
        }
        let part = store.read_ledger(issue)?.is_some_and(|l| {
            l.clarifications
                .iter()
                .any(|r| r.from == agent || r.to == agent)
        });
        seen.insert(issue, part);
    }
    Ok(hits
        .into_iter()
        .filter(|h| seen.get(&h.issue).copied().unwrap_or(false))
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed() -> Value {
        json!({"ok": true, "clarifications": [
            {"id": "CLR-1-001", "issueNumber": 1, "from": "engineer", "to": "architect"},
            {"id": "CLR-2-001", "issueNumber": 2, "from": "reviewer", "to": "architect"},
            {"id": "CLR-3-001", "issueNumber": 3, "from": "pm", "to": "engineer"},
        ]})
    }

    #[test]
    fn an_agent_sees_the_issues_it_asks_or_is_asked_in() {
        let engineer = issues_of("engineer", &listed());
        assert_eq!(engineer, BTreeSet::from([1, 3]));
        assert_eq!(issues_of("architect", &listed()), BTreeSet::from([1, 2]));
        assert!(issues_of("nobody", &listed()).is_empty());
        let narrowed = scope("list", &json!({}), listed(), &engineer);
        let ids: Vec<&str> = narrowed["clarifications"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["CLR-1-001", "CLR-3-001"]);
    }

    #[test]
    fn a_hidden_record_is_answered_as_a_missing_one() {
        let engineer = issues_of("engineer", &listed());
        let shown = json!({"ok": true, "clarification": {"id": "CLR-2-001"}});
        let hidden = scope(
            "show",
            &json!({"id": "CLR-2-001"}),
            shown.clone(),
            &engineer,
        );
        let missing = failure(&ClarifyError::NotFound {
            id: "CLR-2-001".into(),
        });
        assert_eq!(hidden, missing);
        let ledger = scope("show", &json!({"issue": 2}), shown.clone(), &engineer);
        assert_eq!(ledger, failure(&ClarifyError::NoLedger { issue: 2 }));
        let audit = scope("audit", &json!({"issue": "2"}), shown.clone(), &engineer);
        assert_eq!(audit["error"]["code"], "NOT_FOUND");
        // Its own issue, another operation, a refusal: unchanged.
        let own = json!({"ok": true, "clarification": {"id": "CLR-1-001"}});
        assert_eq!(
            scope("show", &json!({"id": "CLR-1-001"}), own.clone(), &engineer),
            own
        );
        assert_eq!(
            scope(
                "answer",
                &json!({"id": "CLR-2-001"}),
                shown.clone(),
                &engineer
            ),
            shown
        );
        let refused = failure(&ClarifyError::NotFound {
            id: "CLR-9-001".into(),
        });
        assert_eq!(
            scope(
                "show",
                &json!({"id": "CLR-9-001"}),
                refused.clone(),
                &engineer
            ),
            refused
        );
        let of_two = json!({"ok": true, "clarifications": [
            {"id": "CLR-2-001", "issueNumber": 2, "from": "reviewer", "to": "architect"},
        ]});
        let one = scope("list", &json!({"issue": 2}), of_two, &engineer);
        assert_eq!(one["clarifications"], json!([]));
    }

    #[test]
    fn search_hits_of_other_issues_are_left_out() {
        let engineer = issues_of("engineer", &listed());
        let found = json!({"ok": true, "hits": [
            {"id": "CLR-2-001", "issue": 2}, {"id": "CLR-3-001", "issue": 3}]});
        let seen = scope("search", &json!({"query": "cache"}), found, &engineer);
        assert_eq!(seen["hits"], json!([{"id": "CLR-3-001", "issue": 3}]));
    }
}
