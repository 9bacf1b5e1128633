//! Who decided each record, and how long it took (the inbox's Stats charts, docs/protocol.md
//! §23): one row per resolution, read from the ledgers only.
//!
//! A resolution by `human` is a person's decision, by the door they came in by: MCP
//! elicitation (`via: "elicitation"`), GitHub Mode (`via: "github"`), else the inbox, the CLI
//! or the API (a person). A resolution by the requester settles an agent's answer: the agent
//! decided.

use serde::Serialize;

use crate::ledger::{EntryKind, Ledger};
use crate::names::HUMAN;

/// Who took a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decider {
    /// The requester accepted an agent's answer.
    Agent,
    /// A person through the inbox, the CLI or the API.
    Person,
    /// The operator of an agent's client, asked by MCP elicitation.
    Elicitation,
    /// A person's `/resolve` comment in GitHub Mode.
    Github,
}

impl Decider {
    pub const ALL: [Decider; 4] = [
        Decider::Agent,
        Decider::Person,
        Decider::Elicitation,
        Decider::Github,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Decider::Agent => "agent",
            Decider::Person => "person",
            Decider::Elicitation => "elicitation",
            Decider::Github => "github",
        }
    }
}

/// One decision: when, by whom, and how long after the record was asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub issue: u32,
    pub id: String,
    pub at: i64,
    pub decider: Decider,
    /// The resolution's time minus the record's first question's.
    pub took_ms: i64,
}

/// Every resolution of `ledgers` (at or after `since` when given), in time order.
pub fn decisions(ledgers: &[Ledger], since: Option<i64>) -> Vec<Decision> {
    let mut out = Vec::new();
    for ledger in ledgers {
        for r in &ledger.clarifications {
            let Some(asked) = r.thread.first().map(|e| e.timestamp.ms()) else {
                continue;
            };
            for e in r.thread.iter().filter(|e| e.kind == EntryKind::Resolution) {
                let at = e.timestamp.ms();
                if since.is_some_and(|s| at < s) {
                    continue;
                }
                let via = e.extra.get("via").and_then(serde_json::Value::as_str);
                let decider = match (e.from == HUMAN, via) {
                    (true, Some("elicitation")) => Decider::Elicitation,
                    (true, Some(v)) if v == crate::github::VIA => Decider::Github,
                    (true, _) => Decider::Person,
                    (false, _) => Decider::Agent,
                };
                out.push(Decision {
                    issue: ledger.issue_number,
                    id: r.id.clone(),
                    at,
                    decider,
                    took_ms: (at - asked).max(0),
                });
            }
        }
    }
    out.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_resolution_is_named_by_its_door() {
        let text = r#"{"issueNumber":42,"clarifications":[
          {"id":"CLR-42-001","from":"engineer","to":"architect","topic":"a","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"q","timestamp":"2026-11-22T10:00:00.000Z"},
            {"round":1,"from":"architect","type":"answer","body":"a","timestamp":"2026-11-22T10:05:00.000Z"},
            {"round":1,"from":"engineer","type":"resolution","body":"ok","timestamp":"2026-11-22T10:06:00.000Z"}]},
          {"id":"CLR-42-002","from":"engineer","to":"architect","topic":"b","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"q","timestamp":"2026-11-22T10:00:00.000Z"},
            {"round":1,"from":"human","type":"escalation","body":"e","timestamp":"2026-11-22T10:01:00.000Z"},
            {"round":1,"from":"human","type":"resolution","body":"d","timestamp":"2026-11-22T11:00:00.000Z","by":"alice","via":"web"}]},
          {"id":"CLR-42-003","from":"engineer","to":"architect","topic":"c","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"q","timestamp":"2026-11-22T10:00:00.000Z"},
            {"round":1,"from":"human","type":"resolution","body":"d","timestamp":"2026-11-22T10:02:00.000Z","by":"operator of engineer","via":"elicitation"}]},
          {"id":"CLR-42-004","from":"engineer","to":"architect","topic":"d","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30,"thread":[
            {"round":1,"from":"engineer","type":"question","body":"q","timestamp":"2026-11-22T10:00:00.000Z"},
            {"round":1,"from":"human","type":"resolution","body":"d","timestamp":"2026-11-22T10:03:00.000Z","by":"bob","via":"github"}]}]}"#;
        let ledger = Ledger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap();
        let found = decisions(std::slice::from_ref(&ledger), None);
        let got: Vec<(&str, Decider, i64)> = found
            .iter()
            .map(|d| (d.id.as_str(), d.decider, d.took_ms))
            .collect();
        assert_eq!(
            got,
            [
                ("CLR-42-003", Decider::Elicitation, 120_000),
                ("CLR-42-004", Decider::Github, 180_000),
                ("CLR-42-001", Decider::Agent, 360_000),
                ("CLR-42-002", Decider::Person, 3_600_000),
            ]
        );
        let later = crate::time::parse_ms("2026-11-22T10:05:00.000Z").unwrap();
        assert_eq!(decisions(&[ledger], Some(later)).len(), 2);
    }
}
