//! The JSON facade: input = `<name> NUL <json text>`. `api::call` must never panic and must
//! always return an envelope with a boolean `ok`.
//!
//! The name part selects the function:
//! - an exact name from `api::FUNCTIONS` is used as is (readable seeds: `request\0{…}`);
//! - an empty name is passed as `""` (the unknown-function path);
//! - anything else picks `FUNCTIONS[first byte % FUNCTIONS.len()]`, so mutations of the name
//!   reach every function instead of mostly unknown names.
#![no_main]

use agentx_clarify_core::api::{call, FUNCTIONS};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn pick(name: &[u8]) -> &str {
    if let Ok(text) = std::str::from_utf8(name) {
        if let Some(known) = FUNCTIONS.iter().find(|f| **f == text) {
            return known;
        }
    }
    match name.first() {
        None => "",
        Some(b) => FUNCTIONS[usize::from(*b) % FUNCTIONS.len()],
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(nul) = data.iter().position(|b| *b == 0) else {
        return;
    };
    let (name, json) = (&data[..nul], &data[nul + 1..]);
    let Ok(input) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let name = pick(name);
    let out = call(name, &input);
    assert!(
        matches!(out.get("ok"), Some(Value::Bool(_))),
        "call({name:?}) returned no boolean `ok`: {out}"
    );
});
