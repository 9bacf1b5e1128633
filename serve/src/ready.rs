//! `/readyz` (docs/protocol.md §23 "Health and readiness"): whether this replica can serve
//! requests now — the state store answers a read, its schema is this build's, and a lease can
//! be taken — so a load balancer sends traffic only to replicas that can act on it. `/healthz`
//! says only that the process answers (no store call), so a database outage never makes a
//! supervisor restart every replica at once.
//!
//! Neither needs a credential (a load balancer's probe has none); the body names the failing
//! check and its error code, never the store's message (it names the database's host), which
//! goes to the log instead.

use std::sync::Arc;

use agentx_clarify_command::{LeaseTake, State as _};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store_any::AnyState;
use agentx_clarify_workspace::WorkspaceStore;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::hub::App;

/// The record id the probe leases: sequence 000 is never given to a record (they start at
/// 001), so the probe never holds a real record's lease.
const PROBE: &str = "CLR-0-000";
/// How long the probe's lease lives if this process dies between taking and releasing it.
const PROBE_TTL_MS: u64 = 5_000;

/// The checks in order; each runs only when those before it passed.
const CHECKS: [&str; 3] = ["store", "schema", "lease"];

pub async fn readyz(State(app): State<Arc<App>>) -> Response {
    let result = app.with_store(|store| Ok(run_checks(store))).await;
    let (failing, error) = match result {
        Ok(None) => (None, None),
        Ok(Some((name, e))) => (Some(name), Some(e)),
        // The store could not be opened, or gave no sign of progress within its bound.
        Err(e) => (Some("store"), Some(e)),
    };
    let mut checks = Map::new();
    let mut failed = false;
    for name in CHECKS {
        let state = if failed {
            "not run"
        } else if failing == Some(name) {
            failed = true;
            "failing"
        } else {
            "ok"
        };
        checks.insert(name.into(), Value::from(state));
    }
    match (failing, error) {
        (Some(name), Some(e)) => {
            crate::log::line(&format!("not ready: the {name} check failed: {e}"));
            let body = json!({
                "ready": false,
                "failing": name,
                "code": e.code(),
                "checks": checks,
            });
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response()
        }
        _ => axum::Json(json!({"ready": true, "checks": checks})).into_response(),
    }
}

/// The first failing check and its error, or `None` when all pass.
fn run_checks(store: &WorkspaceStore) -> Option<(&'static str, ClarifyError)> {
    if let Err(e) = store.state.read_statuses() {
        return Some(("store", e));
    }
    // The file store has no schema to migrate: its documents carry their own versions.
    if let AnyState::Pg(pg) = &store.state {
        if let Err(e) = pg.check_schema() {
            return Some(("schema", e));
        }
    }
    match store.state.take_lease(PROBE, PROBE_TTL_MS) {
        Ok(LeaseTake::Taken(lease)) => store.state.release_lease(lease),
        // Another replica's probe holds it this instant: the lease store answered.
        Ok(LeaseTake::Held { .. }) => {}
        Err(e) => return Some(("lease", e)),
    }
    None
}
