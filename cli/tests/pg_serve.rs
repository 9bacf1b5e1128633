//! `agentx serve` and `agentx tokens` on a workspace whose state is in PostgreSQL: tokens are
//! rows of `agentx.tokens` (no tokens.json), a person's decision through the API lands in
//! the database, a revoked token is refused on the next request.

mod common;
mod serve_http;

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use serde_json::json;
use serve_http::*;

#[test]
fn tokens_and_decisions_live_in_the_database() {
    let url = fresh_database("serve_tokens");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let human = token(root, "--human", "alice");
    assert!(!root.join(".agentx/state/tokens.json").exists());
    let stored = psql(&url, "SELECT body FROM agentx.tokens");
    assert!(
        stored.contains("alice") && !stored.contains(&human[4..]),
        "{stored}"
    );
    let id = escalated(root, 4, "Cache");
    let server = Server::start(root, &["--no-worker"]);
    let r = server.call_bearer(&human, "decide", json!({"id": id, "message": "Redis"}));
    assert_eq!(r.status, 200, "{r:?}");
    let shown = json_in(root, &["clarify", "show", &id]).json();
    let last = shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["by"].as_str(), last["via"].as_str()),
        (Some("alice"), Some("web"))
    );
    assert_eq!(
        json_in(root, &["tokens", "list"]).json()["tokens"][0]["name"],
        "alice"
    );
    assert_eq!(json_in(root, &["tokens", "revoke", "alice"]).code, 0);
    assert_eq!(server.call_bearer(&human, "list", json!({})).status, 401);
}
