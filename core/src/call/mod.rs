//! One typed input per operation (docs/api.md "Inputs"; docs/decisions.md "One input per
//! operation"). Every door — `/api/v1/call`, MCP, A2A, the Node addon, the wasm package, the
//! vectors, the CLI's flags — reads an operation's fields into the same struct of
//! [`store`] (the command layer's operations) or [`pure`] (the facade's functions, which add
//! the ledgers and settings they decide on), and [`table`] names every operation once.
//!
//! JSON is the skin: [`decode`] turns an object into the struct ([`fields`] says how). An
//! unknown or misspelt field is `INVALID_INPUT` naming it and the nearest known field (`isue`
//! → "did you mean `issue`?"), a missing or mistyped one names its path (`options[0].value`). Values whose
//! meaning the core checks (issue numbers, times, kinds) stay loose here and are checked when
//! the struct becomes the core's own request, so every door refuses them with the same code
//! and message, in the same order.

#[macro_use]
pub mod fields;
pub mod pure;
pub mod store;
pub mod table;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

pub use fields::Input;
/// The TypeScript derive the input structs use, for the types generator (`tests/types.rs`).
pub use ts_rs;

use crate::error::ClarifyError;

/// Decodes `input` (an object; null is `{}`) as `T`, refusing unknown fields with the nearest
/// known one.
pub fn decode<T: Input>(input: &Value) -> Result<T, ClarifyError> {
    T::from_input(object(input)?)
}

/// An input's object (or null, no fields), owned.
#[inline(never)]
fn object(input: &Value) -> Result<Value, ClarifyError> {
    match input {
        Value::Object(_) | Value::Null => Ok(input.clone()),
        _ => Err(ClarifyError::input("the input must be an object")),
    }
}

/// An input of two parts: the fields `A` knows, and the rest as `B` (an operation's own input,
/// which the pure facade shares with the command layer: `request` is `ask`'s fields and the
/// ledger they are decided on).
pub fn decode_pair<A: Input, B: Input>(input: &Value) -> Result<(A, B), ClarifyError> {
    let (ours, rest) = split(input, A::FIELDS)?;
    let b = B::from_value(rest, A::FIELDS).map_err(fields::refused)?;
    let a = A::from_input(ours)?;
    Ok((a, b))
}

/// The entries `known` names, and the others.
#[inline(never)]
fn split(input: &Value, known: &[&str]) -> Result<(Value, Value), ClarifyError> {
    let entries = fields::Fields::of(object(input)?).map_err(ClarifyError::input)?;
    let (ours, rest): (Map<String, Value>, Map<String, Value>) = entries
        .into_iter()
        .partition(|(k, _)| known.contains(&k.as_str()));
    Ok((Value::Object(ours), Value::Object(rest)))
}

/// An issue number as callers send it: a number or decimal text. It is checked when the input
/// becomes a request (`INVALID_ISSUE`, in the core's order of checks).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, ts_rs::TS)]
#[serde(transparent)]
#[ts(type = "number | string")]
pub struct IssueArg(pub Value);

impl IssueArg {
    /// The number, not yet range checked (a request checks it with its other fields).
    pub fn number(&self) -> Result<u64, ClarifyError> {
        match &self.0 {
            Value::String(s) => crate::names::parse_issue(s).map(u64::from),
            v => match integral(v) {
                Some(n) if n >= 0 => Ok(n.unsigned_abs()),
                _ => Err(ClarifyError::InvalidIssue {
                    value: v.to_string(),
                }),
            },
        }
    }

    /// The number, range checked (docs/protocol.md §3).
    pub fn checked(&self) -> Result<u32, ClarifyError> {
        crate::names::check_issue(self.number()?)
    }
}

impl From<u32> for IssueArg {
    fn from(n: u32) -> Self {
        IssueArg(Value::from(n))
    }
}

impl From<&str> for IssueArg {
    fn from(text: &str) -> Self {
        IssueArg(Value::from(text))
    }
}

/// The optional issue of an input, range checked.
pub fn opt_issue(issue: Option<&IssueArg>) -> Result<Option<u32>, ClarifyError> {
    issue.map(IssueArg::checked).transpose()
}

/// An integer, also when a JS host sends it as a float with no fraction.
fn integral(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        v.as_f64().and_then(|f| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            let ok = f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0;
            #[allow(clippy::cast_possible_truncation)]
            ok.then_some(f as i64)
        })
    })
}

/// A whole number (JS hosts may send `3.0`); its range is the field's to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(transparent)]
#[ts(type = "number")]
pub struct Integer(pub i64);

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        integral(&v)
            .map(Integer)
            .ok_or_else(|| serde::de::Error::custom(format!("expected an integer, found {v}")))
    }
}

/// An instant: epoch milliseconds, or RFC 3339 text (`2026-11-22T10:00:00Z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(transparent)]
#[ts(type = "number | string")]
pub struct Time(pub i64);

impl Time {
    fn of(value: &Value) -> Result<Time, String> {
        match value {
            Value::String(text) => crate::time::parse_instant(text).map(Time),
            v => {
                let ms = integral(v)
                    .ok_or_else(|| String::from("must be epoch milliseconds or RFC 3339 text"))?;
                crate::ops::check_now(ms).map_err(message)?;
                Ok(Time(ms))
            }
        }
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Time::of(&Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// An error's message without its code's prefix (`invalid input: …`), to nest in another.
fn message(e: ClarifyError) -> String {
    match e {
        ClarifyError::InvalidInput { message } => message,
        other => other.to_string(),
    }
}

/// The call's own clock reading, taken out of an operation's input: `now` (epoch ms or RFC
/// 3339 text) is not an operation's field but when the call happens, given by the shells that
/// replay or test (the CLI's `--now`, the vectors, Node, wasm). The network doors refuse it
/// (docs/security-serve.md: only the server's clock counts there).
pub fn take_now(input: &Value) -> Result<(Option<i64>, Value), ClarifyError> {
    let Value::Object(map) = input else {
        return Ok((None, input.clone()));
    };
    let mut rest = map.clone();
    let now = match rest.remove(NOW) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            Time::of(&v)
                .map_err(|why| ClarifyError::input(format!("`{NOW}`: {why}")))?
                .0,
        ),
    };
    Ok((now, Value::Object(rest)))
}

/// The field a network door refuses.
pub const NOW: &str = "now";

#[cfg(test)]
mod tests;
