//! Plays every conformance vector through the command layer over a `MemStore` and names every
//! failing case (`AGENTX_VECTOR=<part of a path>` plays only the files whose path contains
//! it). Actual results are written to `target/vector-results/<file>` so the other runners
//! (the binary, Node, wasm, the playground) can check they get deep-equal results. Every
//! ledger the corpus produces is checked against the published schema, and every refusal
//! against the README's promise: a one-line message, and nothing written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use agentx_clarify_command::{vector, FileMap, MemStore};
use agentx_clarify_core::verify::check_file;
use agentx_clarify_tests::schema::validate_ledger;
use agentx_clarify_tests::{load_all, now_ms, subset_match};
use serde_json::Value;

/// Every ledger the case wrote (bytes that differ from before it) must match the published
/// schema of what we write — unless `verify` finds a problem in it: a ledger that carries
/// evidence of tampering from its setup is kept as it is, not normalised into shape.
fn check_written(
    file: &str,
    name: &str,
    before: &FileMap,
    after: &FileMap,
    failures: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    for (path, bytes) in after {
        let Some(ledger_name) =
            path.strip_prefix(agentx_clarify_command::paths::CLARIFICATIONS_DIR)
        else {
            continue;
        };
        if before.get(path) == Some(bytes) || !check_file(ledger_name, bytes).problems.is_empty() {
            continue;
        }
        checked += 1;
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{file} / {name}: {ledger_name} written as invalid JSON: {e}"
                ));
                continue;
            }
        };
        if let Err(why) = validate_ledger(&value) {
            failures.push(format!(
                "{file} / {name}: {ledger_name} breaks the ledger schema: {}",
                why.join("; ")
            ));
        }
    }
    checked
}

/// A failed case names its failure in one line and changes nothing — except
/// `MAX_ROUNDS_EXCEEDED`, which writes the escalation it reports (docs/protocol.md §4).
fn check_refusal(
    file: &str,
    name: &str,
    actual: &Value,
    before: &FileMap,
    after: &FileMap,
    failures: &mut Vec<String>,
) {
    if actual.get("ok") != Some(&Value::Bool(false)) {
        return;
    }
    let message = actual
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    if message.is_empty() || message.contains('\n') {
        failures.push(format!(
            "{file} / {name}: the error message must be one non-empty line: {message:?}"
        ));
    }
    let code = actual.pointer("/error/code").and_then(Value::as_str);
    if code != Some("MAX_ROUNDS_EXCEEDED") && before != after {
        let changed: Vec<&String> = after
            .keys()
            .chain(before.keys())
            .filter(|p| before.get(p) != after.get(p))
            .collect();
        failures.push(format!(
            "{file} / {name}: a refused case changed files: {changed:?}"
        ));
    }
}

fn results_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/vector-results")
}

#[test]
fn conformance_vectors() {
    let vectors = load_all();
    assert!(!vectors.is_empty(), "no vectors found");
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut validated = 0;
    for (file, v) in &vectors {
        let setup = v.get("setup").cloned().unwrap_or(Value::Null);
        let store = MemStore::from_setup(&setup).unwrap_or_else(|e| panic!("{file}: setup: {e}"));
        let mut results = Vec::new();
        for case in v["cases"]
            .as_array()
            .unwrap_or_else(|| panic!("{file}: `cases` must be an array"))
        {
            cases += 1;
            let name = case["name"].as_str().unwrap_or("?");
            let op = case["op"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}/{name}: `op` missing"));
            let args = case.get("args").cloned().unwrap_or(Value::Null);
            let before = store.files();
            let actual = vector::play(&store, op, &args, now_ms(&case["now"]), |p| store.file(p));
            let after = store.files();
            validated += check_written(file, name, &before, &after, &mut failures);
            check_refusal(file, name, &actual, &before, &after, &mut failures);
            if let Err(why) = subset_match(&case["expect"], &actual) {
                failures.push(format!("{file} / {name}: {why}"));
            }
            results.push(actual);
        }
        let out = results_dir().join(file);
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&out, serde_json::to_string_pretty(&results).unwrap()).unwrap();
    }
    println!(
        "{} vector files, {cases} cases, {validated} written ledgers checked against the schema, {} failures",
        vectors.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Vectors that play a fixture of `tests/fixtures/signals/` (the case's `fixture`, beside its
/// `args`: it names where the text came from and is no input of the operation) hold it
/// verbatim, read as the CLI reads agent output (lossily): a fixture edited without its
/// vector, or the other way round, fails here.
#[test]
fn signal_vectors_hold_their_fixtures_verbatim() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/signals");
    let mut checked = 0;
    for (file, v) in &load_all() {
        for case in v["cases"].as_array().into_iter().flatten() {
            let Some(fixture) = case["fixture"].as_str() else {
                continue;
            };
            let bytes = std::fs::read(dir.join(fixture))
                .unwrap_or_else(|e| panic!("{file}: fixture {fixture}: {e}"));
            assert_eq!(
                case["args"]["text"].as_str(),
                Some(String::from_utf8_lossy(&bytes).as_ref()),
                "{file}: the text of {fixture} differs from the fixture"
            );
            checked += 1;
        }
    }
    let filtered = std::env::var_os("AGENTX_VECTOR").is_some_and(|v| !v.is_empty());
    assert!(
        filtered || checked >= 16,
        "only {checked} fixture cases found"
    );
}
