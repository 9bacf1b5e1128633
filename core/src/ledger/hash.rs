//! The hash chain (tamper evidence): each entry's hash is
//! `sha256(<record id> "\n" <previous hash or ""> "\n" <JCS of the entry without "hash">)`,
//! with the entry's `timestamp` in canonical form: hashing is over instants, not spellings.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::Entry;
use crate::digest::sha256_hex_of;

/// The lowercase hex SHA-256 of one entry, chained to the previous entry's hash.
pub fn entry_hash(record_id: &str, prev: &str, entry: &Entry) -> String {
    if entry.extra.is_empty() && entry.value.is_none() {
        chain_hash(record_id, prev, &known_fields_jcs(entry))
    } else {
        chain_hash(
            record_id,
            prev,
            canonical_json(&entry_value(entry)).as_bytes(),
        )
    }
}

/// The same chain over any JSON entry (delegation threads use it): the JCS of `entry`
/// without its top-level `hash` and `signature` (which signs the hash).
pub fn value_hash(record_id: &str, prev: &str, entry: &Value) -> String {
    match entry {
        Value::Object(map) if map.contains_key("hash") || map.contains_key("signature") => {
            let mut map = map.clone();
            map.remove("hash");
            map.remove("signature");
            chain_hash(
                record_id,
                prev,
                canonical_json(&Value::Object(map)).as_bytes(),
            )
        }
        other => chain_hash(record_id, prev, canonical_json(other).as_bytes()),
    }
}

fn chain_hash(record_id: &str, prev: &str, jcs: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(record_id.as_bytes());
    hasher.update(b"\n");
    hasher.update(prev.as_bytes());
    hasher.update(b"\n");
    hasher.update(jcs);
    sha256_hex_of(hasher)
}

/// The JCS of an entry without unknown fields, written straight out: the keys in their JCS
/// order (`body`, `from`, `round`, `signer` when signed, `timestamp`, `type`) with no map
/// built or sorted. Appends and `verify` hash every entry, so this is the common path, signed
/// or not (`signature` is never hashed: it signs the hash).
fn known_fields_jcs(entry: &Entry) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + entry.body.len() + entry.from.len());
    out.extend_from_slice(b"{\"body\":");
    write_string_bytes(&entry.body, &mut out);
    out.extend_from_slice(b",\"from\":");
    write_string_bytes(&entry.from, &mut out);
    out.extend_from_slice(b",\"round\":");
    out.extend_from_slice(entry.round.to_string().as_bytes());
    if let Some(signer) = &entry.signer {
        out.extend_from_slice(b",\"signer\":");
        write_string_bytes(signer, &mut out);
    }
    out.extend_from_slice(b",\"timestamp\":");
    write_string_bytes(&entry.timestamp.instant_text(), &mut out);
    out.extend_from_slice(b",\"type\":");
    write_string_bytes(entry.kind.as_str(), &mut out);
    out.push(b'}');
    out
}

/// The entry as JSON, every field except `hash`, unknown ones included.
fn entry_value(entry: &Entry) -> Value {
    let mut map = Map::new();
    for (k, v) in &entry.extra {
        map.insert(k.clone(), v.clone());
    }
    // `signer` is hashed like any field; `signature` signs the hash, so it cannot be in it.
    if let Some(signer) = &entry.signer {
        map.insert("signer".into(), Value::from(signer.as_str()));
    }
    map.remove("signature");
    map.insert("round".into(), Value::from(entry.round));
    map.insert("from".into(), Value::from(entry.from.as_str()));
    map.insert("type".into(), Value::from(entry.kind.as_str()));
    map.insert("body".into(), Value::from(entry.body.as_str()));
    if let Some(v) = &entry.value {
        map.insert("value".into(), v.clone());
    }
    map.insert(
        "timestamp".into(),
        Value::from(entry.timestamp.instant_text().into_owned()),
    );
    map.remove("hash");
    Value::Object(map)
}

/// Hashes, in order, the entries after the last hashed one (every entry of a legacy thread
/// without any hash), chained to it. Entries appended by a writer that does not hash (AgentX's
/// TypeScript) join the chain on the next write; an unhashed entry *before* a hashed one is
/// left alone for `verify` to report. Scans from the end: O(1) on a thread this crate wrote.
pub(super) fn hash_tail(record_id: &str, thread: &mut [Entry]) {
    let start = thread
        .iter()
        .rposition(|e| e.hash.is_some())
        .map_or(0, |i| i + 1);
    let mut prev = start
        .checked_sub(1)
        .and_then(|i| thread.get(i))
        .and_then(|e| e.hash.clone())
        .unwrap_or_default();
    for entry in thread.iter_mut().skip(start) {
        let h = entry_hash(record_id, &prev, entry);
        entry.hash = Some(h.clone());
        prev = h;
    }
}

/// What `verify` finds in a record's chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainState {
    /// Every entry carries the hash it should.
    Intact,
    /// No entry has a hash: a legacy record, hashed on its next write.
    Unhashed,
    /// The hashed entries are intact and the ones from this index (0-based) on have no hash:
    /// appended by a writer that does not hash, hashed on the next write.
    UnhashedTail(usize),
    /// An entry without a hash comes before one with a hash (a hash was removed).
    Mixed,
    /// The first entry (0-based) whose hash does not match.
    BrokenAt(usize),
}

impl super::Record {
    pub fn chain_state(&self) -> ChainState {
        chain_state_of(
            &self.thread,
            |e| e.hash.as_deref(),
            |prev, e| entry_hash(&self.id, prev, e),
        )
    }
}

/// The state of any hash-chained thread: `stored` reads an entry's hash, `expected` computes
/// it from the previous one (delegation threads share the chain through this).
pub fn chain_state_of<T>(
    thread: &[T],
    stored: impl Fn(&T) -> Option<&str>,
    expected: impl Fn(&str, &T) -> String,
) -> ChainState {
    let Some(last_hashed) = thread.iter().rposition(|e| stored(e).is_some()) else {
        return ChainState::Unhashed;
    };
    let first_unhashed = thread.iter().position(|e| stored(e).is_none());
    if first_unhashed.is_some_and(|u| u < last_hashed) {
        return ChainState::Mixed;
    }
    let mut prev = "";
    for (i, entry) in thread.iter().enumerate().take(last_hashed + 1) {
        let hash = stored(entry).unwrap_or("");
        if expected(prev, entry) != hash {
            return ChainState::BrokenAt(i);
        }
        prev = hash;
    }
    match first_unhashed {
        Some(u) => ChainState::UnhashedTail(u),
        None => ChainState::Intact,
    }
}

/// RFC 8785 (JCS) canonical JSON: keys sorted by UTF-16 code units, no whitespace, strings
/// escaped only where JSON requires it, numbers in ECMAScript form.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            crate::stable_sort::sort_by(&mut keys, |a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// A JSON string as JCS writes it. serde_json escapes exactly `"`, `\` and control
/// characters (short forms for \b \t \n \f \r, lowercase \u00xx otherwise) and writes
/// everything else as raw UTF-8: JCS's rules.
fn write_string_bytes(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(out, s);
}

fn write_number(n: &serde_json::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&es_number(f));
    }
}

/// ECMAScript `Number.prototype.toString` for finite doubles (what JCS prescribes), from
/// ryu's shortest round-trip digits.
fn es_number(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return String::from("0");
    }
    let mut buf = ryu::Buffer::new();
    let shortest = buf.format_finite(f.abs());
    // ryu writes `d.ddd`, `0.000ddd` or `d.ddde±x`: split into digits and a decimal exponent.
    let (mantissa, exp) = shortest.split_once('e').unwrap_or((shortest, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    // The value is 0.<digits> × 10^n.
    let n = i32::try_from(int.len()).unwrap_or(0) - i32::try_from(leading).unwrap_or(0) + exp;
    let k = i32::try_from(digits.len()).unwrap_or(1);
    let zeros = |count: i32| "0".repeat(usize::try_from(count).unwrap_or(0));
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", zeros(n - k))
    } else if 0 < n && n <= 21 {
        let (i, f) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{i}.{f}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", zeros(-n))
    } else {
        let (first, rest) = digits.split_at(1);
        let e = n - 1;
        let sign = if e < 0 { "-" } else { "+" };
        let point = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{point}e{sign}{}", e.abs())
    };
    if f < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jcs_sorts_keys_and_drops_whitespace() {
        let v = json!({"b": 1, "a": [true, null, "x"], "é": "ü\n"});
        assert_eq!(
            canonical_json(&v),
            "{\"a\":[true,null,\"x\"],\"b\":1,\"é\":\"ü\\n\"}"
        );
    }

    #[test]
    fn jcs_numbers_follow_ecmascript() {
        for (f, s) in [
            (1.0, "1"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (-2.5, "-2.5"),
            (123.456, "123.456"),
            (0.001, "0.001"),
            (1.2345678901234568e20, "123456789012345680000"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(es_number(f), s, "{f}");
        }
    }

    #[test]
    fn entry_fast_path_equals_the_generic_jcs() {
        use crate::ledger::EntryKind;
        use crate::time::Timestamp;
        for (body, from) in [
            ("plain", "engineer"),
            ("quote \" back \\ nl \n tab \t nul \u{0} del \u{7f}", "a"),
            ("é ü \u{1F600} \u{2028}", "human"),
            ("", "x"),
        ] {
            for kind in [
                EntryKind::Question,
                EntryKind::Answer,
                EntryKind::Escalation,
            ] {
                for signer in [None, Some("agent-x"), Some("é\u{1F600}")] {
                    let entry = Entry {
                        round: 12,
                        from: from.into(),
                        kind,
                        body: body.into(),
                        value: None,
                        timestamp: Timestamp::parse("2026-11-22T11:00:00+01:00").unwrap(),
                        hash: None,
                        signer: signer.map(String::from),
                        signature: Some("ed25519:AAAA".into()),
                        extra: Map::new(),
                    };
                    assert_eq!(
                        String::from_utf8(known_fields_jcs(&entry)).unwrap(),
                        canonical_json(&entry_value(&entry))
                    );
                }
            }
        }
    }

    #[test]
    fn jcs_sorts_by_utf16_units() {
        // U+FF61 sorts after U+1F600 in UTF-8 but before it in UTF-16 (surrogates 0xD83D).
        let v = json!({"\u{1F600}": 1, "\u{FF61}": 2});
        assert_eq!(canonical_json(&v), "{\"\u{1F600}\":1,\"\u{FF61}\":2}");
    }
}
