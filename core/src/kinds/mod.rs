//! Answer kinds (docs/protocol.md §22): the shape of the answer a request expects — free text, yes/no,
//! one of some options, several of them — and the one decision every surface takes on an
//! answer or resolution that carries a `value`.
//!
//! The model is public and documented for the shells that draw forms (the VS Code chat, the
//! playground, `agentx serve`): [`AnswerSpec`] says what to draw, [`AnswerSpec::check_value`]
//! what the hub will accept, [`AnswerSpec::decide`] what an answer records.

mod fingerprint;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{shown, ClarifyError};
use crate::names::check_text;

pub use fingerprint::{fingerprint, normalise_question};

/// At least this many options on a choice kind.
pub const MIN_OPTIONS: usize = 2;
/// At most this many options on a choice kind.
pub const MAX_OPTIONS: usize = 10;
/// Longest option label, in characters.
pub const MAX_LABEL: usize = 100;
/// Longest option description, in characters.
pub const MAX_DESCRIPTION: usize = 500;
/// Longest option value (`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`).
pub const MAX_VALUE: usize = 64;

/// What shape of answer a request expects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// Free text (the default; no value).
    #[default]
    Text,
    /// Yes or no: the value is `true` or `false`.
    Confirm,
    /// One of the options: the value is an option's `value`.
    Choice,
    /// Several of the options: the value is an array of option values, in option order.
    MultiChoice,
}

impl AnswerKind {
    pub const ALL: [AnswerKind; 4] = [
        AnswerKind::Text,
        AnswerKind::Confirm,
        AnswerKind::Choice,
        AnswerKind::MultiChoice,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Text => "text",
            AnswerKind::Confirm => "confirm",
            AnswerKind::Choice => "choice",
            AnswerKind::MultiChoice => "multi_choice",
        }
    }

    /// Parses a kind name; the message names the value and the allowed names.
    pub fn parse(text: &str) -> Result<AnswerKind, ClarifyError> {
        AnswerKind::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| {
                ClarifyError::input(format!(
                    "unknown answer kind '{}'; allowed: text, confirm, choice, multi_choice",
                    shown(text)
                ))
            })
    }

    /// `choice` or `multi_choice`: the kinds with options.
    pub fn has_options(self) -> bool {
        matches!(self, AnswerKind::Choice | AnswerKind::MultiChoice)
    }
}

/// One acceptable answer of a choice kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerOption {
    /// What is recorded (`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`), unique within the request.
    pub value: String,
    /// What people see (≤ 100 characters); the value when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A longer explanation (≤ 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl AnswerOption {
    /// The label, or the value when there is none.
    pub fn shown(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// The answer kind of a request, as given (the defaults are applied by the accessors, so a
/// record stores exactly what was asked: nothing for a text question).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnswerSpec {
    pub kind: AnswerKind,
    pub options: Vec<AnswerOption>,
    /// Choice kinds only; absent means `true`.
    pub allow_other: Option<bool>,
    /// `multi_choice` only; absent means 1.
    pub min_select: Option<u32>,
    /// `multi_choice` only; absent means the number of options.
    pub max_select: Option<u32>,
}

/// A value inside a message: a string quoted as `'text'` (as the command line gives it),
/// anything else as JSON.
fn shown_json(value: &Value) -> String {
    match value {
        Value::String(s) => format!("'{}'", shown(s)),
        other => shown(&other.to_string()),
    }
}

/// Whether `value` is a valid option value.
pub fn is_option_value(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && value.len() <= MAX_VALUE
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

impl AnswerSpec {
    /// A free-text question: the default, stored as nothing.
    pub fn is_text(&self) -> bool {
        self.kind == AnswerKind::Text
    }

    /// Whether an answer outside the options is accepted: always for text, never for
    /// confirm, `allowOther` (default true) for the choice kinds.
    pub fn allows_other(&self) -> bool {
        match self.kind {
            AnswerKind::Text => true,
            AnswerKind::Confirm => false,
            AnswerKind::Choice | AnswerKind::MultiChoice => self.allow_other.unwrap_or(true),
        }
    }

    /// The fewest options a `multi_choice` value may hold (default 1).
    pub fn min(&self) -> u32 {
        self.min_select.unwrap_or(1)
    }

    /// The most options a `multi_choice` value may hold (default: all of them).
    pub fn max(&self) -> u32 {
        self.max_select
            .unwrap_or_else(|| u32::try_from(self.options.len()).unwrap_or(u32::MAX))
    }

    /// Request validation (`INVALID_INPUT`, `TEXT_TOO_LONG`): options only on the choice
    /// kinds and required there (2–10, valid unique values, label ≤ 100, description ≤ 500),
    /// `allowOther` only on the choice kinds, `minSelect`/`maxSelect` only on `multi_choice`
    /// with 1 ≤ min ≤ max ≤ the number of options.
    pub fn validate(&self) -> Result<(), ClarifyError> {
        let kind = self.kind.as_str();
        if !self.kind.has_options() {
            if !self.options.is_empty() {
                return Err(ClarifyError::input(format!(
                    "options are for the answer kinds choice and multi_choice, not {kind}"
                )));
            }
            if self.allow_other.is_some() {
                return Err(ClarifyError::input(format!(
                    "allowOther is for the answer kinds choice and multi_choice, not {kind}"
                )));
            }
        }
        if self.kind != AnswerKind::MultiChoice
            && (self.min_select.is_some() || self.max_select.is_some())
        {
            return Err(ClarifyError::input(format!(
                "minSelect and maxSelect are for the answer kind multi_choice, not {kind}"
            )));
        }
        if !self.kind.has_options() {
            return Ok(());
        }
        let n = self.options.len();
        if !(MIN_OPTIONS..=MAX_OPTIONS).contains(&n) {
            return Err(ClarifyError::input(format!(
                "a {kind} question needs {MIN_OPTIONS} to {MAX_OPTIONS} options, got {n}"
            )));
        }
        for (i, option) in self.options.iter().enumerate() {
            if !is_option_value(&option.value) {
                return Err(ClarifyError::input(format!(
                    "invalid option value '{}': expected 1–64 characters of A-Z a-z 0-9 _ . : -, starting with a letter or digit",
                    shown(&option.value)
                )));
            }
            if self.options.iter().take(i).any(|o| o.value == option.value) {
                return Err(ClarifyError::input(format!(
                    "option value '{}' is listed twice; option values must be unique",
                    option.value
                )));
            }
            if let Some(label) = &option.label {
                check_text("option label", label, MAX_LABEL)?;
            }
            if let Some(description) = &option.description {
                check_text("option description", description, MAX_DESCRIPTION)?;
            }
        }
        if self.kind == AnswerKind::MultiChoice {
            let (min, max) = (self.min(), self.max());
            if min < 1 || min > max || max as usize > n {
                return Err(ClarifyError::input(format!(
                    "minSelect {min} and maxSelect {max} must satisfy 1 ≤ minSelect ≤ maxSelect ≤ {n} (the number of options)"
                )));
            }
        }
        Ok(())
    }

    /// The allowed values, for messages and prompts: `true (yes), false (no)` or
    /// `redis (Redis), lru (In-process LRU)`, then `, or free text` when other answers are
    /// accepted, and the selection bounds of `multi_choice`.
    pub fn allowed(&self) -> String {
        let mut out = match self.kind {
            AnswerKind::Text => String::from("free text"),
            AnswerKind::Confirm => String::from("true (yes), false (no)"),
            AnswerKind::Choice | AnswerKind::MultiChoice => self
                .options
                .iter()
                .map(|o| match &o.label {
                    Some(label) => format!("{} ({label})", o.value),
                    None => o.value.clone(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        if self.kind == AnswerKind::MultiChoice {
            out = format!("{} to {} of {out}", self.min(), self.max());
        }
        if self.kind.has_options() && self.allows_other() {
            out.push_str(", or free text");
        }
        out
    }

    fn refused(&self, why: String) -> ClarifyError {
        ClarifyError::InvalidAnswer {
            message: format!("{why}; allowed: {}", self.allowed()),
        }
    }

    /// Checks a given `value` against the kind and returns it as recorded (a `multi_choice`
    /// array in option order). `INVALID_ANSWER` names the allowed values.
    pub fn check_value(&self, value: &Value) -> Result<Value, ClarifyError> {
        let shown_value = || shown_json(value);
        match self.kind {
            AnswerKind::Text => Err(ClarifyError::InvalidAnswer {
                message: format!(
                    "value {} given, but the question takes a free-text answer (no value); give a body instead",
                    shown_value()
                ),
            }),
            AnswerKind::Confirm => match value {
                Value::Bool(_) => Ok(value.clone()),
                _ => Err(self.refused(format!("value {} is not a yes/no", shown_value()))),
            },
            AnswerKind::Choice => match value {
                Value::String(s) if self.option(s).is_some() => Ok(value.clone()),
                Value::String(s) => Err(self.refused(format!("'{}' is not an option", shown(s)))),
                _ => Err(self.refused(format!(
                    "value {} is not one option value",
                    shown_value()
                ))),
            },
            AnswerKind::MultiChoice => {
                let Value::Array(items) = value else {
                    return Err(self.refused(format!(
                        "value {} is not an array of option values",
                        shown_value()
                    )));
                };
                let mut chosen = Vec::with_capacity(items.len());
                for item in items {
                    let Some(s) = item.as_str() else {
                        return Err(self.refused(format!(
                            "{} is not an option value",
                            shown_json(item)
                        )));
                    };
                    if self.option(s).is_none() {
                        return Err(self.refused(format!("'{}' is not an option", shown(s))));
                    }
                    if chosen.contains(&s) {
                        return Err(self.refused(format!("'{s}' is chosen twice")));
                    }
                    chosen.push(s);
                }
                let n = u32::try_from(chosen.len()).unwrap_or(u32::MAX);
                if n < self.min() || n > self.max() {
                    return Err(self.refused(format!("{n} options chosen")));
                }
                Ok(Value::Array(
                    self.options
                        .iter()
                        .filter(|o| chosen.contains(&o.value.as_str()))
                        .map(|o| Value::from(o.value.as_str()))
                        .collect(),
                ))
            }
        }
    }

    /// The value that command-line words stand for (`--value` given `texts.len()` times):
    /// `true`/`yes` or `false`/`no` for confirm, one option value for choice, an array for
    /// `multi_choice`; then checked like any value. `INVALID_ANSWER` names the allowed values.
    pub fn value_from_texts(&self, texts: &[String]) -> Result<Value, ClarifyError> {
        let value = match (self.kind, texts) {
            (AnswerKind::Confirm, [one]) => match crate::fold::lowercase(one).as_str() {
                "true" | "yes" => Value::Bool(true),
                "false" | "no" => Value::Bool(false),
                _ => return Err(self.refused(format!("value '{}' is not a yes/no", shown(one)))),
            },
            (AnswerKind::Choice, [one]) | (AnswerKind::Text, [one]) => Value::from(one.as_str()),
            (AnswerKind::MultiChoice, _) => {
                Value::Array(texts.iter().map(|t| Value::from(t.as_str())).collect())
            }
            (_, _) => {
                return Err(self.refused(format!(
                    "{} values given, but the question takes one",
                    texts.len()
                )))
            }
        };
        self.check_value(&value)
    }

    fn option(&self, value: &str) -> Option<&AnswerOption> {
        self.options.iter().find(|o| o.value == value)
    }

    /// The body of an entry given only a value: `yes`/`no`, or the labels joined by `, `.
    pub fn render(&self, value: &Value) -> String {
        match value {
            Value::Bool(true) => String::from("yes"),
            Value::Bool(false) => String::from("no"),
            Value::String(s) => self
                .option(s)
                .map_or_else(|| s.clone(), |o| o.shown().to_owned()),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|s| self.option(s).map_or(s, AnswerOption::shown))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    }

    /// The value a free-text reply stands for: the whole (trimmed) text equal to an option's
    /// value or label, case-insensitively (`yes`/`no`/`true`/`false` for confirm); for
    /// `multi_choice`, a comma-separated list of such options within min/max. `None` when the
    /// text is no option (or the question is free text).
    pub fn match_reply(&self, text: &str) -> Option<Value> {
        let text = text.trim();
        match self.kind {
            AnswerKind::Text => None,
            AnswerKind::Confirm => match crate::fold::lowercase(text).as_str() {
                "yes" | "true" | "y" => Some(Value::Bool(true)),
                "no" | "false" | "n" => Some(Value::Bool(false)),
                _ => None,
            },
            AnswerKind::Choice => self
                .match_option(text)
                .map(|o| Value::from(o.value.as_str())),
            AnswerKind::MultiChoice => {
                let picked: Vec<Value> = text
                    .split(',')
                    .map(|part| {
                        self.match_option(part.trim())
                            .map(|o| Value::from(o.value.as_str()))
                    })
                    .collect::<Option<_>>()?;
                self.check_value(&Value::Array(picked)).ok()
            }
        }
    }

    fn match_option(&self, text: &str) -> Option<&AnswerOption> {
        let text = crate::fold::lowercase(text);
        self.options.iter().find(|o| {
            crate::fold::lowercase(&o.value) == text
                || o.label
                    .as_ref()
                    .is_some_and(|l| crate::fold::lowercase(l) == text)
        })
    }

    /// What an answer records: with a `value`, the checked value and the body (given, or
    /// rendered from the value); without one, a body that is an option ([`Self::match_reply`])
    /// records that option's value, other text is recorded as free text when the kind
    /// accepts it, else `INVALID_ANSWER`. `body` is `None` only when a value is given.
    pub fn decide(
        &self,
        body: Option<&str>,
        value: Option<&Value>,
    ) -> Result<(String, Option<Value>), ClarifyError> {
        if let Some(value) = value {
            let value = self.check_value(value)?;
            let body = body.map_or_else(|| self.render(&value), str::to_owned);
            return Ok((body, Some(value)));
        }
        let body = body.unwrap_or_default();
        if self.is_text() {
            return Ok((body.to_owned(), None));
        }
        if let Some(value) = self.match_reply(body) {
            return Ok((body.to_owned(), Some(value)));
        }
        if self.allows_other() {
            Ok((body.to_owned(), None))
        } else {
            Err(self.refused(format!("answer '{}' fits no option", shown(body.trim()))))
        }
    }

    /// What a person's decision records (docs/protocol.md §22 "A decision is what the person
    /// chose"): the one rule of every door a person decides through — the inbox's form, the
    /// CLI's `resolve`, `/api/v1`'s `decide`, GitHub's `/resolve`, MCP elicitation, A2A.
    ///
    /// `value` is the option (options, yes/no) they chose and `note` what they wrote beside
    /// it: both are recorded, the note as the entry's body (the label when there is none).
    /// Without a value the note must itself be the decision: the text of a free-text
    /// question, an option's value or label, or — only where `allowOther` allows it — an
    /// answer instead of the options. Anything else is `INVALID_ANSWER`: a note alone is not
    /// a decision between options, so nothing is recorded that the person did not choose.
    pub fn decision(
        &self,
        note: Option<&str>,
        value: Option<&Value>,
    ) -> Result<(String, Option<Value>), ClarifyError> {
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        if value.is_some() || self.is_text() || self.allows_other() {
            return self.decide(note, value);
        }
        match note.and_then(|n| self.match_reply(n)) {
            Some(v) => Ok((note.unwrap_or_default().to_owned(), Some(v))),
            None => Err(self.refused(format!(
                "no {} chosen: a decision on this question is {}; a note alone is not one (give the choice as `value`, the note beside it)",
                if self.kind == AnswerKind::Confirm { "answer" } else { "option" },
                match self.kind {
                    AnswerKind::Confirm => "yes or no",
                    AnswerKind::MultiChoice => "a choice of its options",
                    _ => "one of its options",
                },
            ))),
        }
    }
}

#[cfg(test)]
mod tests;

/// Writes a record's answer kind fields, only those given (a text question writes none, so
/// ledgers without kinds are written as before).
pub(crate) fn serialize_spec<M: serde::ser::SerializeMap>(
    spec: &AnswerSpec,
    m: &mut M,
) -> Result<(), M::Error> {
    if !spec.is_text() {
        m.serialize_entry("answerKind", &spec.kind)?;
    }
    if !spec.options.is_empty() {
        m.serialize_entry("options", &spec.options)?;
    }
    if let Some(a) = spec.allow_other {
        m.serialize_entry("allowOther", &a)?;
    }
    if let Some(n) = spec.min_select {
        m.serialize_entry("minSelect", &n)?;
    }
    if let Some(n) = spec.max_select {
        m.serialize_entry("maxSelect", &n)?;
    }
    Ok(())
}
