//! Typed reading of TOML values with their positions, shared by the config and workflow
//! parsers: every wrong type or out-of-range value becomes `CONFIG_INVALID` at file:line:col.

use std::ops::Range;

use toml::{Spanned, Value};

use crate::error::ClarifyError;

/// One TOML document being read, for locating errors.
pub(crate) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn location(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    pub fn error_at(&self, span: &Range<usize>, message: impl Into<String>) -> ClarifyError {
        ClarifyError::ConfigInvalid {
            file: self.file.to_owned(),
            location: Some(self.location(span.start)),
            message: message.into(),
        }
    }

    /// Converts a TOML syntax or type error.
    pub fn toml_error(&self, err: &toml::de::Error) -> ClarifyError {
        let message = err.message().trim().replace('\n', " ");
        ClarifyError::ConfigInvalid {
            file: self.file.to_owned(),
            location: err.span().map(|s| self.location(s.start)),
            message: lowercase_first(&message),
        }
    }

    pub fn int(
        &self,
        key: &str,
        v: &Spanned<Value>,
        min: i64,
        max: i64,
    ) -> Result<i64, ClarifyError> {
        match v.get_ref() {
            Value::Integer(n) if (min..=max).contains(n) => Ok(*n),
            other => Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be an integer from {min} to {max}, found {}",
                    describe(other)
                ),
            )),
        }
    }

    pub fn float(
        &self,
        key: &str,
        v: &Spanned<Value>,
        min: f64,
        max: f64,
    ) -> Result<f64, ClarifyError> {
        #[allow(clippy::cast_precision_loss)] // small integers written without a decimal point
        let n = match v.get_ref() {
            Value::Float(f) => Some(*f),
            Value::Integer(i) => Some(*i as f64),
            _ => None,
        };
        match n {
            Some(f) if f >= min && f <= max => Ok(f),
            _ => Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be a number from {min} to {max}, found {}",
                    describe(v.get_ref())
                ),
            )),
        }
    }

    pub fn boolean(&self, key: &str, v: &Spanned<Value>) -> Result<bool, ClarifyError> {
        match v.get_ref() {
            Value::Boolean(b) => Ok(*b),
            other => Err(self.error_at(
                &v.span(),
                format!("{key} must be true or false, found {}", describe(other)),
            )),
        }
    }

    pub fn string(&self, key: &str, v: &Spanned<Value>) -> Result<String, ClarifyError> {
        match v.get_ref() {
            Value::String(s) => Ok(s.clone()),
            other => Err(self.error_at(
                &v.span(),
                format!("{key} must be a string, found {}", describe(other)),
            )),
        }
    }

    /// An array of agent names.
    pub fn agents(&self, key: &str, v: &Spanned<Value>) -> Result<Vec<String>, ClarifyError> {
        let Value::Array(items) = v.get_ref() else {
            return Err(self.error_at(
                &v.span(),
                format!(
                    "{key} must be an array of agent names, found {}",
                    describe(v.get_ref())
                ),
            ));
        };
        items
            .iter()
            .map(|item| match item {
                Value::String(s) if crate::names::check_agent(s).is_ok() => Ok(s.clone()),
                other => Err(self.error_at(
                    &v.span(),
                    format!(
                        "{key} must hold agent names matching ^[a-z0-9][a-z0-9-]{{0,63}}$, found {}",
                        describe(other)
                    ),
                )),
            })
            .collect()
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string \"{s}\""),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => format!("datetime {d}"),
        Value::Array(_) => String::from("an array"),
        Value::Table(_) => String::from("a table"),
    }
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
