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

#[test]
fn a_write_on_the_database_reaches_an_open_event_stream() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let url = fresh_database("serve_live");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    escalated(root, 1, "Before");
    let server = Server::start(root, &["--no-worker"]);
    let (cookie, _) = server.sign_in();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
        server.host()
    )
    .unwrap();
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    while !line.starts_with("event: ready") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0);
    }
    // Let the feed take its first look (where things stand) before the write.
    std::thread::sleep(Duration::from_millis(600));
    let started = Instant::now();
    escalated(root, 8, "Live");
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.starts_with("data:") && line.contains('8') {
            break;
        }
    }
    assert!(
        started.elapsed() < Duration::from_millis(2000),
        "{:?}",
        started.elapsed()
    );
}
