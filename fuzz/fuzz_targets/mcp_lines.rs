//! The MCP server's line reader (docs/protocol.md §31) on any bytes, with a small line cap so huge lines
//! are common: every line that is JSON reaches rmcp whole and in order, every other non-blank
//! line (and every line over the cap) gets exactly one JSON-RPC -32700 reply of bounded size
//! — a reply or a clean skip, never silence — and nothing panics.
#![no_main]

use agentx_clarify_mcp::lines::{check_filtered, filter_all};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the cap (64..=4159 bytes), the rest is the input.
    let (max, input) = match data.split_first() {
        Some((b, rest)) => (64 + usize::from(*b) * 16, rest),
        None => (64, data),
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().build() else {
        return;
    };
    let (passed, replies) = runtime.block_on(filter_all(input, max));
    check_filtered(input, max, &passed, &replies);
});
