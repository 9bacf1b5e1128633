//! `/mcp` (docs/protocol.md §24) on the file store, with raw HTTP: the token names the acting agent, a
//! session belongs to the token that opened it, the refusals of the auth matrix. (The real
//! clients' tests are in mcp/test, run by scripts/test-mcp.)

mod common;
mod mcp_session;
mod serve_http;

use common::*;
use mcp_session::*;
use serde_json::json;
use serve_http::*;

#[test]
fn each_token_acts_as_its_agent_and_owns_its_session() {
    let dir = workspace();
    let root = dir.path();
    let engineer = token(root, "--agent", "engineer");
    let architect = token(root, "--agent", "architect");
    let human = token(root, "--human", "alice");
    let server = Server::start(root, &["--no-worker"]);

    let mut e = Session::open(&server, &engineer);
    let (_, asked) = e.call(
        "clarify_ask",
        json!({"issue": 3, "to": "architect", "topic": "Cache", "question": "Redis?",
               "severity": "WARN", "context": "sessions are shared", "blockedOperations": ["deploy"]}),
    );
    let asked = asked.expect("a result");
    assert_eq!(asked["isError"], json!(false), "{asked}");
    let record = &asked["structuredContent"]["clarification"];
    assert_eq!(record["from"], "engineer");
    assert_eq!(record["severity"], "WARN");
    assert_eq!(record["blockedOperations"], json!(["deploy"]));

    let mut a = Session::open(&server, &architect);
    let (_, inbox) = a.call("clarify_inbox", json!({}));
    let inbox = inbox.expect("a result");
    assert_eq!(inbox["structuredContent"]["agent"], "architect");
    assert_eq!(
        inbox["structuredContent"]["clarifications"][0]["id"],
        "CLR-3-001"
    );
    // The architect's token on the engineer's session: as if there were no such session.
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    assert_eq!(
        post(&server, Some(&architect), Some(&e.id), &list).status,
        404
    );
    assert_eq!(
        post(&server, Some(&engineer), Some(&e.id), &list).status,
        200
    );

    let init: serde_json::Value = serde_json::from_str(INITIALIZE).unwrap();
    let none = post(&server, None, None, &init);
    assert_eq!(none.status, 401);
    assert_eq!(
        none.header("www-authenticate"),
        Some("Bearer realm=\"agentx\"")
    );
    assert_eq!(post(&server, Some("axt_unknown"), None, &init).status, 401);
    assert_eq!(post(&server, Some(&human), None, &init).status, 403);

    // Revoked: the open session's next call is refused.
    assert_eq!(json_in(root, &["tokens", "revoke", "engineer"]).code, 0);
    let (r, _) = e.call("clarify_inbox", json!({}));
    assert_eq!(r.status, 401, "{r:?}");
}
