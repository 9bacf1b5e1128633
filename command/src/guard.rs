//! A panic is a bug; it must never take down a host (Node, an MCP server) that serves many
//! callers. Bindings run each command through [`guarded`].

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value;

/// Runs `f`, turning a panic into an `INTERNAL` failure envelope naming it.
pub fn guarded(f: impl FnOnce() -> Value) -> Value {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("unknown panic"));
        agentx_clarify_core::envelope::refusal("INTERNAL", &format!("internal error: {what}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_envelope() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let v = guarded(|| panic!("deliberate test panic"));
        let again = guarded(|| serde_json::json!({"ok": true}));
        std::panic::set_hook(hook);
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"]["code"], "INTERNAL");
        assert_eq!(
            v["error"]["message"],
            "internal error: deliberate test panic"
        );
        assert_eq!(again["ok"], true, "the host goes on after a panic");
    }
}
