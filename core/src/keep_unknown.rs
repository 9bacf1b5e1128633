//! (De)serialisation of JSON objects that keep unknown fields (ledgers, records, entries, agent
//! statuses), without serde's `flatten`: known keys go straight to their fields and any other
//! key to an `extra` map, in one pass with no intermediate buffering. This is faster than
//! `flatten` (the CLI parses thousands of ledgers per command) and much smaller in wasm.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// An object key, borrowed from the input when it has no escapes.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_owned(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Implements `Deserialize` for a struct with `Default`, optional fields and an `extra:
/// Map<String, Value>`: each listed key fills its field, required ones must be present, any
/// other key is kept in `extra`.
macro_rules! extensible_deserialize {
    ($ty:ident, required: [$($req:ident),*], fields: { $($field:ident => $key:literal),* $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a JSON object (", stringify!($ty), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                        let mut out = <$ty>::default();
                        while let Some(key) = map.next_key::<$crate::keep_unknown::Key<'de>>()? {
                            match key.as_str() {
                                $($key => out.$field = map.next_value()?,)*
                                _ => {
                                    let value: serde_json::Value = map.next_value()?;
                                    out.extra.insert(key.into_string(), value);
                                }
                            }
                        }
                        $(
                            if out.$req.is_none() {
                                return Err(<A::Error as serde::de::Error>::missing_field(stringify!($req)));
                            }
                        )*
                        Ok(out)
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

pub(crate) use extensible_deserialize;
