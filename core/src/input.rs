//! Decoding API input objects. Wrong shapes are `INVALID_INPUT`; bad ledgers `LEDGER_CORRUPT`;
//! bad workflows or settings `CONFIG_INVALID`. Public so the CLI's JSON facade (the Node
//! store) decodes the same fields with the same messages.
//!
//! Below the `api` facade, `routing` and `layer4`, which all read objects with it; `api`
//! re-exports it as `api::input` (docs/decisions.md, "core's layers").

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::agents::Statuses;
use crate::config::Config;
use crate::error::ClarifyError;
use crate::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use crate::ledger::{Ledger, Record, Severity, Status};
use crate::listing::ListFilter;
use crate::monitor::ReportError;
use crate::names::ClarificationId;
use crate::ops::{Action, NewRequest};
use crate::verify::issue_of_file_name;
use crate::workflow::{Workflow, Workflows};

pub type Obj = Map<String, Value>;

pub fn object(input: &Value) -> Result<&Obj, ClarifyError> {
    match input {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(empty()),
        _ => Err(ClarifyError::input("the argument must be an object")),
    }
}

fn empty() -> &'static Obj {
    static EMPTY: std::sync::OnceLock<Obj> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn present<'a>(map: &'a Obj, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
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

/// A flag: absent or null is false.
pub fn flag(map: &Obj, key: &str) -> Result<bool, ClarifyError> {
    Ok(opt_bool(map, key)?.unwrap_or(false))
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

pub fn now(map: &Obj) -> Result<i64, ClarifyError> {
    let n = opt_integer(map, "now")?
        .ok_or_else(|| ClarifyError::input("`now` is required (epoch milliseconds)"))?;
    crate::ops::check_now(n)?;
    Ok(n)
}

/// An issue number given as a number or a decimal string (range checked by the caller, in its
/// order of checks: `request` validates it with the other fields).
pub fn issue(map: &Obj, key: &str) -> Result<Option<u64>, ClarifyError> {
    match present(map, key) {
        None => Ok(None),
        Some(Value::String(s)) => crate::names::parse_issue(s).map(|n| Some(u64::from(n))),
        Some(v) => match as_integer(v) {
            Some(n) if n >= 0 => Ok(Some(n.unsigned_abs())),
            _ => Err(ClarifyError::InvalidIssue {
                value: v.to_string(),
            }),
        },
    }
}

/// An issue number, range checked (docs/protocol.md §3).
pub fn issue_number(map: &Obj, key: &str) -> Result<Option<u32>, ClarifyError> {
    issue(map, key)?.map(crate::names::check_issue).transpose()
}

/// `list`'s filter: `issue?`, `status?` (array of statuses), `all?`.
pub fn list_filter(map: &Obj) -> Result<ListFilter, ClarifyError> {
    let statuses = string_list(map, "status")?
        .iter()
        .map(|s| {
            Status::parse(s).ok_or_else(|| {
                ClarifyError::input(format!(
                    "unknown status '{s}'; allowed: pending, stale, answered, escalated, resolved, abandoned"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let issue = issue_number(map, "issue")?;
    Ok(ListFilter {
        issue,
        statuses,
        all: flag(map, "all")?,
    })
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

/// A new request's fields (`request` of the pure API, `ask` of the command layer), in the
/// order every surface reads them, Layer 4's last (docs/protocol.md §16: `severity?` — `BLOCK` or
/// `WARN` —, `context?`, `blockedOperations?`, `sessionId?`, `gapId?`). The issue number's range is checked with the other fields
/// by `NewRequest::validate`, in the core's order.
pub fn new_request(map: &Obj) -> Result<NewRequest, ClarifyError> {
    Ok(NewRequest {
        issue_number: issue(map, "issueNumber")?
            .ok_or_else(|| ClarifyError::input("`issueNumber` is required"))?,
        from: string(map, "from")?,
        to: string(map, "to")?,
        topic: string(map, "topic")?,
        question: string(map, "question")?,
        blocking: opt_bool(map, "blocking")?.unwrap_or(true),
        workflow: opt_string(map, "workflow")?,
        step: opt_string(map, "step")?,
        field: opt_string(map, "field")?,
        suggestions: string_list(map, "suggestions")?,
        idempotency_key: opt_string(map, "idempotencyKey")?,
        severity: opt_string(map, "severity")?
            .map(|s| Severity::parse(&s).map_err(ClarifyError::input))
            .transpose()?,
        context: opt_string(map, "context")?,
        blocked_operations: string_list(map, "blockedOperations")?,
        session_id: opt_string(map, "sessionId")?,
        gap_id: opt_string(map, "gapId")?,
        answer: answer_spec(map)?,
        ask_again: flag(map, "askAgain")?,
        extra: asked_back(map)?,
    })
}

/// A request's answer kind (docs/protocol.md §22): `answerKind?` (`text`, `confirm`, `choice`,
/// `multi_choice`), `options?` (`[{value, label?, description?}]`), `allowOther?`,
/// `minSelect?`, `maxSelect?`. Checked against each other by `AnswerSpec::validate`.
pub fn answer_spec(map: &Obj) -> Result<AnswerSpec, ClarifyError> {
    answer_spec_named(
        map,
        [
            "answerKind",
            "options",
            "allowOther",
            "minSelect",
            "maxSelect",
        ],
    )
}

/// [`answer_spec`] under other key names (Layer 4's plans spell them in snake_case).
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

/// `askedBack`, the question a request asks back (kept on the record under that name).
fn asked_back(map: &Obj) -> Result<Map<String, Value>, ClarifyError> {
    let mut extra = Map::new();
    if let Some(id) = opt_string(map, crate::replies::ASKED_BACK)? {
        extra.insert(crate::replies::ASKED_BACK.to_owned(), Value::from(id));
    }
    Ok(extra)
}

/// A scope preview's fields (`from`, `to`, `blocking`, `workflow`, `step`), any absent.
pub fn scope_question(map: &Obj) -> Result<crate::scope::Question, ClarifyError> {
    Ok(crate::scope::Question {
        from: opt_string(map, "from")?.unwrap_or_default(),
        to: opt_string(map, "to")?.unwrap_or_default(),
        blocking: opt_bool(map, "blocking")?.unwrap_or(true),
        workflow: opt_string(map, "workflow")?,
        step: opt_string(map, "step")?,
    })
}

/// The action of `op` (`answer`, `followUp`, `resolve`, `escalate` or `abandon`) from its
/// fields, in the order every surface reads them.
pub fn action(op: &str, map: &Obj) -> Result<Action, ClarifyError> {
    Ok(match op {
        "answer" => match present(map, "value") {
            Some(value) => Action::AnswerValue {
                from: string(map, "from")?,
                body: opt_string(map, "body")?,
                value: value.clone(),
            },
            None => Action::Answer {
                from: string(map, "from")?,
                body: string(map, "body")?,
            },
        },
        "followUp" => Action::FollowUp {
            from: string(map, "from")?,
            question: string(map, "question")?,
        },
        "resolve" => match present(map, "value") {
            Some(value) => Action::ResolveValue {
                from: opt_string(map, "from")?,
                message: opt_string(map, "message")?,
                value: value.clone(),
            },
            None => Action::Resolve {
                from: opt_string(map, "from")?,
                message: opt_string(map, "message")?,
            },
        },
        "escalate" => Action::Escalate {
            from: opt_string(map, "from")?,
            message: opt_string(map, "message")?,
        },
        "abandon" => Action::Abandon {
            from: opt_string(map, "from")?,
            message: opt_string(map, "message")?,
        },
        other => return Err(ClarifyError::input(format!("'{other}' takes no action"))),
    })
}

/// The issue's ledger: an object, or the raw text of its file (parsed here, so a corrupt file
/// is `LEDGER_CORRUPT` with the same message on every surface).
pub fn opt_ledger(map: &Obj, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
    let file = format!("issue-{issue}.json");
    match present(map, "ledger") {
        None => Ok(None),
        Some(Value::String(text)) => Ledger::parse(&file, text.as_bytes(), Some(issue)).map(Some),
        Some(v) => Ledger::from_value(&file, v, Some(issue)).map(Some),
    }
}

pub fn workflows(map: &Obj) -> Result<Workflows, ClarifyError> {
    let Some(value) = present(map, "workflows") else {
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

pub fn config(map: &Obj) -> Result<Config, ClarifyError> {
    match present(map, "config") {
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
pub fn statuses(map: &Obj) -> Result<Statuses, ClarifyError> {
    match present(map, "statuses") {
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
pub fn workspace(map: &Obj) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    let (mut ledgers, mut errors) = object_ledgers(map)?;
    match present(map, "files") {
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
pub fn object_ledgers(map: &Obj) -> Result<(Vec<Ledger>, Vec<ReportError>), ClarifyError> {
    let mut ledgers = Vec::new();
    let mut errors = Vec::new();
    match present(map, "ledgers") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let file = item
                    .get("issueNumber")
                    .and_then(Value::as_u64)
                    .map_or_else(|| format!("ledgers[{i}]"), |n| format!("issue-{n}.json"));
                match Ledger::from_value(&file, item, None) {
                    Ok(l) => ledgers.push(l),
                    Err(e) => errors.push(ReportError::new(file, &e)),
                }
            }
        }
        Some(_) => return Err(ClarifyError::input("`ledgers` must be an array of ledgers")),
    }
    Ok((ledgers, errors))
}

/// The ledger of one issue from `files` (raw text, parse errors reported) or `ledgers`.
pub fn workspace_ledger(map: &Obj, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
    let name = format!("issue-{issue}.json");
    if let Some(text) = present(map, "files").and_then(|f| f.get(&name)) {
        let text = text
            .as_str()
            .ok_or_else(|| ClarifyError::input(format!("file `{name}` must be a string")))?;
        return Ledger::parse(&name, text.as_bytes(), Some(issue)).map(Some);
    }
    if let Some(Value::Array(items)) = present(map, "ledgers") {
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
