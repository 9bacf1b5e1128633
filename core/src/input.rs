//! Reading the values an input hands in as objects or as their files' text — ledgers,
//! settings, workflows, statuses — and the fields of objects that are not an operation's
//! input (Layer 4's plans, in their own snake_case). Wrong shapes are `INVALID_INPUT`; bad
//! ledgers `LEDGER_CORRUPT`; bad workflows or settings `CONFIG_INVALID`. An operation's own
//! fields are its input struct's (`crate::call`).
//!
//! Below the `api` facade and `layer4`, which read with it; `api` re-exports it as
//! `api::input` (docs/decisions.md, "core's layers").

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::agents::Statuses;
use crate::config::Config;
use crate::error::ClarifyError;
use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use crate::ledger::{Ledger, Record};
use crate::monitor::ReportError;
use crate::names::ClarificationId;
use crate::verify::issue_of_file_name;
use crate::workflow::{Workflow, Workflows};

pub type Obj = Map<String, Value>;

fn present<'a>(map: &'a Obj, key: &str) -> Option<&'a Value> {
    given(map.get(key))
}

/// A value handed in: null is absent.
pub fn given(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

pub fn string(map: &Obj, key: &str) -> Result<String, ClarifyError> {
    opt_string(map, key)?
        .ok_or_else(|| ClarifyError::input(format!("`{key}` is required (a string)")))
}

pub fn opt_string(map: &Obj, key: &str) -> Result<Option<String>, ClarifyError> {
    match present(map, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ClarifyError::input(format!("`{key}` must be a string"))),
    }
}

pub fn opt_bool(map: &Obj, key: &str) -> Result<Option<bool>, ClarifyError> {
    match present(map, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ClarifyError::input(format!(
            "`{key}` must be true or false"
        ))),
    }
}

/// An integer, also when a JS host sends it as a float with no fraction.
fn as_integer(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        v.as_f64().and_then(|f| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            let ok = f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0;
            #[allow(clippy::cast_possible_truncation)]
            ok.then_some(f as i64)
        })
    })
}

pub fn opt_integer(map: &Obj, key: &str) -> Result<Option<i64>, ClarifyError> {
    match present(map, key) {
        None => Ok(None),
        Some(v) => as_integer(v)
            .map(Some)
            .ok_or_else(|| ClarifyError::input(format!("`{key}` must be an integer"))),
    }
}

pub fn string_list(map: &Obj, key: &str) -> Result<Vec<String>, ClarifyError> {
    match present(map, key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ClarifyError::input(format!("`{key}` must hold strings")))
            })
            .collect(),
        Some(_) => Err(ClarifyError::input(format!(
            "`{key}` must be an array of strings"
        ))),
    }
}

/// A gap's answer kind under Layer 4's key names (snake_case), in the order of the request's
/// (docs/protocol.md §22: kind, options, allow other, min, max).
pub fn answer_spec_named(map: &Obj, keys: [&str; 5]) -> Result<AnswerSpec, ClarifyError> {
    let [kind_key, options_key, other_key, min_key, max_key] = keys;
    let kind = match opt_string(map, kind_key)? {
        Some(k) => AnswerKind::parse(&k)?,
        None => AnswerKind::Text,
    };
    let options = match present(map, options_key) {
        None => Vec::new(),
        Some(v) => Vec::<AnswerOption>::deserialize(v).map_err(|e| {
            ClarifyError::input(format!(
                "`{options_key}` must be an array of {{value, label?, description?}}: {e}"
            ))
        })?,
    };
    let count = |key: &str| -> Result<Option<u32>, ClarifyError> {
        opt_integer(map, key)?
            .map(|n| {
                u32::try_from(n).map_err(|_| {
                    ClarifyError::input(format!("`{key}` must be a whole number from 0"))
                })
            })
            .transpose()
    };
    Ok(AnswerSpec {
        kind,
        options,
        allow_other: opt_bool(map, other_key)?,
        min_select: count(min_key)?,
        max_select: count(max_key)?,
    })
}

/// The issue's ledger: an object, or the raw text of its file (parsed here, so a corrupt file
/// is `LEDGER_CORRUPT` with the same message on every surface).
pub fn opt_ledger(ledger: Option<&Value>, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
    let file = format!("issue-{issue}.json");
    match given(ledger) {
        None => Ok(None),
        Some(Value::String(text)) => Ledger::parse(&file, text.as_bytes(), Some(issue)).map(Some),
        Some(v) => Ledger::from_value(&file, v, Some(issue)).map(Some),
    }
}

pub fn workflows(workflows: Option<&Value>) -> Result<Workflows, ClarifyError> {
    let Some(value) = given(workflows) else {
        return Ok(Workflows::defaults());
    };
    let Value::Object(entries) = value else {
        return Err(ClarifyError::input(
            "`workflows` must be an object of name → TOML text or workflow",
        ));
    };
    let mut out = Workflows::new();
    for (name, w) in entries {
        match w {
            Value::String(text) => out.insert_text(name, text),
            Value::Object(_) => {
                let file = format!("{name}.toml");
                let parsed = serde_json::from_str::<Workflow>(&w.to_string()).map_err(|e| {
                    ClarifyError::ConfigInvalid {
                        file: file.clone(),
                        location: None,
                        message: e.to_string(),
                    }
                })?;
                parsed.validate(&file)?;
                out.insert_parsed(name, parsed);
            }
            _ => {
                return Err(ClarifyError::input(format!(
                    "workflow `{name}` must be TOML text or an object"
                )))
            }
        }
    }
    Ok(out)
}

pub fn config(config: Option<&Value>) -> Result<Config, ClarifyError> {
    match given(config) {
        None => Ok(Config::default()),
        Some(Value::String(text)) => Config::parse("config.toml", text),
        Some(v @ Value::Object(_)) => {
            let c = serde_json::from_str::<Config>(&v.to_string()).map_err(|e| {
                ClarifyError::ConfigInvalid {
                    file: String::from("config"),
                    location: None,
                    message: e.to_string(),
                }
            })?;
            c.validate("config")?;
            Ok(c)
        }
        Some(_) => Err(ClarifyError::input(
            "`config` must be TOML text or an object",
        )),
    }
}

/// `agent-status.json` as an object or as the file's raw text.
pub fn statuses(statuses: Option<&Value>) -> Result<Statuses, ClarifyError> {
    match given(statuses) {
        None => Ok(Statuses::new()),
        Some(Value::String(text)) => {
            crate::agents::parse_statuses("agent-status.json", text.as_bytes())
        }
        Some(v) => Statuses::deserialize(v)
            .map_err(|e| ClarifyError::corrupt("agent-status.json", e.to_string())),
    }
}

/// `ledgers` (objects) and `files` (raw texts) of a workspace; unreadable ones become report
/// errors rather than failures, so one bad file never hides the others.
pub fn workspace(
    ledgers: Option<&Value>,
    files: Option<&Value>,
) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    let (mut ledgers, mut errors) = object_ledgers(ledgers)?;
    match given(files) {
        None => {}
        Some(Value::Object(files)) => {
            for (name, text) in files {
                let Some(text) = text.as_str() else {
                    return Err(ClarifyError::input(format!(
                        "file `{name}` must be a string"
                    )));
                };
                match issue_of_file_name(name) {
                    Some(n) if n > crate::names::MAX_ISSUE => {
                        let e = ClarifyError::InvalidIssue {
                            value: n.to_string(),
                        };
                        errors.push(ReportError::new(name.clone(), &e));
                    }
                    Some(n) => match Ledger::parse(name, text.as_bytes(), u32::try_from(n).ok()) {
                        Ok(l) => ledgers.push(l),
                        Err(e) => errors.push(ReportError::new(name.clone(), &e)),
                    },
                    None => {}
                }
            }
        }
        Some(_) => {
            return Err(ClarifyError::input(
                "`files` must be an object of file name → text",
            ))
        }
    }
    Ok((ledgers, errors))
}

/// The `ledgers` (objects) of a workspace alone, unreadable ones as report errors.
pub fn object_ledgers(
    ledgers: Option<&Value>,
) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    match given(ledgers) {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let file = item
                    .get("issueNumber")
                    .and_then(Value::as_u64)
                    .map_or_else(|| format!("ledgers[{i}]"), |n| format!("issue-{n}.json"));
                match Ledger::from_value(&file, item, None) {
                    Ok(l) => found.push(l),
                    Err(e) => errors.push(ReportError::new(file, &e)),
                }
            }
        }
        Some(_) => return Err(ClarifyError::input("`ledgers` must be an array of ledgers")),
    }
    Ok((found, errors))
}

/// The ledger of one issue from `files` (raw text, parse errors reported) or `ledgers`.
pub fn workspace_ledger(
    ledgers: Option<&Value>,
    files: Option<&Value>,
    issue: u32,
) -> Result<Option<Ledger>, ClarifyError> {
    let name = format!("issue-{issue}.json");
    if let Some(text) = given(files).and_then(|f| f.get(&name)) {
        let text = text
            .as_str()
            .ok_or_else(|| ClarifyError::input(format!("file `{name}` must be a string")))?;
        return Ledger::parse(&name, text.as_bytes(), Some(issue)).map(Some);
    }
    if let Some(Value::Array(items)) = given(ledgers) {
        for item in items {
            if item.get("issueNumber").and_then(Value::as_u64) == Some(u64::from(issue)) {
                return Ledger::from_value(&name, item, Some(issue)).map(Some);
            }
        }
    }
    Ok(None)
}

/// A record given as the outputs show it (with `issueNumber`), for the renderers.
pub(crate) fn clarification(value: &Value) -> Result<(u32, Record), ClarifyError> {
    let issue = value
        .get("issueNumber")
        .and_then(Value::as_u64)
        .or_else(|| {
            value
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| ClarificationId::parse(id).ok())
                .map(|id| u64::from(id.issue))
        })
        .ok_or_else(|| {
            ClarifyError::input("a clarification needs `issueNumber` or a valid `id`")
        })?;
    let issue = crate::names::check_issue(issue)?;
    let wrapped = serde_json::json!({"issueNumber": issue, "clarifications": [value]});
    let mut ledger = Ledger::from_value("clarification", &wrapped, None)?;
    let record = ledger
        .clarifications
        .pop()
        .ok_or_else(|| ClarifyError::input("`clarification` is empty"))?;
    Ok((issue, record))
}
