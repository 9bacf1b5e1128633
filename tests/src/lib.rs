//! Support for the conformance vectors in `tests/vectors/` (format: `tests/vectors/README.md`):
//! loading (all, or the one file `AGENTX_VECTOR` names), subset matching, materialising a
//! scenario as a workspace on disk, and [`schema`], the published ledger schemas and their
//! validator. The vectors are played through the command layer
//! (`agentx_clarify_command::vector::play`) over each store.

// A test-support crate: a fixture that cannot be made fails the test that asked for it, loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod fixtures;
pub mod pg;
pub mod schema;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The vectors directory.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

/// Every vector file, sorted, with its path relative to the vectors directory; only those
/// whose path contains `AGENTX_VECTOR` when it is set (to run one file alone).
pub fn load_all() -> Vec<(String, Value)> {
    let root = vectors_dir();
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let only = std::env::var("AGENTX_VECTOR")
        .ok()
        .filter(|s| !s.is_empty());
    files
        .into_iter()
        .filter(|path| {
            only.as_deref()
                .is_none_or(|part| path.to_string_lossy().contains(part))
        })
        .map(|path| {
            let rel = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: invalid JSON: {e}"));
            (rel, value)
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// A case's `now` in epoch milliseconds (RFC 3339 text or a number).
pub fn now_ms(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .unwrap_or_else(|| panic!("now {n} is not an integer")),
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .unwrap_or_else(|e| panic!("now {s:?}: {e}"))
            .timestamp_millis(),
        other => panic!("now must be RFC 3339 text or epoch ms, found {other}"),
    }
}

/// Checks `actual` against `expect` as a subset (see the vectors README). Returns the path
/// and reason of the first mismatch.
pub fn subset_match(expect: &Value, actual: &Value) -> Result<(), String> {
    matches_at(expect, actual, "$")
}

fn matches_at(expect: &Value, actual: &Value, at: &str) -> Result<(), String> {
    if let Value::Object(e) = expect {
        if let Some(n) = e.get("$len") {
            return match actual {
                Value::Array(items) if Some(items.len() as u64) == n.as_u64() => Ok(()),
                _ => Err(format!(
                    "{at}: expected an array of length {n}, found {}",
                    short(actual)
                )),
            };
        }
    }
    match (expect, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let path = format!("{at}.{k}");
                let absent = ev.get("$absent").and_then(Value::as_bool).unwrap_or(false);
                match a.get(k) {
                    None if absent => {}
                    Some(av) if absent => {
                        return Err(format!("{path}: expected absent, found {}", short(av)))
                    }
                    None => return Err(format!("{path}: missing")),
                    Some(av) => matches_at(ev, av, &path)?,
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{at}: expected {} items, found {}: {}",
                    e.len(),
                    a.len(),
                    short(actual)
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                matches_at(ev, av, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let same = match (e.as_i64(), a.as_i64()) {
                (Some(x), Some(y)) => x == y,
                _ => (e.as_f64().unwrap_or(f64::NAN) - a.as_f64().unwrap_or(f64::NAN)).abs() < 1e-9,
            };
            if same {
                Ok(())
            } else {
                Err(format!("{at}: expected {e}, found {a}"))
            }
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{at}: expected {}, found {}", short(e), short(a))),
    }
}

/// A function vector's input with every `{"$let": name}` replaced by the file's `let` value
/// of that name (tests/function-vectors/README.md), so a ledger is written once per file.
pub fn resolve_lets(v: &Value, lets: &Value) -> Result<Value, String> {
    Ok(match v {
        Value::Object(m) => match m.get("$let") {
            Some(name) if m.len() == 1 => {
                let name = name.as_str().ok_or("`$let` names a value")?;
                lets.get(name)
                    .cloned()
                    .ok_or_else(|| format!("no `let` value named {name}"))?
            }
            _ => Value::Object(
                m.iter()
                    .map(|(k, x)| Ok((k.clone(), resolve_lets(x, lets)?)))
                    .collect::<Result<_, String>>()?,
            ),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| resolve_lets(x, lets))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

/// Writes a scenario's setup as a workspace under `root` (`.agentx/...`): the same files a
/// `MemStore` built from it holds.
pub fn materialize(setup: &Value, root: &Path) -> std::io::Result<()> {
    let files = agentx_clarify_command::paths::setup_files(setup)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    for dir in agentx_clarify_command::paths::STATE_DIRS {
        std::fs::create_dir_all(root.join(dir))?;
    }
    for (path, bytes) in files {
        let path = root.join(path);
        // Manifests and delegation ledgers live outside the state directories.
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let private = path.extension().is_some_and(|e| e == "key");
        std::fs::write(&path, bytes)?;
        // A private key file is owner-only, as `keys new` writes it (docs/protocol.md §16).
        if private {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// The exit code docs/protocol.md §11.1 gives a result envelope: the oracle the CLI's runner checks the
/// binary against.
pub fn exit_code_for(result: &Value) -> i32 {
    use agentx_clarify_core::error::{class_of, ErrorClass};
    if result.get("ok") == Some(&Value::Bool(true)) {
        return 0;
    }
    let code = result
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or("");
    match class_of(code) {
        ErrorClass::Input => 3,
        ErrorClass::Policy => 4,
        ErrorClass::NotFound => 5,
        ErrorClass::Transition => 6,
        ErrorClass::Lock => 7,
        ErrorClass::Corrupt => 8,
        ErrorClass::Agent => 9,
        ErrorClass::Io | ErrorClass::Internal => 1,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn subset_rules() {
        let actual = json!({"a": 1, "b": [1, {"c": 2, "d": 3}], "e": "x"});
        assert!(subset_match(&json!({"a": 1}), &actual).is_ok());
        assert!(subset_match(&json!({"b": [1, {"c": 2}]}), &actual).is_ok());
        assert!(
            subset_match(&json!({"b": [1]}), &actual).is_err(),
            "arrays need equal length"
        );
        assert!(subset_match(&json!({"b": {"$len": 2}}), &actual).is_ok());
        assert!(subset_match(&json!({"z": {"$absent": true}}), &actual).is_ok());
        assert!(subset_match(&json!({"e": {"$absent": true}}), &actual).is_err());
        assert!(subset_match(&json!({"a": 2}), &actual).is_err());
        assert!(
            subset_match(&json!({"f": null}), &actual).is_err(),
            "null is not absent"
        );
    }

    #[test]
    fn now_forms() {
        assert_eq!(
            now_ms(&json!("2026-11-22T10:00:00.000Z")),
            1_795_341_600_000
        );
        assert_eq!(now_ms(&json!(5)), 5);
    }
}
