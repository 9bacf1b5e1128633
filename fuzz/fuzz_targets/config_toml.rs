//! `config.toml` text → `Config::parse`. Must never panic.
#![no_main]

use agentx_clarify_core::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Config::parse("config.toml", text);
    }
});
