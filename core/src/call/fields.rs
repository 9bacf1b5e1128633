//! How an input struct reads its object: [`input!`](crate::input) declares the struct with
//! its fields' JSON names, and [`Fields`] hands each field its value, refusing the keys no
//! field has (`deny_unknown_fields`) with the nearest known one.
//!
//! Why not `#[derive(Deserialize)]` with `#[serde(rename_all = "camelCase",
//! deny_unknown_fields)]`: the derive stamps out a map visitor, a sequence visitor and a
//! field visitor per struct, and the wasm package carries every input (docs/decisions.md "One
//! input per operation" has the measurements: +74 KB gzipped with field paths, over the 400 KB
//! guard). Here each struct is one short function over the shared readers below; the
//! semantics are serde's attributes' (camelCase names, unknown fields refused, null is
//! absent), and the structs still implement `serde::Deserialize`.

use serde_json::{Map, Value};

use crate::error::shown;

/// The entries of an input object not yet read, and the first field that did not read.
/// Boxed: every struct's reader holds one, and a pointer moves in one instruction.
pub struct Fields {
    entries: Box<Map<String, Value>>,
    error: Option<String>,
}

impl Fields {
    /// The object's entries, or the refusal of a key that none of `known` (nor `also`, the
    /// fields a caller took out before) names.
    pub fn check(
        entries: Map<String, Value>,
        known: &[&str],
        also: &[&str],
    ) -> Result<Fields, String> {
        if let Some(key) = entries.keys().find(|k| !known.contains(&k.as_str())) {
            let mut all: Vec<&str> = known.to_vec();
            all.extend_from_slice(also);
            let hint = match crate::nearest::nearest(key, &all) {
                Some(near) => format!("did you mean `{near}`?"),
                None if all.is_empty() => String::from("this input takes no fields"),
                None => format!("known fields: {}", all.join(", ")),
            };
            return Err(format!("unknown field `{}`; {hint}", shown(key)));
        }
        Ok(Fields {
            entries: Box::new(entries),
            error: None,
        })
    }

    /// The fields of `value` (an object; null is `{}`), checked against `known` and `also`.
    /// One copy serves every struct.
    #[inline(never)]
    pub fn open(value: Value, known: &[&str], also: &[&str]) -> Result<Fields, String> {
        Fields::check(Fields::of(value)?, known, also)
    }

    /// The entries of `value`, which must be an object (null is `{}`).
    pub fn of(value: Value) -> Result<Map<String, Value>, String> {
        match value {
            Value::Object(map) => Ok(map),
            Value::Null => Ok(Map::new()),
            _ => Err(String::from("must be an object")),
        }
    }

    /// Field `key` as `T` (absent and null are the same), or, when it does not read, a
    /// default kept until [`Fields::done`] reports the first such field. A struct reads every
    /// field, then asks: returning at the first failure would drop the fields read so far on
    /// each path, which the compiler writes out per field and per struct.
    #[inline(never)]
    pub fn take<T: Field + Default>(&mut self, key: &str) -> T {
        match T::field(self.raw(key)) {
            Ok(v) => v,
            Err(why) => {
                if self.error.is_none() {
                    self.error = Some(nest(key, &why));
                }
                T::default()
            }
        }
    }

    /// The first field that did not read, if any.
    #[inline(never)]
    pub fn done(&mut self) -> Result<(), String> {
        self.error.take().map_or(Ok(()), Err)
    }

    /// [`Fields::take`], at once (outside a struct's reader).
    pub fn get<T: Field + Default>(&mut self, key: &str) -> Result<T, String> {
        let v = self.take(key);
        self.done().map(|()| v)
    }

    #[inline(never)]
    fn raw(&mut self, key: &str) -> Option<Value> {
        self.entries.remove(key).filter(|v| !v.is_null())
    }
}

/// serde's own refusal of an unknown field (a struct deriving `Deserialize` with
/// `deny_unknown_fields`, as MCP's tool inputs do: `unknown field `isue`, expected one of
/// `issue`, `to``) in these words: the field and the nearest known one. Any other message is
/// returned as it is.
pub fn serde_message(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_owned();
    };
    // serde's text: the field in backticks, then `, expected one of `a`, `b`` (or "`a` or
    // `b`", "`a`", "there are no fields"): every other backticked word is a known field. The
    // tests pin it.
    let parts: Vec<&str> = rest.split('`').collect();
    let field = parts.first().copied().unwrap_or_default();
    let known: Vec<&str> = parts.iter().skip(2).step_by(2).copied().collect();
    let entries = std::iter::once((field.to_owned(), Value::Null)).collect();
    match Fields::check(entries, &known, &[]) {
        Err(why) => why,
        Ok(_) => message.to_owned(),
    }
}

/// A message about `inner` (a field, or an element: `options[1]`) under `outer`'s name:
/// `unknown field `lable`` becomes `unknown field `options[1].lable``.
pub fn nest(outer: &str, message: &str) -> String {
    const UNKNOWN: &str = "unknown field `";
    // An element's path joins without a dot: `options[1]`.
    let join = |rest: &str| match rest.starts_with('[') {
        true => format!("{outer}{rest}"),
        false => format!("{outer}.{rest}"),
    };
    if let Some(rest) = message.strip_prefix(UNKNOWN) {
        return format!("{UNKNOWN}{}", join(rest));
    }
    match message.strip_prefix('`') {
        // `inner` is required / `inner`: why
        Some(rest) => format!("`{}", join(rest)),
        // the field's own value: `outer` must be a string / `outer` is required
        None if message.starts_with("must ") || message.starts_with("is ") => {
            format!("`{outer}` {message}")
        }
        None => format!("`{outer}`: {message}"),
    }
}

const REQUIRED: &str = "is required";

/// A value a field can hold: required (absent is refused) or `Option` (absent is `None`).
pub trait Field: Sized {
    fn field(value: Option<Value>) -> Result<Self, String>;
}

/// A value read from JSON without serde's decoder (the readers below are a few lines each;
/// serde's, stamped out per type over an owned `Value`, cost the wasm package kilobytes).
pub trait Read: Sized {
    fn read(value: Value) -> Result<Self, String>;
}

impl<T: Read> Field for T {
    fn field(value: Option<Value>) -> Result<Self, String> {
        value.map_or(Err(String::from(REQUIRED)), T::read)
    }
}

impl<T: Read> Field for Option<T> {
    fn field(value: Option<Value>) -> Result<Self, String> {
        value.map(T::read).transpose()
    }
}

impl Read for String {
    fn read(value: Value) -> Result<Self, String> {
        match value {
            Value::String(s) => Ok(s),
            _ => Err(String::from("must be a string")),
        }
    }
}

impl Read for bool {
    fn read(value: Value) -> Result<Self, String> {
        match value {
            Value::Bool(b) => Ok(b),
            _ => Err(String::from("must be true or false")),
        }
    }
}

impl Read for Value {
    fn read(value: Value) -> Result<Self, String> {
        Ok(value)
    }
}

impl Read for Vec<String> {
    fn read(value: Value) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err(String::from("must be an array of strings"));
        };
        items
            .into_iter()
            .map(|item| String::read(item).map_err(|_| String::from("must hold strings")))
            .collect()
    }
}

impl Read for super::IssueArg {
    fn read(value: Value) -> Result<Self, String> {
        Ok(super::IssueArg(value))
    }
}

impl Read for super::Integer {
    fn read(value: Value) -> Result<Self, String> {
        super::integral(&value)
            .map(super::Integer)
            .ok_or_else(|| String::from("must be an integer"))
    }
}

impl Read for super::Time {
    fn read(value: Value) -> Result<Self, String> {
        super::Time::of(&value)
    }
}

/// A list of input structs, each refused at its index (`options[1]`).
impl<T: Input> Read for Vec<T> {
    fn read(value: Value) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err(String::from("must be an array"));
        };
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| T::from_value(item, &[]).map_err(|why| nest(&format!("[{i}]"), &why)))
            .collect()
    }
}

/// Drops a struct that did not read, out of line: its drop glue is written once, not inlined
/// at every reader's failure.
#[inline(never)]
fn discard<T>(value: T) {
    drop(value);
}

/// A reader's refusal as the caller's `INVALID_INPUT`.
#[inline(never)]
pub fn refused(why: String) -> crate::ClarifyError {
    crate::ClarifyError::input(why)
}

/// An input struct (declared with [`input!`](crate::input)).
pub trait Input: Sized {
    /// Its fields' JSON names, in declaration order.
    const FIELDS: &'static [&'static str];

    /// Reads the struct from its (checked) entries; [`Fields::done`] says whether every field
    /// read.
    fn read(fields: &mut Fields) -> Self;

    /// Reads the struct from `value`; `also` are fields a caller took out before (they count
    /// as known in the hint of an unknown one).
    fn from_value(value: Value, also: &[&str]) -> Result<Self, String> {
        let mut fields = Fields::open(value, Self::FIELDS, also)?;
        let read = Self::read(&mut fields);
        match fields.done() {
            Ok(()) => Ok(read),
            Err(why) => {
                discard(read);
                Err(why)
            }
        }
    }

    /// [`Input::from_value`] for an operation's whole input: the refusal is `INVALID_INPUT`.
    fn from_input(value: Value) -> Result<Self, crate::ClarifyError> {
        Self::from_value(value, &[]).map_err(refused)
    }
}

/// Declares an input struct: its fields with their JSON names, `Option` fields optional, a
/// key no field names refused with the nearest one (see the module's documentation). The
/// struct derives `ts_rs::TS` under the same names (types/types.d.ts) and implements
/// `serde::Deserialize` through [`Input`].
#[macro_export]
#[doc(hidden)]
macro_rules! input {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty = $key:literal, )*
        }
    ) => {
        #[derive(Clone, Debug, Default, PartialEq, ts_rs::TS)]
        #[ts(optional_fields)]
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* #[ts(rename = $key)] pub $field: $ty, )*
        }

        impl $crate::call::fields::Input for $name {
            const FIELDS: &'static [&'static str] = &[$($key),*];

            #[allow(unused_variables)]
            fn read(fields: &mut $crate::call::fields::Fields) -> Self {
                $name { $( $field: fields.take($key), )* }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                <$name as $crate::call::fields::Input>::from_value(value, &[])
                    .map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    };
}
