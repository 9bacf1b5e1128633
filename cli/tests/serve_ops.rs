//! `agentx serve`'s operations face on the file store (docs/protocol.md §23 "Health and
//! readiness", "Metrics", "Logs"): `/readyz` by its checks, over real HTTP on loopback.

mod common;
mod serve_http;

use common::*;
use serde_json::json;
use serve_http::*;

/// Ready while the state answers a read and a lease can be taken; 503 naming the check that
/// fails (a directory where the statuses file belongs, then where the probe's lease goes), and
/// ready again once it is put right. `/healthz` never looks at the store.
#[test]
fn readiness_names_the_failing_check_on_the_file_store() {
    let dir = workspace();
    let root = dir.path();
    let server = Server::start(root, &["--no-worker"]);
    let ready = server.get("/readyz", &[]);
    assert_eq!(ready.status, 200, "{ready:?}");
    assert_eq!(
        ready.json(),
        json!({"ready": true, "checks": {"store": "ok", "schema": "ok", "lease": "ok"}})
    );
    let lease = root.join(".agentx/state/clarifications/CLR-0-000.lease");
    assert!(!lease.exists(), "the probe's lease is released");

    let statuses = root.join(".agentx/state/agent-status.json");
    let _ = std::fs::remove_file(&statuses);
    std::fs::create_dir(&statuses).unwrap();
    let broken = server.get("/readyz", &[]);
    assert_eq!(broken.status, 503, "{broken:?}");
    assert_eq!(broken.json()["failing"], "store", "{}", broken.body);
    assert_eq!(broken.json()["checks"]["schema"], "not run");
    assert_eq!(server.get("/healthz", &[]).json(), json!({"ok": true}));
    std::fs::remove_dir(&statuses).unwrap();
    assert_eq!(server.get("/readyz", &[]).status, 200);

    std::fs::create_dir(&lease).unwrap();
    let no_lease = server.get("/readyz", &[]);
    assert_eq!(no_lease.status, 503, "{no_lease:?}");
    assert_eq!(no_lease.json()["failing"], "lease", "{}", no_lease.body);
    assert_eq!(no_lease.json()["checks"]["store"], "ok");
    assert!(
        !no_lease.body.contains(&*root.to_string_lossy()),
        "{}",
        no_lease.body
    );
    std::fs::remove_dir(&lease).unwrap();
    assert_eq!(server.get("/readyz", &[]).status, 200);
}
