//! Signal blocks and JSON in mixed agent output: `signals::parse`, the typed views, the ingest
//! decisions and `signals::extract` must never panic on any bytes (read as the CLI reads a
//! file, lossily), and what they report must point inside the input.
#![no_main]

use agentx_clarify_core::config::Config;
use agentx_clarify_core::delegation::Manifests;
use agentx_clarify_core::signals::{self, Context, Existing};
use agentx_clarify_core::workflow::Workflows;
use agentx_clarify_core::signing::Signers;
use libfuzzer_sys::fuzz_target;

const NOW: i64 = 1_795_341_600_000;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.split('\n').count();
    let parsed = signals::parse(&text);
    for p in &parsed.problems {
        assert!((1..=lines).contains(&p.line), "problem outside the input: {p:?}");
    }
    for b in &parsed.blocks {
        assert!(b.start_line >= 1 && b.start_line <= lines);
        if let Some(end) = b.end_line {
            assert!(end > b.start_line && end <= lines, "{b:?}");
        } else {
            assert!(!b.is_well_formed());
        }
        let opening = b.text.split('\n').next().unwrap_or("");
        assert_eq!(opening.trim(), format!("[{}]", b.name));
        for p in &b.problems {
            assert!((1..=lines).contains(&p.line), "problem outside the input: {p:?}");
        }
        let _ = b.signal();
    }
    let ctx = Context {
        issue: 7,
        agent: String::from("engineer"),
        parent: data.first().filter(|b| *b & 1 == 1).map(|_| String::from("architect")),
    };
    if let Ok(out) = signals::ingest(
        &parsed,
        &ctx,
        &Existing::default(),
        &Config::default(),
        &Workflows::defaults(),
        &Manifests::new(),
        NOW,
        &Signers::default(),
    ) {
        assert_eq!(out.blocks.len(), parsed.blocks.len());
        if let Some(ledger) = &out.ledger {
            for r in &ledger.clarifications {
                let _ = signals::resume_record(7, r).text();
            }
        }
        if let Some(dl) = &out.delegations {
            for d in &dl.delegations {
                let _ = signals::resume_delegation(7, d).text();
            }
        }
    }
    if let Some(e) = signals::extract(&text) {
        assert!((1..=lines).contains(&e.line), "{e:?}");
    }
});
