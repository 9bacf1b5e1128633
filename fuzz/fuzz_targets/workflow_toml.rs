//! Workflow files (TOML text) → `Workflow::parse`. Must never panic.
#![no_main]

use agentx_clarify_core::Workflow;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Workflow::parse("w.toml", text);
    }
});
