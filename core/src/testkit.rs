//! Fixtures shared by the unit tests: the instants, ledgers as AgentX's own writers leave
//! them (docs/protocol.md §20), and fixed keys with a ledger written and signed with them (docs/protocol.md §16).

use serde_json::Value;

use crate::agents::Statuses;
use crate::config::Config;
use crate::ledger::Ledger;
use crate::monitor::monitor_ledger_with;
use crate::ops::{act_with, request_owned, Action, NewRequest};
use crate::signing::{SecretKey, Signers};
use crate::workflow::Workflows;

pub(crate) const T0: i64 = 1_795_341_600_000; // 2026-11-22T10:00:00Z
pub(crate) const MIN: i64 = 60_000;

/// The hub and three agents, each from a fixed seed (`[n; 32]`).
pub(crate) fn keyring() -> Signers {
    let mut s = Signers::new();
    for (name, n) in [
        ("agent-x", 1u8),
        ("engineer", 2),
        ("architect", 3),
        ("product-manager", 4),
    ] {
        s.insert(name, SecretKey::from_seed(&[n; 32])).unwrap();
    }
    s
}

pub(crate) fn plain(from: &str, to: &str, topic: &str, question: &str) -> NewRequest {
    NewRequest {
        issue_number: 42,
        from: from.into(),
        to: to.into(),
        topic: topic.into(),
        question: question.into(),
        ..NewRequest::default()
    }
}

pub(crate) fn ask(
    ledger: Option<&Ledger>,
    req: &NewRequest,
    now: i64,
    signers: &Signers,
) -> Ledger {
    request_owned(
        ledger.cloned(),
        req,
        &Config::default(),
        &Workflows::defaults(),
        now,
        signers,
    )
    .unwrap()
    .ledger
}

pub(crate) fn apply(
    ledger: &Ledger,
    id: &str,
    action: Action,
    now: i64,
    signers: &Signers,
) -> Ledger {
    act_with(ledger, id, &action, &Config::default(), now, signers)
        .unwrap()
        .ledger
}

/// Issue 42 written with `signers`: CLR-42-001 asked, answered and resolved by the agents;
/// CLR-42-002 escalated and resolved by a human (hub-signed); CLR-42-003 gone stale and
/// retried by the monitor (hub-signed).
pub(crate) fn signed_ledger(signers: &Signers) -> Ledger {
    let req = plain(
        "engineer",
        "architect",
        "Cache layer",
        "Redis or in-process?",
    );
    let l = ask(None, &req, T0, signers);
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Redis, see ADR-7.".into(),
    };
    let l = apply(&l, "CLR-42-001", answer, T0 + MIN, signers);
    let resolve = Action::Resolve {
        from: None,
        message: None,
    };
    let l = apply(&l, "CLR-42-001", resolve, T0 + 2 * MIN, signers);
    let req = plain(
        "engineer",
        "product-manager",
        "Scope",
        "Is export in scope?",
    );
    let l = ask(Some(&l), &req, T0 + 3 * MIN, signers);
    let escalate = Action::Escalate {
        from: None,
        message: Some("needs a product decision".into()),
    };
    let l = apply(&l, "CLR-42-002", escalate, T0 + 4 * MIN, signers);
    let resolve = Action::Resolve {
        from: None,
        message: Some("export is out of scope".into()),
    };
    let l = apply(&l, "CLR-42-002", resolve, T0 + 5 * MIN, signers);
    let req = plain("engineer", "architect", "Eviction", "LRU or LFU?");
    let l = ask(Some(&l), &req, T0 + 6 * MIN, signers);
    let out = monitor_ledger_with(
        l,
        &Statuses::new(),
        &Config::default(),
        T0 + 67 * MIN,
        signers,
    );
    assert!(
        out.changed,
        "the monitor marks CLR-42-003 stale and retries it"
    );
    out.ledger
}

/// A ledger as AgentX's TypeScript router writes it: `JSON.stringify(ledger, null, 2)`,
/// record-level `issueNumber`, no hashes, `created` 2 ms before the question, and a record
/// whose router crashed before its question (round 0).
pub(crate) const AGENTX_TS: &str = r#"{
  "issueNumber": 1,
  "clarifications": [
    {
      "id": "CLR-1-001",
      "issueNumber": 1,
      "from": "engineer",
      "to": "architect",
      "topic": "Cache",
      "blocking": true,
      "status": "pending",
      "round": 1,
      "maxRounds": 5,
      "created": "2026-11-22T10:00:00.940Z",
      "staleAfter": "2026-11-22T10:30:00.940Z",
      "resolvedAt": null,
      "thread": [
        {
          "round": 1,
          "from": "engineer",
          "type": "question",
          "body": "Redis?",
          "timestamp": "2026-11-22T10:00:00.942Z"
        },
        {
          "round": 1,
          "from": "architect",
          "type": "answer",
          "body": "Yes.",
          "timestamp": "2026-11-22T10:04:00.000Z"
        }
      ],
      "recordType": "clarification"
    },
    {
      "id": "CLR-1-002",
      "issueNumber": 1,
      "from": "engineer",
      "to": "reviewer",
      "topic": "Crash",
      "blocking": true,
      "status": "pending",
      "round": 0,
      "maxRounds": 5,
      "created": "2026-11-22T10:00:00.000Z",
      "staleAfter": "2026-11-22T10:30:00.000Z",
      "resolvedAt": null,
      "thread": []
    }
  ]
}"#;

/// [`AGENTX_TS`] as a JSON value.
pub(crate) fn agentx_ts() -> Value {
    serde_json::from_str(AGENTX_TS).unwrap_or(Value::Null)
}

/// One pending record from `from` to `to` (blocking: `BLOCK`), read from a minimal ledger:
/// for functions that look at a record without the scope check that made it.
pub(crate) fn record(from: &str, to: &str, blocking: bool) -> crate::ledger::Record {
    let ledger = serde_json::json!({
        "issueNumber": 42,
        "clarifications": [{
            "id": "CLR-42-001", "from": from, "to": to, "topic": "t", "blocking": blocking,
            "status": "pending", "round": 1, "maxRounds": 3, "slaMinutes": 30,
            "created": "2026-11-22T10:00:00.000Z",
            "thread": [{"round": 1, "from": from, "type": "question", "body": "q?",
                        "timestamp": "2026-11-22T10:00:00.000Z"}]
        }]
    });
    Ledger::from_value("issue-42.json", &ledger, Some(42))
        .unwrap()
        .clarifications
        .remove(0)
}
