//! Typed reading of TOML with positions, shared by the config and workflow parsers: every
//! wrong type or out-of-range value becomes `CONFIG_INVALID` at file:line:column.
//!
//! Documents are parsed into toml's span-preserving tables (`toml::de::DeTable`) and read by
//! hand, without serde: the same precise errors, a fraction of the code in the wasm build.

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::ClarifyError;

pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// One TOML document being read, for locating errors.
pub(crate) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

/// The text of a TOML file's bytes (a BOM skipped); invalid UTF-8 is `CONFIG_INVALID` naming
/// the file, the line and column, and the byte offset (docs/protocol.md §20).
pub(crate) fn toml_text<'b>(file: &str, bytes: &'b [u8]) -> Result<&'b str, ClarifyError> {
    crate::encoding::utf8_text(bytes).map_err(|e| ClarifyError::ConfigInvalid {
        file: file.to_owned(),
        location: Some((e.line, e.column)),
        message: e.message(),
    })
}

impl<'a> Source<'a> {
    /// Parses the document into its top-level table.
    pub(crate) fn parse(&self) -> Result<Spanned<DeTable<'a>>, ClarifyError> {
        DeTable::parse(self.text).map_err(|e| self.toml_error(&e))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn location(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    pub(crate) fn error_at(&self, span: &Range<usize>, message: impl Into<String>) -> ClarifyError {
        ClarifyError::ConfigInvalid {
            file: self.file.to_owned(),
            location: Some(self.location(span.start)),
            message: message.into(),
        }
    }

    /// Converts a TOML syntax error.
    pub(crate) fn toml_error(&self, err: &toml::de::Error) -> ClarifyError {
        let message = err.message().trim().replace('\n', " ");
        ClarifyError::ConfigInvalid {
            file: self.file.to_owned(),
            location: err.span().map(|s| self.location(s.start)),
            message: lowercase_first(&message),
        }
    }

    pub(crate) fn int(
        &self,
        key: &str,
        v: &Value<'_>,
        min: i64,
        max: i64,
    ) -> Result<i64, ClarifyError> {
        match integer(v.get_ref()) {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be an integer from {min} to {max}, found {}",
                    describe(v.get_ref())
                ),
            )),
        }
    }

    /// A number in `min..=max`; `range` says it in words (no float formatting needed).
    pub(crate) fn float(
        &self,
        key: &str,
        v: &Value<'_>,
        min: f64,
        max: f64,
        range: &str,
    ) -> Result<f64, ClarifyError> {
        #[allow(clippy::cast_precision_loss)] // small integers written without a decimal point
        let n = match v.get_ref() {
            DeValue::Float(f) => float_text(f.as_str()),
            other => integer(other).map(|i| i as f64),
        };
        match n {
            Some(f) if f >= min && f <= max => Ok(f),
            _ => Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be a number from {range}, found {}",
                    describe(v.get_ref())
                ),
            )),
        }
    }

    pub(crate) fn boolean(&self, key: &str, v: &Value<'_>) -> Result<bool, ClarifyError> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(self.error_at(
                &v.span(),
                format!("{key} must be true or false, found {}", describe(other)),
            )),
        }
    }

    pub(crate) fn string(&self, key: &str, v: &Value<'_>) -> Result<String, ClarifyError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.error_at(
                &v.span(),
                format!("{key} must be a string, found {}", describe(other)),
            )),
        }
    }

    /// A table value (e.g. `[clarify]`).
    pub(crate) fn table<'t, 'i>(
        &self,
        key: &str,
        v: &'t Value<'i>,
    ) -> Result<&'t DeTable<'i>, ClarifyError> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self.error_at(
                &v.span(),
                format!("{key} must be a table, found {}", describe(other)),
            )),
        }
    }

    /// An array of agent names.
    pub(crate) fn agents(&self, key: &str, v: &Value<'_>) -> Result<Vec<String>, ClarifyError> {
        self.strings(
            key,
            v,
            (
                "agent names",
                "agent names matching ^[a-z0-9][a-z0-9-]{0,63}$",
            ),
            |s| crate::names::check_agent(s).is_ok(),
        )
    }

    /// An array of strings each accepted by `ok`; `what` is (what the array holds, what each
    /// item must be), for the two messages.
    pub(crate) fn strings(
        &self,
        key: &str,
        v: &Value<'_>,
        what: (&str, &str),
        ok: impl Fn(&str) -> bool,
    ) -> Result<Vec<String>, ClarifyError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be an array of {}, found {}",
                    what.0,
                    describe(v.get_ref())
                ),
            ));
        };
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) if ok(s) => Ok(s.to_string()),
                other => Err(self.error_at(
                    &item.span(),
                    format!("{key} must hold {}, found {}", what.1, describe(other)),
                )),
            })
            .collect()
    }
}

/// The value of `key` in `table`, if present.
pub(crate) fn get<'t, 'i>(table: &'t DeTable<'i>, key: &str) -> Option<&'t Value<'i>> {
    table
        .iter()
        .find(|(k, _)| k.get_ref() == key)
        .map(|(_, v)| v)
}

fn integer(v: &DeValue<'_>) -> Option<i64> {
    match v {
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok(),
        _ => None,
    }
}

pub(crate) fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("string \"{s}\""),
        DeValue::Integer(i) => i.as_str().to_owned(),
        DeValue::Float(f) => f.as_str().to_owned(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(_) => String::from("a datetime"),
        DeValue::Array(_) => String::from("an array"),
        DeValue::Table(_) => String::from("a table"),
    }
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => crate::fold::lowercase(c.encode_utf8(&mut [0; 4])) + chars.as_str(),
        None => String::new(),
    }
}

/// A TOML float's text as a number, through the JSON number parser the module already has:
/// `str::parse::<f64>` would bring std's second float parser (18 KB of the wasm module). Once
/// the TOML parser has accepted the text, the grammars differ only in `_` between digits, a
/// leading `+`, and `inf`/`nan` (refused here: no setting takes them).
fn float_text(text: &str) -> Option<f64> {
    let digits = text.replace('_', "");
    serde_json::from_str::<f64>(digits.strip_prefix('+').unwrap_or(&digits)).ok()
}
