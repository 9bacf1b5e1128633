//! WebAssembly binding of AgentX Clarify. Conversion only: each export hands its JS object to
//! the core's JSON facade and returns the envelope, converted with serde-wasm-bindgen's
//! JSON-compatible serializer so results deep-equal the Node binding's. `clarify.js` turns a
//! failed envelope into a thrown `Error` with `.code`; a panic (a bug) is logged by the panic
//! hook and surfaces as an `INTERNAL` error there.

use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The shared declarations (types/types.d.ts), so the generated `.d.ts` spells every shape.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("../../types/types.d.ts");

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

fn call(name: &str, input: JsValue) -> JsValue {
    // Inputs cross as JSON text (one parser, already in the module); results go out through
    // serde-wasm-bindgen's JSON-compatible serializer, so they deep-equal the Node binding's.
    let envelope = if input.is_undefined() || input.is_null() {
        agentx_clarify_core::api::call(name, &serde_json::Value::Null)
    } else {
        let parsed = js_sys::JSON::stringify(&input)
            .ok()
            .and_then(|text| text.as_string())
            .ok_or_else(|| String::from("the argument is not JSON-serialisable"))
            .and_then(|text| {
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(v) => agentx_clarify_core::api::call(name, &v),
            // A BigInt, a cycle, …: the same failure any surface gives.
            Err(e) => serde_json::json!({"ok": false, "error": {
                "code": "INVALID_INPUT",
                "message": format!("invalid input: {e}"),
            }}),
        }
    };
    envelope
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

macro_rules! exports {
    ($($rust:ident => $js:literal, $arg:literal, $ret:literal;)*) => {$(
        #[doc = concat!("Core `", $js, "`: returns the envelope of docs/api.md.")]
        #[wasm_bindgen(js_name = $js, unchecked_return_type = $ret)]
        pub fn $rust(#[wasm_bindgen(unchecked_param_type = $arg)] input: JsValue) -> JsValue {
            call($js, input)
        }
    )*};
}

exports! {
    request => "request", "RequestInput", "Envelope<MutationResult>";
    answer => "answer", "AnswerInput", "Envelope<MutationResult>";
    follow_up => "followUp", "FollowUpInput", "Envelope<MutationResult>";
    resolve => "resolve", "CloseInput", "Envelope<MutationResult>";
    escalate => "escalate", "CloseInput", "Envelope<MutationResult>";
    abandon => "abandon", "CloseInput", "Envelope<MutationResult>";
    monitor => "monitor", "MonitorInput", "Envelope<MonitorResult>";
    verify => "verify", "WorkspaceInput", "Envelope<VerifyResult>";
    stats => "stats", "StatsInput", "Envelope<StatsResult>";
    list => "list", "ListInput", "Envelope<ListResult>";
    show => "show", "ShowInput", "Envelope<ShowResult>";
    ready => "ready", "ReadyInput", "Envelope<ReadyResult>";
    set_status => "setStatus", "SetStatusInput", "Envelope<SetStatusResult>";
    parse_workflow => "parseWorkflow", "ParseInput", "Envelope<{ workflow: Workflow }>";
    parse_config => "parseConfig", "ParseInput", "Envelope<{ config: Config }>";
    default_workflows => "defaultWorkflows", "{} | undefined", "Envelope<{ workflows: Record<string, string>, config: string }>";
    render_markdown => "renderMarkdown", "RenderInput", "Envelope<{ text: string }>";
    render_text => "renderText", "RenderInput & { color?: boolean }", "Envelope<{ text: string }>";
    transitions => "transitions", "{} | undefined", "Envelope<{ transitions: Transitions }>";
    version => "version", "{} | undefined", "Envelope<{ version: string }>";
}

/// Test-only: a deliberate panic, to prove it surfaces as an `INTERNAL` error.
#[wasm_bindgen(js_name = "panicForTest")]
pub fn panic_for_test() {
    panic!("deliberate test panic");
}
