//! Ledgers as AgentX's own writers leave them, shared by the unit tests (SPEC §20).

use serde_json::Value;

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
