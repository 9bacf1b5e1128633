//! `/mcp` (docs/protocol.md §24) on the file store, with raw HTTP: the token names the acting agent, a
//! session belongs to the token that opened it, the refusals of the auth matrix. (The real
//! clients' tests are in mcp/test, run by scripts/test-mcp.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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

    // A network door: a `now` in a tool's input is refused (only the server's clock dates a
    // write), as is a misspelt field, with the nearest known one.
    for (args, expected) in [
        (
            json!({"issue": 4, "to": "architect", "topic": "TTL", "question": "How long?",
                   "now": "2099-01-01T00:00:00Z"}),
            "unknown field `now`",
        ),
        (
            json!({"issue": 4, "to": "architect", "topic": "TTL", "question": "How long?",
                   "blockng": false}),
            "unknown field `blockng`; did you mean `blocking`?",
        ),
    ] {
        let (_, refused) = e.call("clarify_ask", args);
        let refused = refused.expect("a result");
        assert_eq!(refused["isError"], json!(true), "{refused}");
        let text = refused["content"][0]["text"].as_str().unwrap_or("");
        assert!(text.contains("INVALID_INPUT"), "{refused}");
        assert!(text.contains(expected), "{refused}");
    }
    assert!(!ledger_path(root, 4).exists(), "nothing was asked");

    // Revoked: the open session's next call is refused.
    assert_eq!(json_in(root, &["tokens", "revoke", "engineer"]).code, 0);
    let (r, _) = e.call("clarify_inbox", json!({}));
    assert_eq!(r.status, 401, "{r:?}");
}

/// A session opened by `initialize` alone and left (what a client that opens one per call
/// and never closes it leaves behind): its id.
fn abandoned(server: &Server, token: &str) -> String {
    let init: serde_json::Value = serde_json::from_str(INITIALIZE).unwrap();
    let r = post(server, Some(token), None, &init);
    assert_eq!(r.status, 200, "{r:?}");
    r.header("mcp-session-id").expect("a session id").to_owned()
}

#[test]
fn abandoned_sessions_are_capped_per_token_and_the_server_stays_small() {
    let dir = workspace();
    let root = dir.path();
    let engineer = token(root, "--agent", "engineer");
    let architect = token(root, "--agent", "architect");
    let config = root.join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str("\n[serve]\nmetrics = true\nmetrics_token_env = \"AGENTX_TEST_METRICS_TOKEN\"\n");
    std::fs::write(&config, text).unwrap();
    let server = Server::start_with_env(
        root,
        &["--no-worker"],
        &[("AGENTX_TEST_METRICS_TOKEN", "scrape-0123456789abcdef")],
    );
    // The sessions the server keeps, as `/metrics` counts them.
    let counted = || {
        let r = server.get(
            "/metrics",
            &[("Authorization", "Bearer scrape-0123456789abcdef")],
        );
        assert_eq!(r.status, 200, "{r:?}");
        r.body
            .lines()
            .find_map(|l| l.strip_prefix("agentx_mcp_sessions "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no agentx_mcp_sessions in {}", r.body))
    };
    assert_eq!(counted(), 0);
    let mut kept = Session::open(&server, &architect);
    let (_, listed) = kept.call("clarify_inbox", json!({}));
    assert!(listed.is_some());
    let before = server.rss_kib();

    let first = abandoned(&server, &engineer);
    for _ in 0..10_000 {
        abandoned(&server, &engineer);
    }
    let after = server.rss_kib();
    eprintln!("RSS {before} KiB before, {after} KiB after 10,000 abandoned sessions");
    // Was 912 MB. The bound: the 16 sessions a token keeps, and the allocator's slack.
    assert!(
        after < before + 64 * 1024,
        "{before} KiB -> {after} KiB after 10,000 abandoned sessions"
    );
    // The engineer's 16 and the architect's one.
    assert_eq!(counted(), 17);
    // The oldest idle sessions were closed; another token's were not touched.
    let init_done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&server, Some(&engineer), Some(&first), &init_done).status,
        404
    );
    let (reply, listed) = kept.call("clarify_inbox", json!({}));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(listed.is_some());

    // A session with a request under way is never the one closed: a wait runs while its
    // token opens many more.
    let mut busy = Session::open(&server, &engineer);
    let (_, asked) = busy.call(
        "clarify_ask",
        json!({"issue": 4, "to": "architect", "topic": "Cap", "question": "How many?"}),
    );
    let id = asked.expect("a result")["structuredContent"]["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    std::thread::scope(|s| {
        let waiting = s.spawn(|| busy.call("clarify_wait", json!({"id": id, "timeoutSeconds": 4})));
        std::thread::sleep(std::time::Duration::from_millis(500));
        for _ in 0..40 {
            abandoned(&server, &engineer);
        }
        let (reply, waited) = waiting.join().unwrap();
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(waited.is_some(), "the wait ran to its end: {reply:?}");
    });
    let (reply, _) = busy.call("clarify_inbox", json!({}));
    assert_eq!(reply.status, 200, "the session in use was kept: {reply:?}");
}
