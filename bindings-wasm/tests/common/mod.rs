//! Test bodies shared by the Node and the browser suites: they call the exported functions
//! exactly as JavaScript does (JS values in, JS values out).

use agentx_clarify_wasm as w;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;

const T0: i64 = 1_795_341_600_000;

fn js(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL)
}

fn back(v: JsValue) -> Value {
    serde_wasm_bindgen::from_value(v).unwrap_or(Value::Null)
}

pub fn ask_answer_resolve() {
    let asked = back(w::request(js(
        &json!({"issueNumber": 42, "from": "engineer", "to": "architect",
        "topic": "Cache layer", "question": "Redis or in-process?", "now": T0}),
    )));
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
    let answered = back(w::answer(js(
        &json!({"ledger": asked["ledger"], "statuses": asked["statuses"],
        "id": "CLR-42-001", "from": "architect", "body": "Redis.", "now": T0 + 60_000}),
    )));
    assert_eq!(answered["clarification"]["status"], "answered");
    let resolved = back(w::resolve(js(
        &json!({"ledger": answered["ledger"], "id": "CLR-42-001", "now": T0 + 120_000}),
    )));
    assert_eq!(resolved["clarification"]["status"], "resolved");
    let verified = back(w::verify(js(&json!({"ledgers": [resolved["ledger"]]}))));
    assert_eq!(
        verified,
        json!({"ok": true, "problems": [], "warnings": []})
    );
}

pub fn refusals_are_envelopes_with_codes() {
    let r = back(w::request(js(
        &json!({"issueNumber": 42, "from": "engineer", "to": "reviewer",
        "topic": "t", "question": "q", "now": T0}),
    )));
    assert_eq!(r["ok"], false);
    assert_eq!(r["error"]["code"], "SCOPE_VIOLATION");
    let r = back(w::request(JsValue::from_str("not an object")));
    assert_eq!(r["error"]["code"], "INVALID_INPUT");
    let r = back(w::version(JsValue::UNDEFINED));
    assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
}

pub fn monitor_and_render() {
    let asked = back(w::request(js(
        &json!({"issueNumber": 7, "from": "engineer", "to": "architect",
        "topic": "Export", "question": "CSV?", "now": T0}),
    )));
    let m = back(w::monitor(js(
        &json!({"ledgers": [asked["ledger"]], "now": T0 + 61 * 60_000}),
    )));
    assert_eq!(m["report"]["stale"], json!(["CLR-7-001"]));
    assert_eq!(m["report"]["retried"], json!(["CLR-7-001"]));
    let md = back(w::render_markdown(js(
        &json!({"view": "report", "report": m["report"]}),
    )));
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
