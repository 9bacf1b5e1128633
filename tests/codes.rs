//! The error codes every surface lists are the core's: the TypeScript `ErrorCode` union
//! (types/types.d.ts, shipped by both JS packages) names exactly `ErrorCode::ALL`.

use std::collections::BTreeSet;

use agentx_clarify_core::error::ErrorCode;

#[test]
fn typescript_error_codes_are_the_cores() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../types/types.d.ts");
    let text = std::fs::read_to_string(path).unwrap();
    let start = text
        .find("export type ErrorCode =")
        .expect("types.d.ts declares ErrorCode");
    let union = &text[start..];
    let union = &union[..union.find("\n\n").unwrap_or(union.len())];
    let ts: BTreeSet<&str> = union.split('\'').skip(1).step_by(2).collect();
    let core: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        ts, core,
        "types/types.d.ts ErrorCode vs core ErrorCode::ALL"
    );
}
