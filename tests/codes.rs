//! The error codes every surface lists are the core's: the TypeScript `ErrorCode` union
//! (types/types.d.ts, shipped by both JS packages) names exactly `ErrorCode::ALL`, and its
//! `ErrorClass` union exactly `ErrorClass::ALL`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use agentx_clarify_core::error::{ErrorClass, ErrorCode};

/// The quoted members of `export type <name> =` (up to the next blank line).
fn union(name: &str) -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../types/types.d.ts");
    let text = std::fs::read_to_string(path).unwrap();
    let start = text
        .find(&format!("export type {name} ="))
        .unwrap_or_else(|| panic!("types.d.ts declares {name}"));
    let union = &text[start..];
    let union = &union[..union.find("\n\n").unwrap_or(union.len())];
    let union = &union[..union.find("\n/").unwrap_or(union.len())];
    union
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn typescript_error_codes_are_the_cores() {
    let core: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(
        union("ErrorCode"),
        core,
        "types/types.d.ts ErrorCode vs core ErrorCode::ALL"
    );
}

#[test]
fn typescript_error_classes_are_the_cores() {
    let core: BTreeSet<String> = ErrorClass::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(
        union("ErrorClass"),
        core,
        "types/types.d.ts ErrorClass vs core ErrorClass::ALL"
    );
}
