//! `/mcp` (docs/protocol.md §24) on a workspace whose state is in PostgreSQL: an agent's ask over HTTP
//! lands in the database as its token's agent, and its `clarify_wait` wakes when another
//! process answers (the server's change feed polls the database's revisions).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod mcp_session;
mod serve_http;

use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use mcp_session::*;
use serde_json::json;
use serve_http::*;

#[test]
fn an_agent_over_http_asks_into_the_database_and_its_wait_wakes_on_an_answer() {
    let url = fresh_database("mcp_http");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let engineer = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut e = Session::open(&server, &engineer);
    let (_, asked) = e.call(
        "clarify_ask",
        json!({"issue": 12, "to": "architect", "topic": "Queue", "question": "Which broker?"}),
    );
    let asked = asked.expect("a result");
    assert_eq!(asked["isError"], json!(false), "{asked}");
    let id = asked["structuredContent"]["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // In the database (no ledger file), as the token's agent.
    let rows = psql(
        &url,
        "SELECT count(*) FROM agentx.documents WHERE kind = 'clarifications'",
    );
    assert_eq!(rows.trim(), "1");
    assert!(!root
        .join(".agentx/state/clarifications/issue-12.json")
        .exists());
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["from"], "engineer");

    let answerer = {
        let root = root.to_owned();
        let id = id.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(700));
            json_in(
                &root,
                &[
                    "clarify",
                    "answer",
                    &id,
                    "--from",
                    "architect",
                    "--body",
                    "NATS",
                ],
            )
        })
    };
    let started = Instant::now();
    let (_, waited) = e.call("clarify_wait", json!({"id": id, "timeoutSeconds": 20}));
    let waited = waited.expect("a result");
    assert_eq!(answerer.join().unwrap().code, 0);
    assert_eq!(
        waited["structuredContent"]["status"], "answered",
        "{waited}"
    );
    assert_eq!(waited["structuredContent"]["answer"], "NATS");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
