//! Plays the function vectors (`tests/function-vectors/`, format in its README) through the
//! core's JSON API, the pure functions Node and wasm export one for one, and writes every
//! result to `target/function-vector-results/<file>` so the JS runner
//! (`tests/js/function-vectors.test.mjs`) can check each binding gets deep-equal results.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use agentx_clarify_core::api::call;
use agentx_clarify_tests::{resolve_lets, subset_match};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("function-vectors")
}

#[test]
fn function_vectors() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no function vectors");
    let mut failures = Vec::new();
    let mut cases = 0;
    for path in &names {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let lets = v.get("let").cloned().unwrap_or(Value::Null);
        let mut results = Vec::new();
        for case in v["cases"].as_array().expect("`cases` must be an array") {
            cases += 1;
            let name = case["name"].as_str().unwrap_or("?");
            let function = case["function"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}/{name}: `function` missing"));
            let input = resolve_lets(&case["input"], &lets)
                .unwrap_or_else(|why| panic!("{file}/{name}: {why}"));
            let actual = call(function, &input);
            if let Err(why) = subset_match(&case["expect"], &actual) {
                failures.push(format!("{file} / {name}: {why}"));
            }
            results.push(actual);
        }
        let out = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/function-vector-results")
            .join(&file);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(&out, serde_json::to_string_pretty(&results).unwrap()).unwrap();
    }
    println!("{} function vector files, {cases} cases", names.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
