//! The published ledger format (docs/protocol.md §20): JSON Schemas (draft 2020-12) under `schema/`,
//! checked with a real validator (the `jsonschema` crate).
//!
//! - [`LEDGER_SCHEMA_PATH`], "as written": every ledger AgentX Clarify writes. The vector
//!   runners validate every ledger a scenario produces against it ([`validate_ledger`]).
//! - [`ACCEPTED_LEDGER_SCHEMA_PATH`], "as read": also the shapes of the reference
//!   implementation and of AgentX's writers ([`validate_accepted_ledger`]).
//!
//! The paths are absolute, for the JS tests too (`schemaPaths` in a runner's environment).

use std::sync::OnceLock;

use serde_json::Value;

/// `schema/clarification-ledger.schema.json`: the ledger as AgentX Clarify writes it.
pub const LEDGER_SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../schema/clarification-ledger.schema.json"
);

/// `schema/clarification-ledger.accepted.schema.json`: every ledger AgentX Clarify reads.
pub const ACCEPTED_LEDGER_SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../schema/clarification-ledger.accepted.schema.json"
);

/// Validates a ledger against the "as written" schema; every violation, one line each
/// (`<instance path>: <what is wrong>`).
pub fn validate_ledger(v: &Value) -> Result<(), Vec<String>> {
    static WRITTEN: OnceLock<jsonschema::Validator> = OnceLock::new();
    validate(WRITTEN.get_or_init(|| compile(LEDGER_SCHEMA_PATH)), v)
}

/// Validates a ledger against the "as read" schema (legacy and AgentX shapes included).
pub fn validate_accepted_ledger(v: &Value) -> Result<(), Vec<String>> {
    static ACCEPTED: OnceLock<jsonschema::Validator> = OnceLock::new();
    validate(
        ACCEPTED.get_or_init(|| compile(ACCEPTED_LEDGER_SCHEMA_PATH)),
        v,
    )
}

/// Reads a schema file and compiles it as draft 2020-12, after checking it against the
/// draft's meta-schema. A broken schema is a bug in the repository: it panics, naming it.
pub fn compile(path: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let schema: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: invalid JSON: {e}"));
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("{path}: not a valid JSON Schema: {e}");
    }
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn validate(validator: &jsonschema::Validator, v: &Value) -> Result<(), Vec<String>> {
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { String::from("/") } else { at };
            format!("{at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn both_schemas_compile_and_reject_what_they_should() {
        let good = json!({"issueNumber": 1, "clarifications": []});
        assert_eq!(validate_ledger(&good), Ok(()));
        assert_eq!(validate_accepted_ledger(&good), Ok(()));
        let bad = json!({"issueNumber": -1, "clarifications": [{"id": 3}]});
        let errors = validate_ledger(&bad).unwrap_err();
        assert!(
            errors.iter().any(|e| e.starts_with("/issueNumber: ")),
            "{errors:?}"
        );
        assert!(validate_accepted_ledger(&bad).is_err());
    }
}
