//! The same tests in headless Chromium (Debian's chromium + chromium-driver):
//! `… cargo test -p agentx-clarify-wasm --target wasm32-unknown-unknown --test browser`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_arch = "wasm32")]

mod common;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn ask_answer_resolve() {
    common::ask_answer_resolve();
}

#[wasm_bindgen_test]
fn refusals_are_envelopes_with_codes() {
    common::refusals_are_envelopes_with_codes();
}

#[wasm_bindgen_test]
fn monitor_and_render() {
    common::monitor_and_render();
}

#[wasm_bindgen_test]
fn signed_ledger_verifies_and_audits() {
    common::signed_ledger_verifies_and_audits();
}

#[wasm_bindgen_test]
fn full_width_question_has_the_ascii_fingerprint() {
    common::full_width_question_has_the_ascii_fingerprint();
}

#[wasm_bindgen_test]
fn every_name_of_the_table_is_callable() {
    common::every_name_of_the_table_is_callable();
}
