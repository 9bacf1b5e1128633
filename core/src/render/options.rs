//! A typed question's options in the renderers (docs/protocol.md §22): every option, the chosen ones
//! marked — the latest value an answer or resolution recorded.

use serde_json::Value;

use crate::kinds::AnswerKind;
use crate::ledger::Record;

/// The value the thread settled on last (a resolution's over an earlier answer's).
pub fn chosen(record: &Record) -> Option<&Value> {
    record.thread.iter().rev().find_map(|e| e.value.as_ref())
}

/// `(marked, value, label, description)` for each option of the record's kind, in order:
/// `yes`/`no` for confirm, nothing for text.
pub(super) fn marked_options(record: &Record) -> Vec<(bool, String, String, Option<String>)> {
    let chosen = chosen(record);
    let spec = &record.answer;
    match spec.kind {
        AnswerKind::Text => Vec::new(),
        AnswerKind::Confirm => [(true, "yes"), (false, "no")]
            .into_iter()
            .map(|(v, label)| {
                (
                    chosen == Some(&Value::Bool(v)),
                    v.to_string(),
                    label.to_owned(),
                    None,
                )
            })
            .collect(),
        AnswerKind::Choice | AnswerKind::MultiChoice => spec
            .options
            .iter()
            .map(|o| {
                let marked = match chosen {
                    Some(Value::String(s)) => *s == o.value,
                    Some(Value::Array(items)) => items.iter().any(|i| i.as_str() == Some(&o.value)),
                    _ => false,
                };
                // Values are checked on input, but a hand-edited ledger may hold anything:
                // nothing may close a code span or the line.
                let value = o
                    .value
                    .chars()
                    .filter(|c| *c != '`' && !c.is_control())
                    .collect();
                (marked, value, o.shown().to_owned(), o.description.clone())
            })
            .collect(),
    }
}

/// What the options admit, in words: `choice, only these` or `multi_choice, 1–2, or other`.
pub(super) fn kind_words(record: &Record) -> String {
    let spec = &record.answer;
    let mut out = spec.kind.as_str().to_owned();
    if spec.kind == AnswerKind::MultiChoice {
        out.push_str(&format!(", {}–{}", spec.min(), spec.max()));
    }
    if spec.kind.has_options() {
        out.push_str(if spec.allows_other() {
            ", or other text"
        } else {
            ", only these"
        });
    }
    out
}
