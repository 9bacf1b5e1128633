//! Plays every conformance vector through the command layer over a `MemStore` and names every
//! failing case (`AGENTX_VECTOR=<part of a path>` plays only the files whose path contains
//! it). Actual results are written to `target/vector-results/<file>` so the other runners
//! (the binary, Node, wasm, the playground) can check they get deep-equal results. Every
//! ledger the corpus produces is checked against the published schema.

use std::path::PathBuf;

use agentx_clarify_command::{vector, MemStore};
use agentx_clarify_tests::{load_all, now_ms, subset_match};
use serde_json::Value;

fn results_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/vector-results")
}

#[test]
fn conformance_vectors() {
    let vectors = load_all();
    assert!(!vectors.is_empty(), "no vectors found");
    let mut failures = Vec::new();
    let mut cases = 0;
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
            let actual = vector::play(&store, op, &args, now_ms(&case["now"]), |p| store.file(p));
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
        "{} vector files, {cases} cases, {} failures",
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
