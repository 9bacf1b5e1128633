//! `migrate` (docs/protocol.md §20): upgrades a ledger another tool wrote (the reference implementation,
//! AgentX's TypeScript and PowerShell writers) to the form this crate writes, and says what
//! changed. Pure: the command reads the file under its lock, calls [`migrate_file`] and writes
//! [`Migration::text`] when [`Migration::changes`] is not empty.
//!
//! The upgrade is the one every write makes ([`Ledger::seal`]): snapshots set from the fold,
//! unhashed entries hashed in order, timestamps in canonical form, record-level `issueNumber`
//! dropped, missing `slaMinutes`/`retries`/entry rounds filled, no BOM, pretty JSON with a
//! trailing newline. The changes are found by comparing the stored JSON with the upgraded
//! one, so every difference is reported, whichever writer left it. Migrating the result again
//! changes nothing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{shown, ClarifyError};
use crate::ledger::Ledger;
use crate::time::parse_ms;

/// One change `migrate` made; `id` is None for a ledger-level change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub id: Option<String>,
    pub message: String,
}

/// The upgraded ledger, its file text and what changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Migration {
    pub ledger: Ledger,
    /// The bytes to write (pretty JSON, trailing newline, no BOM).
    pub text: String,
    /// Empty when the file is already in the form this crate writes (`text` equals it).
    pub changes: Vec<Change>,
}

/// The snapshot fields `seal` sets from the fold.
const SNAPSHOT: [&str; 6] = [
    "status",
    "round",
    "retries",
    "created",
    "staleAfter",
    "resolvedAt",
];

/// Migrates a ledger file's bytes. `issue` comes from the file name, as for
/// [`Ledger::parse`]: a ledger that does not parse, or is misfiled, is `LEDGER_CORRUPT` and
/// must be left untouched.
pub fn migrate_file(
    file: &str,
    bytes: &[u8],
    issue: Option<u32>,
) -> Result<Migration, ClarifyError> {
    let ledger = Ledger::parse(file, bytes, issue)?;
    let body = crate::encoding::strip_bom(bytes);
    let stored: Value =
        serde_json::from_slice(body).map_err(|e| ClarifyError::corrupt(file, e.to_string()))?;
    let mut migration = upgrade(ledger, &stored);
    if body.len() != bytes.len() {
        migration.changes.insert(
            0,
            Change {
                id: None,
                message: String::from("removed the UTF-8 byte order mark"),
            },
        );
    } else if migration.changes.is_empty() && body != migration.text.as_bytes() {
        migration.changes.push(Change {
            id: None,
            message: String::from(
                "rewrote the layout: pretty JSON with 2-space indents and a trailing newline",
            ),
        });
    }
    Ok(migration)
}

/// Migrates a ledger given as parsed JSON (any shape [`Ledger::from_value`] reads).
pub fn migrate_value(
    file: &str,
    stored: &Value,
    issue: Option<u32>,
) -> Result<Migration, ClarifyError> {
    let ledger = Ledger::from_value(file, stored, issue)?;
    Ok(upgrade(ledger, stored))
}

fn upgrade(mut ledger: Ledger, stored: &Value) -> Migration {
    ledger.seal();
    let upgraded = ledger.to_value();
    let mut changes = Vec::new();
    diff_ledger(stored, &upgraded, &mut changes);
    Migration {
        text: ledger.to_pretty_json(),
        ledger,
        changes,
    }
}

fn diff_ledger(stored: &Value, upgraded: &Value, out: &mut Vec<Change>) {
    let empty = Map::new();
    let old = stored.as_object().unwrap_or(&empty);
    let new = upgraded.as_object().unwrap_or(&empty);
    for message in diff_fields(old, new, &["clarifications"], &[]) {
        out.push(Change { id: None, message });
    }
    let records = |m: &Map<String, Value>| {
        m.get("clarifications")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for (old, new) in records(old).iter().zip(records(new).iter()) {
        let id = new.get("id").and_then(Value::as_str).map(str::to_owned);
        for message in diff_record(old, new) {
            out.push(Change {
                id: id.clone(),
                message,
            });
        }
    }
}

fn diff_record(stored: &Value, upgraded: &Value) -> Vec<String> {
    let empty = Map::new();
    let old = stored.as_object().unwrap_or(&empty);
    let new = upgraded.as_object().unwrap_or(&empty);
    let mut out = diff_fields(old, new, &["thread"], &SNAPSHOT);
    let entries = |m: &Map<String, Value>| {
        m.get("thread")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (old, new) = (entries(old), entries(new));
    let mut hashed = Vec::new();
    let mut respelled = Vec::new();
    for (n, (old, new)) in old.iter().zip(new.iter()).enumerate() {
        let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
            continue;
        };
        for (key, value) in new {
            let before = old.get(key);
            if before == Some(value) {
                continue;
            }
            match (key.as_str(), before) {
                ("hash", None) => hashed.push(n + 1),
                ("timestamp", Some(b)) if same_instant(b, value) => respelled.push(n + 1),
                _ => out.push(format!(
                    "entry {}: {}",
                    n + 1,
                    describe(key, before, value, false)
                )),
            }
        }
        for key in old.keys().filter(|k| !new.contains_key(*k)) {
            out.push(format!("entry {}: dropped {key}", n + 1));
        }
    }
    if !hashed.is_empty() {
        out.push(format!("hashed {} in order", entries_text(&hashed)));
    }
    if !respelled.is_empty() {
        out.push(format!(
            "wrote the timestamps of {} in canonical form (same instants)",
            entries_text(&respelled)
        ));
    }
    out
}

/// Added, dropped and changed fields of one object, `skip` left to the caller; `snapshot`
/// fields are said to come from the thread.
fn diff_fields(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    skip: &[&str],
    snapshot: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in new {
        let before = old.get(key);
        if skip.contains(&key.as_str()) || before == Some(value) {
            continue;
        }
        let from_thread = snapshot.contains(&key.as_str());
        out.push(describe(key, before, value, from_thread));
    }
    for (key, value) in old {
        if !new.contains_key(key) && !skip.contains(&key.as_str()) {
            out.push(format!("dropped {key} (was {})", compact(value)));
        }
    }
    out
}

fn describe(key: &str, before: Option<&Value>, after: &Value, from_thread: bool) -> String {
    let why = if from_thread {
        " (from the thread)"
    } else {
        ""
    };
    match before {
        None if from_thread => format!(
            "set {key} to {} (was missing; from the thread)",
            compact(after)
        ),
        None => format!("set {key} to {} (was missing)", compact(after)),
        Some(b) if same_instant(b, after) => {
            format!(
                "wrote {key} {} as {} (same instant)",
                compact(b),
                compact(after)
            )
        }
        Some(b) => format!("{key} {} → {}{why}", compact(b), compact(after)),
    }
}

fn same_instant(a: &Value, b: &Value) -> bool {
    match (a.as_str().and_then(parse_ms), b.as_str().and_then(parse_ms)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn compact(v: &Value) -> String {
    shown(&serde_json::to_string(v).unwrap_or_default())
}

/// `entry 3`, `entries 1–4` or `entries 1, 3`: 1-based entry numbers, ascending.
fn entries_text(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("entry {one}"),
        [first, .., last] if last - first + 1 == numbers.len() => {
            format!("entries {first}–{last}")
        }
        _ => {
            let list: Vec<String> = numbers.iter().map(usize::to_string).collect();
            format!("entries {}", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests;
