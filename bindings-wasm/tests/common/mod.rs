//! Test bodies shared by the Node and the browser suites: they call the exported functions
//! exactly as JavaScript does (JS values in, JS values out).

use agentx_clarify_wasm as w;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;

/// A pure function of the package by its table name, as `wrap.cjs` calls it.
fn call(name: &str, input: JsValue) -> JsValue {
    w::call(name, input)
}

const T0: i64 = 1_795_341_600_000;

fn js(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL)
}

fn back(v: JsValue) -> Value {
    js_sys::JSON::stringify(&v)
        .ok()
        .and_then(|text| text.as_string())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

pub fn ask_answer_resolve() {
    let asked = back(call(
        "request",
        js(
            &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
        "topic": "Cache layer", "question": "Redis or in-process?", "now": T0}),
        ),
    ));
    assert_eq!(asked["ok"], true, "{asked}");
    assert_eq!(asked["clarification"]["id"], "CLR-42-001");
    assert_eq!(
        asked["clarification"]["staleAfter"],
        "2026-11-22T11:00:00.000Z"
    );
    assert_eq!(
        asked["statuses"]["engineer"]["status"],
        "blocked-clarification"
    );
    let answered = back(call(
        "answer",
        js(
            &json!({"ledger": asked["ledger"], "statuses": asked["statuses"],
        "id": "CLR-42-001", "from": "architect", "body": "Redis.", "now": T0 + 60_000}),
        ),
    ));
    assert_eq!(answered["clarification"]["status"], "answered");
    let resolved = back(call(
        "resolve",
        js(&json!({"ledger": answered["ledger"], "id": "CLR-42-001", "now": T0 + 120_000})),
    ));
    assert_eq!(resolved["clarification"]["status"], "resolved");
    let verified = back(call(
        "verify",
        js(&json!({"ledgers": [resolved["ledger"]]})),
    ));
    assert_eq!(
        verified,
        json!({"ok": true, "problems": [], "warnings": []})
    );
}

pub fn refusals_are_envelopes_with_codes() {
    let r = back(call(
        "request",
        js(
            &json!({"issueNumber": 42, "from": "engineer", "to": "reviewer",
        "topic": "t", "question": "q", "now": T0}),
        ),
    ));
    assert_eq!(r["ok"], false);
    assert_eq!(r["error"]["code"], "SCOPE_VIOLATION");
    let r = back(call("request", JsValue::from_str("not an object")));
    assert_eq!(r["error"]["code"], "INVALID_INPUT");
    let r = back(call("version", JsValue::UNDEFINED));
    assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
}

pub fn monitor_and_render() {
    let asked = back(call(
        "request",
        js(
            &json!({"issueNumber": 7, "from": "engineer", "to": "architect",
        "topic": "Export", "question": "CSV?", "now": T0}),
        ),
    ));
    let m = back(call(
        "monitor",
        js(&json!({"ledgers": [asked["ledger"]], "now": T0 + 61 * 60_000})),
    ));
    assert_eq!(m["report"]["stale"], json!(["CLR-7-001"]));
    assert_eq!(m["report"]["retried"], json!(["CLR-7-001"]));
    let md = back(call(
        "renderMarkdown",
        js(&json!({"view": "report", "report": m["report"]})),
    ));
    assert!(
        md["text"]
            .as_str()
            .unwrap_or("")
            .contains("**Stale:** CLR-7-001"),
        "{md}"
    );
    // Results are plain JSON-compatible objects (null, not undefined; numbers, not BigInt).
    assert_eq!(
        m["ledgers"][0]["clarifications"][0]["resolvedAt"],
        Value::Null
    );
    assert!(
        m["events"][0]["timestamp"].is_i64()
            || m["events"][0]["timestamp"].is_u64()
            || m["events"][0]["timestamp"].is_f64()
    );
}

/// The ledger the Rust core signed (tests/fixtures/ed25519.json) verifies in wasm with its
/// public keys, and its audit carries the fixture's signatures byte for byte; without keys
/// the signers are unknown, and an edited body is marked on its record.
pub fn signed_ledger_verifies_and_audits() {
    let fixture: Value = serde_json::from_str(include_str!("../../../tests/fixtures/ed25519.json"))
        .unwrap_or_default();
    let keys: serde_json::Map<String, Value> = fixture["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            (
                k["agent"].as_str().unwrap_or("").to_owned(),
                k["public"].clone(),
            )
        })
        .collect();
    assert_eq!(keys.len(), 4);
    let ledger = &fixture["ledger"];
    let v = back(call(
        "verify",
        js(&json!({"ledgers": [ledger], "publicKeys": keys})),
    ));
    assert_eq!(v, json!({"ok": true, "problems": [], "warnings": []}));
    let unkeyed = back(call("verify", js(&json!({"ledgers": [ledger]}))));
    assert_eq!(unkeyed["problems"][0]["code"], "SIGNATURE_INVALID");

    let mut signatures = Vec::new();
    for record in ledger["clarifications"].as_array().into_iter().flatten() {
        let a = back(call(
            "audit",
            js(&json!({"ledger": ledger, "id": record["id"], "publicKeys": keys})),
        ));
        assert_eq!(a["verified"], true, "{a}");
        let round = &a["chain"][0];
        signatures.push(round["ask_signature"].clone());
        signatures.push(round["answer_signature"].clone());
        signatures.push(a["chain_signature"].clone());
    }
    // Per record: its question's, its answer's (null: CLR-42-002 was escalated, not
    // answered) and its last entry's signature.
    let entries = fixture["entries"].as_array().cloned().unwrap_or_default();
    let mut expected = Vec::new();
    for id in ["CLR-42-001", "CLR-42-002"] {
        let of = |kind: &str| {
            entries
                .iter()
                .find(|e| e["clarificationId"] == id && e["type"] == kind)
                .map_or(Value::Null, |e| e["signature"].clone())
        };
        let last = entries
            .iter()
            .rfind(|e| e["clarificationId"] == id)
            .map_or(Value::Null, |e| e["signature"].clone());
        expected.extend([of("question"), of("answer"), last]);
    }
    assert_eq!(signatures, expected);

    let mut edited = ledger.clone();
    edited["clarifications"][0]["thread"][1]["body"] = json!("uswds-only");
    let a = back(call(
        "audit",
        js(&json!({"ledger": edited, "publicKeys": keys})),
    ));
    assert_eq!(a["verified"], false);
    assert_eq!(a["problems"][0]["id"], "CLR-42-001");
    assert_eq!(a["problems"][0]["code"], "LEDGER_INCONSISTENT");
}

/// The module has no NFKC tables: the host's `normalize("NFKC")` folds a full-width question
/// to the fingerprint of its ASCII spelling (tests/vectors/core/never_asked_twice.json's).
pub fn full_width_question_has_the_ascii_fingerprint() {
    let asked = back(call(
        "request",
        js(
            &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
        "topic": "Cache layer", "question": "Ｒｅｄｉｓ or in-process？",
        "field": "storage.cache", "now": T0}),
        ),
    ));
    assert_eq!(asked["ok"], true, "{asked}");
    assert_eq!(
        asked["clarification"]["fingerprint"],
        "b99e0eebd90e082d468ea3e9a72bdb0902be556d94a6a1c300390514c0d7b1b1"
    );
}

/// Every name of the operation table is callable: each function through `call`, each
/// operation through a `Workspace` (refused for its input, or run; never unknown), and a
/// misspelt field is refused with the nearest known one.
pub fn every_name_of_the_table_is_callable() {
    let names = |v: JsValue| -> Vec<String> { serde_json::from_value(back(v)).unwrap() };
    let functions = names(w::functions());
    assert!(functions.contains(&"request".to_owned()), "{functions:?}");
    for name in &functions {
        let out = back(call(name, js(&json!({}))));
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("unknown operation"), "{name}: {out}");
    }
    let operations = names(w::operations());
    assert!(operations.contains(&"reopen".to_owned()), "{operations:?}");
    let ws = w::Workspace::new();
    back(ws.run("init", js(&json!({})), T0 as f64));
    for op in &operations {
        let out = back(ws.run(op, js(&json!({})), T0 as f64));
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("unknown operation"), "{op}: {out}");
    }
    let out = back(call("nope", js(&json!({}))));
    assert_eq!(out["error"]["code"], "INVALID_INPUT", "{out}");
    let out = back(call(
        "request",
        js(
            &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
            "topic": "t", "question": "q", "now": T0, "blockng": false}),
        ),
    ));
    assert_eq!(
        out["error"]["message"],
        "invalid input: unknown field `blockng`; did you mean `blocking`?"
    );
}
