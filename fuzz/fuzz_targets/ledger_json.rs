//! Ledger bytes (JSON) → parse; when it parses: seal, write, re-parse (round-trip identity),
//! verify, monitor. None of it may panic.
#![no_main]

use agentx_clarify_core::{monitor, verify, Config, Ledger};
use libfuzzer_sys::fuzz_target;

/// 2026-11-22T10:00:00.000Z, the `now` of the conformance vectors.
const NOW_MS: i64 = 1_795_341_600_000;

fuzz_target!(|data: &[u8]| {
    let Ok(mut ledger) = Ledger::parse("issue-1.json", data, Some(1)) else {
        return;
    };
    ledger.seal();
    let text = ledger.to_pretty_json();
    let reparsed = match Ledger::parse("issue-1.json", text.as_bytes(), Some(1)) {
        Ok(l) => l,
        Err(e) => panic!("sealed ledger does not re-parse: {e}\n--- written ---\n{text}"),
    };
    assert_eq!(
        reparsed, ledger,
        "round trip changed the ledger\n--- written ---\n{text}"
    );
    let _ = verify::verify_ledger("issue-1.json", &ledger);
    let _ = monitor::monitor_ledger(ledger, &Default::default(), &Config::default(), NOW_MS);
});
