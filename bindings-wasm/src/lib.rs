//! WebAssembly binding of AgentX Clarify. Conversion only: `call` hands a pure function's JS
//! object to the core's JSON facade (the operation table names them: `functions()`), and
//! `Workspace` hands commands to the command layer over an in-memory store; every result is the envelope, handed out as JSON text that the host's
//! `JSON.parse` turns into plain objects, so results deep-equal the Node binding's. `clarify.js` turns a
//! failed envelope into a thrown `Error` with `.code`; a panic (a bug) is logged by the panic
//! hook and surfaces as an `INTERNAL` error there.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use agentx_clarify_command::{vector, FileMap, MemStore};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// The shared declarations (types/types.d.ts), so the generated `.d.ts` spells every shape.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("../../types/types.d.ts");

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
    host_text();
}

/// Hands the core the JS host's Unicode folding (`normalize("NFKC")`, `toLowerCase`) for
/// fingerprints, answer matching and the monitor's similarity: the module leaves out the
/// tables, which every browser and Node already carry (core/src/fold.rs, docs/decisions.md).
/// Called by every entry that can fold text, not only at start (a test harness may not run
/// the start function); after the first call it changes nothing.
fn host_text() {
    agentx_clarify_core::fold::set_host(agentx_clarify_core::fold::HostFold {
        nfkc: |text| String::from(js_sys::JsString::from(text).normalize("NFKC")),
        lowercase: |text| String::from(js_sys::JsString::from(text).to_lower_case()),
    });
}

/// A JS value as JSON: inputs cross as JSON text (one parser, already in the module).
/// `undefined` and `null` are `null`; a BigInt, a cycle, … is the same failure any surface
/// gives, as an envelope.
fn from_js(input: &JsValue) -> Result<Value, Value> {
    if input.is_undefined() || input.is_null() {
        return Ok(Value::Null);
    }
    js_sys::JSON::stringify(input)
        .ok()
        .and_then(|text| text.as_string())
        .ok_or_else(|| String::from("the argument is not JSON-serialisable"))
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
        .map_err(|e| {
            agentx_clarify_core::envelope::refusal("INVALID_INPUT", &format!("invalid input: {e}"))
        })
}

/// Results go out as JSON text parsed by the host's `JSON.parse`, as the Node binding's do:
/// plain objects, `null` never `undefined`, numbers never BigInt. The module already has the
/// JSON writer; a serializer building JS values field by field costs its own code (docs/
/// benchmarks.md).
fn to_js(envelope: &Value) -> JsValue {
    js_sys::JSON::parse(&envelope.to_string()).unwrap_or(JsValue::NULL)
}

/// A workspace in memory: the command layer over a `MemStore`, with the same commands and
/// `--json` shapes as the CLI and the Node store (the playground's engine).
#[wasm_bindgen]
pub struct Workspace {
    store: MemStore,
}

#[wasm_bindgen]
impl Workspace {
    /// An empty workspace (`init` creates the defaults).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Workspace {
        Workspace {
            store: MemStore::new(),
        }
    }

    /// Loads a vector-style setup (`{workflows?, config?, ledgers?, statuses?}`), replacing
    /// every file; a bad setup is a failure envelope and changes nothing.
    #[wasm_bindgen(js_name = "fromSetup", unchecked_return_type = "Envelope<{}>")]
    pub fn from_setup(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "WorkspaceSetup")] setup: JsValue,
    ) -> JsValue {
        let result = from_js(&setup).and_then(|v| {
            MemStore::from_setup(&v).map_err(|e| agentx_clarify_core::envelope::failure(&e))
        });
        to_js(&match result {
            Ok(store) => {
                self.store = store;
                serde_json::json!({"ok": true})
            }
            Err(failure) => failure,
        })
    }

    /// Runs a command (or a vector's `file` case) at `now` (epoch ms, unless `input.now`).
    #[wasm_bindgen(unchecked_return_type = "Envelope<any>")]
    pub fn run(&self, op: &str, input: JsValue, now: f64) -> JsValue {
        host_text();
        let envelope = match from_js(&input) {
            // `now` comes from a JS number: epoch ms are integers far below 2^53.
            #[allow(clippy::cast_possible_truncation)]
            Ok(v) => vector::play(&self.store, op, &v, now as i64, |p| self.store.file(p)),
            Err(failure) => failure,
        };
        to_js(&envelope)
    }

    /// Every file (relative path → text): a snapshot to keep, share or restore.
    #[wasm_bindgen(unchecked_return_type = "Record<string, string>")]
    pub fn files(&self) -> JsValue {
        let files: serde_json::Map<String, Value> = self
            .store
            .files()
            .into_iter()
            .map(|(p, b)| (p, Value::from(String::from_utf8_lossy(&b).into_owned())))
            .collect();
        to_js(&Value::Object(files))
    }

    /// Replaces every file with a snapshot taken by `files()`.
    #[wasm_bindgen(js_name = "restore")]
    pub fn restore(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] files: JsValue,
    ) -> bool {
        let Ok(Value::Object(map)) = from_js(&files) else {
            return false;
        };
        let mut restored = FileMap::new();
        for (path, text) in map {
            let Value::String(text) = text else {
                return false;
            };
            restored.insert(path, text.into_bytes());
        }
        self.store = MemStore::from_files(restored);
        true
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace::new()
    }
}

/// Any function of the core's pure facade by its name (the operation table's:
/// [`functions`]): returns the envelope of docs/api.md. `wrap.cjs` makes each name a function
/// of the package.
#[wasm_bindgen(unchecked_return_type = "Envelope<any>")]
pub fn call(
    #[wasm_bindgen(unchecked_param_type = "FunctionName")] name: &str,
    input: JsValue,
) -> JsValue {
    host_text();
    let envelope = match from_js(&input) {
        Ok(v) => agentx_clarify_core::api::call(name, &v),
        Err(failure) => failure,
    };
    to_js(&envelope)
}

/// The names [`call`] understands, in the table's order.
#[wasm_bindgen(unchecked_return_type = "FunctionName[]")]
pub fn functions() -> JsValue {
    to_js(&Value::from(
        agentx_clarify_core::call::table::FUNCTION_NAMES.to_vec(),
    ))
}

/// The operations a [`Workspace`] runs, in the table's order.
#[wasm_bindgen(unchecked_return_type = "StoreOperation[]")]
pub fn operations() -> JsValue {
    to_js(&Value::from(
        agentx_clarify_core::call::table::OPERATION_NAMES.to_vec(),
    ))
}
