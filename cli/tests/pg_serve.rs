//! `agentx serve` and `agentx tokens` on a workspace whose state is in PostgreSQL: tokens are
//! the `tokens` row of `agentx.state_docs` (no tokens.json), and a token made before schema 9
//! (when they were rows of a table of their own) still works after `agentx store init`; a
//! person's decision through the API lands in the database, a revoked token is refused on
//! the next request.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod pg_proxy;
mod serve_http;

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use pg_proxy::Proxy;
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
    let stored = psql(
        &url,
        "SELECT body FROM agentx.state_docs WHERE name = 'tokens'",
    );
    assert!(
        stored.contains("alice") && !stored.contains(&human[4..]),
        "{stored}"
    );
    // The database as schema 8 kept it: one row per token in agentx.tokens. Every command
    // asks for `store init` until it is migrated; then the token made before works (below).
    psql(
        &url,
        "CREATE TABLE agentx.tokens (pos integer PRIMARY KEY CHECK (pos >= 0), body text NOT NULL);
         INSERT INTO agentx.tokens (pos, body)
             SELECT e.ord - 1, e.t::text FROM agentx.state_docs d,
                 json_array_elements(d.body::json -> 'tokens') WITH ORDINALITY AS e(t, ord)
             WHERE d.name = 'tokens';
         DELETE FROM agentx.state_docs WHERE name = 'tokens';
         DROP TABLE agentx.search_records;
         DELETE FROM agentx.migrations WHERE version >= 9;",
    );
    assert_eq!(psql(&url, "SELECT count(*) FROM agentx.tokens").trim(), "1");
    let behind = json_in(root, &["tokens", "list"]);
    assert_ne!(behind.code, 0, "{behind:?}");
    assert!(
        format!("{}{}", behind.stdout, behind.stderr).contains("agentx store init"),
        "{behind:?}"
    );
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    assert_eq!(
        psql(&url, "SELECT to_regclass('agentx.tokens') IS NULL").trim(),
        "t"
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
    // Generous: a loaded CI machine runs both servers' workers beside this request.
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
        b.host()
    )
    .unwrap();
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    // Everything read before the stream's first event, so a refusal says what it was.
    let mut head = String::new();
    while !line.starts_with("event: ready") {
        line.clear();
        let read = reader.read_line(&mut line);
        head.push_str(&line);
        match read {
            Ok(n) if n > 0 => {}
            other => panic!("no ready event on B's stream ({other:?}); read so far:\n{head}"),
        }
        if head.starts_with("HTTP/1.1") && !head.starts_with("HTTP/1.1 200") && line == "\r\n" {
            panic!("B's stream was refused:\n{head}");
        }
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

#[test]
fn the_database_gone_is_a_503_and_its_return_is_recovered() {
    let (proxy, url) = Proxy::new(&fresh_database("serve_down"));
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let human = token(root, "--human", "alice");
    escalated(root, 6, "Outage");
    let server = Server::start(root, &["--no-worker"]);
    let (cookie, _) = server.sign_in();
    assert_eq!(server.get("/", &[("Cookie", &cookie)]).status, 200);
    assert_eq!(server.call_bearer(&human, "list", json!({})).status, 200);

    proxy.down();
    let page = server.get("/", &[("Cookie", &cookie)]);
    assert_eq!(page.status, 503, "{page:?}");
    assert!(page.body.contains("IO_ERROR"), "{}", page.body);
    let api = server.call_bearer(&human, "list", json!({}));
    assert_eq!(api.status, 503, "{api:?}");
    assert_eq!(api.json()["error"]["code"], "IO_ERROR");
    assert!(!api.body.contains(&human[4..]), "no secret in the error");

    proxy.up();
    let started = std::time::Instant::now();
    while server.get("/", &[("Cookie", &cookie)]).status != 200 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "never recovered"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let r = server.call_bearer(&human, "list", json!({}));
    assert_eq!(r.status, 200, "{r:?}");
}

/// `/readyz` (docs/protocol.md §23 "Health and readiness"): 503 naming the failing check while
/// the database is away or its schema is not this build's, 200 once it answers again; `/healthz`
/// stays 200 throughout (it never calls the store). The body never names the database.
#[test]
fn readiness_follows_the_database_and_its_schema() {
    use std::time::{Duration, Instant};
    let (proxy, url) = Proxy::new(&fresh_database("serve_ready"));
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\ntimeout_ms = 2000\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let server = Server::start(root, &["--no-worker"]);
    let ready = server.get("/readyz", &[]);
    assert_eq!(ready.status, 200, "{ready:?}");
    assert_eq!(
        ready.json(),
        json!({"ready": true, "checks": {"store": "ok", "schema": "ok", "lease": "ok"}})
    );
    // The probe's lease is released: nothing is left in the table.
    assert_eq!(psql(&url, "SELECT count(*) FROM agentx.leases").trim(), "0");
    // `store init` with the replica running (docs/deploy/README.md "Upgrades"): the schema is
    // current, nothing changes, the replica stays ready.
    let again = run([root_arg(root), "store".into(), "init".into()]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("is current"), "{again:?}");
    assert_eq!(server.get("/readyz", &[]).status, 200);

    proxy.down();
    let down = server.get("/readyz", &[]);
    assert_eq!(down.status, 503, "{down:?}");
    assert_eq!(down.json()["failing"], "store", "{}", down.body);
    assert_eq!(down.json()["code"], "IO_ERROR", "{}", down.body);
    assert_eq!(down.json()["checks"]["lease"], "not run", "{}", down.body);
    assert!(!down.body.contains("postgres"), "{}", down.body);
    assert_eq!(server.get("/healthz", &[]).status, 200);

    proxy.up();
    let started = Instant::now();
    while server.get("/readyz", &[]).status != 200 {
        assert!(started.elapsed() < Duration::from_secs(10), "never ready");
        std::thread::sleep(Duration::from_millis(100));
    }

    // A newer agentx migrated the database under this server: not ready, by the schema.
    psql(
        &url,
        "INSERT INTO agentx.migrations (version, description) VALUES (999, 'a later build')",
    );
    let newer = server.get("/readyz", &[]);
    assert_eq!(newer.status, 503, "{newer:?}");
    assert_eq!(newer.json()["failing"], "schema", "{}", newer.body);
    assert_eq!(newer.json()["checks"]["store"], "ok", "{}", newer.body);
    // This build's commands refuse the newer database; its `store init` never downgrades.
    let refused = json_in(root, &["clarify", "list"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stdout.contains("upgrade agentx"), "{refused:?}");
    let init = run([root_arg(root), "store".into(), "init".into()]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(init.stdout.contains("version 999 is current"), "{init:?}");
    psql(&url, "DELETE FROM agentx.migrations WHERE version = 999");
    assert_eq!(server.get("/readyz", &[]).status, 200);
}
