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

#[test]
fn two_servers_on_one_database_see_each_other_and_act_once() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let url = fresh_database("serve_two");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let human = token(root, "--human", "alice");
    let id = escalated(root, 2, "Shared");
    // A record past its SLA: both workers find it due at once.
    let past = wall_ms() - 2 * 60 * 60 * 1000;
    let old = json_at(
        root,
        past,
        &[
            "clarify",
            "ask",
            "--issue",
            "3",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Old",
            "--question",
            "Still there?",
        ],
    );
    assert_eq!(old.code, 0, "{old:#?}");
    let a = Server::start(root, &[]);
    let b = Server::start(root, &[]);
    let monitor_entries = || {
        let shown = json_in(root, &["clarify", "show", "--issue", "3"]).json();
        shown["ledger"]["clarifications"][0]["thread"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["from"] == "monitor")
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let started = Instant::now();
    while monitor_entries().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no worker ran the monitor"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let entries = monitor_entries();
    assert_eq!(
        entries.iter().filter(|t| *t == "stale").count(),
        1,
        "acted once: {entries:?}"
    );

    // A decision through A shows on B's event stream.
    let (cookie, _) = b.sign_in();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", b.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
        b.host()
    )
    .unwrap();
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    while !line.starts_with("event: ready") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0);
    }
    std::thread::sleep(Duration::from_millis(600));
    let r = a.call_bearer(&human, "decide", json!({"id": id, "message": "Redis"}));
    assert_eq!(r.status, 200, "{r:?}");
    let started = Instant::now();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.starts_with("data:") && line.contains("[2]") {
            break;
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}
