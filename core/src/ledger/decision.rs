//! A person's decision on a record (docs/protocol.md §23, "What an agent gets after a person
//! decides"): the resolution `human` wrote, read back as one value so that every surface that
//! shows a record (`show`, `clarify_wait`, the resume prompt) hands the asking agent the same
//! `{by, via, value, text, at}` instead of leaving it to dig in `thread[-1]`.

use serde::Serialize;
use serde_json::Value;

use super::{EntryKind, Record, Status};
use crate::names::HUMAN;
use crate::time::Timestamp;

/// What a person decided, and who, through which surface, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The person (`by` of the entry: `alice`, `operator of engineer`); `human` when the
    /// surface named nobody (the CLI's `resolve` as human).
    pub by: String,
    /// The surface (`web`, `elicitation`, `github`, …); `null` when the entry names none.
    pub via: Option<String>,
    /// The typed value for a question with an answer kind (`true`/`false`, an option value,
    /// option values); `null` for free text.
    pub value: Option<Value>,
    /// The chosen options' labels (`yes`/`no` for confirm), when there is a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The decision's text: the person's note, or the value's labels when they wrote none.
    pub text: String,
    pub at: Timestamp,
}

impl Record {
    /// The decision of a resolved record, when a person took it: its last resolution entry
    /// is `human`'s. `None` while the record is open, and for a record its requester resolved.
    pub fn decision(&self) -> Option<Decision> {
        if self.current_status() != Status::Resolved {
            return None;
        }
        let entry = self
            .thread
            .iter()
            .rev()
            .find(|e| e.kind == EntryKind::Resolution)
            .filter(|e| e.from == HUMAN)?;
        let text_of = |key: &str| entry.extra.get(key).and_then(Value::as_str);
        Some(Decision {
            by: text_of("by").unwrap_or(HUMAN).to_owned(),
            via: text_of("via").map(str::to_owned),
            label: entry.value.as_ref().map(|v| self.answer.render(v)),
            value: entry.value.clone(),
            text: entry.body.clone(),
            at: entry.timestamp.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::ledger::Ledger;

    fn record(thread: &str, extra: &str) -> crate::ledger::Record {
        let text = format!(
            r#"{{"issueNumber":7,"clarifications":[{{"id":"CLR-7-001","from":"engineer","to":"architect","topic":"Cache","blocking":true,"status":"resolved","round":1,"maxRounds":3,"slaMinutes":30{extra},"thread":[{{"round":1,"from":"engineer","type":"question","body":"Which cache?","timestamp":"2026-11-22T10:00:00.000Z"}},{thread}]}}]}}"#
        );
        let ledger = Ledger::parse("issue-7.json", text.as_bytes(), Some(7)).unwrap();
        ledger.clarifications[0].clone()
    }

    #[test]
    fn a_persons_resolution_is_the_decision() {
        let r = record(
            r#"{"round":1,"from":"monitor","type":"escalation","body":"SLA expired","timestamp":"2026-11-22T10:30:00.000Z"},
               {"round":1,"from":"human","type":"resolution","body":"LRU: one process","value":"lru","timestamp":"2026-11-22T10:40:00.000Z","by":"alice","via":"web"}"#,
            r#","answerKind":"choice","options":[{"value":"redis","label":"Redis"},{"value":"lru","label":"In-process LRU"}]"#,
        );
        let d = r.decision().unwrap();
        assert_eq!(d.by, "alice");
        assert_eq!(d.via.as_deref(), Some("web"));
        assert_eq!(d.value, Some(serde_json::json!("lru")));
        assert_eq!(d.label.as_deref(), Some("In-process LRU"));
        assert_eq!(d.text, "LRU: one process");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            serde_json::json!({"by": "alice", "via": "web", "value": "lru",
                "label": "In-process LRU", "text": "LRU: one process",
                "at": "2026-11-22T10:40:00.000Z"})
        );
    }

    #[test]
    fn the_resume_prompt_names_the_chosen_option_and_who_chose_it() {
        let r = record(
            r#"{"round":1,"from":"monitor","type":"escalation","body":"SLA expired","timestamp":"2026-11-22T10:30:00.000Z"},
               {"round":1,"from":"human","type":"resolution","body":"LRU: one process","value":"lru","timestamp":"2026-11-22T10:40:00.000Z","by":"alice","via":"web"}"#,
            r#","answerKind":"choice","options":[{"value":"redis","label":"Redis"},{"value":"lru","label":"In-process LRU"}]"#,
        );
        let text = crate::signals::resume_record(7, &r).text();
        assert!(
            text.ends_with(
                "Q1: Which cache?\nA1: (not answered: a person decided instead, below)\n\nHuman decision: lru (In-process LRU)\nDecided by: alice via web\nNote: LRU: one process\n\nContinue your work from your last checkpoint, following the human decision."
            ),
            "{text}"
        );
        assert!(!text.contains("no answer yet"), "{text}");
    }

    #[test]
    fn the_requesters_resolution_and_an_open_record_are_no_decision() {
        let by_requester = record(
            r#"{"round":1,"from":"architect","type":"answer","body":"Redis","timestamp":"2026-11-22T10:10:00.000Z"},
               {"round":1,"from":"engineer","type":"resolution","body":"ok","timestamp":"2026-11-22T10:11:00.000Z"}"#,
            "",
        );
        assert_eq!(by_requester.decision(), None);
        let cli = record(
            r#"{"round":1,"from":"human","type":"resolution","body":"Plan for 50,000.","timestamp":"2026-11-22T10:11:00.000Z"}"#,
            "",
        );
        let d = cli.decision().unwrap();
        assert_eq!((d.by.as_str(), d.via, d.value), ("human", None, None));
        assert_eq!(d.text, "Plan for 50,000.");
    }
}
