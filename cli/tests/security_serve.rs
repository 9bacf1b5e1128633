//! Issue 48 on a real `agentx serve` over loopback: what an attack on the network face found,
//! replayed — a revoked token's session, the cookie on other ports, reserved names, streams
//! that outlive a revocation, idle connections that take every descriptor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod mcp_session;
mod serve_http;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_http::*;

/// Signs in by typing `token` into `/login`: the session cookie and the page's CSRF token.
fn sign_in_with(server: &Server, token: &str) -> (String, String) {
    let r = server.send(
        "POST",
        "/login",
        &[
            ("Origin", &server.origin()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        format!("token={token}").as_bytes(),
    );
    assert_eq!(r.status, 303, "{r:?}");
    let cookie = r.cookie().expect("a session cookie");
    let page = server.get("/", &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200, "{page:?}");
    (cookie, page.csrf().expect("the page's CSRF token"))
}

/// `GET /` with `cookie`: 200 when the session stands, else the redirect to `/login`.
fn inbox_status(server: &Server, cookie: &str) -> u16 {
    server.get("/", &[("Cookie", cookie)]).status
}

fn api_with_cookie(server: &Server, cookie: &str, csrf: &str) -> Reply {
    call_with_cookie(server, cookie, csrf, &json!({"op": "list"}))
}

/// `/api/v1/call` of `body` as the page of the session `cookie` sends it.
fn call_with_cookie(server: &Server, cookie: &str, csrf: &str, body: &Value) -> Reply {
    let origin = server.origin();
    server.send(
        "POST",
        "/api/v1/call",
        &[
            ("Cookie", cookie),
            ("X-CSRF-Token", csrf),
            ("Origin", &origin),
            ("Content-Type", "application/json"),
        ],
        body.to_string().as_bytes(),
    )
}

#[test]
fn a_revoked_tokens_sessions_die_on_every_server_and_sessions_outlive_a_restart() {
    // Issue 48, item 1: a session opened with a human token lived 12 hours past the token's
    // revocation. Sessions are the state store's (issue 52): every server on it knows them.
    let dir = workspace();
    let root = dir.path();
    let alice = token(root, "--human", "alice");
    let mut a = Server::start(root, &["--no-worker"]);
    let b = Server::start(root, &["--no-worker"]);
    let (cookie, csrf) = sign_in_with(&a, &alice);
    let (link_cookie, link_csrf) = a.sign_in();
    let id = escalated(root, 42, "Cache");
    // The other server knows both sessions.
    assert_eq!(inbox_status(&b, &cookie), 200);
    assert_eq!(inbox_status(&b, &link_cookie), 200);
    assert_eq!(api_with_cookie(&b, &cookie, &csrf).status, 200);
    let text = std::fs::read_to_string(root.join(".agentx/state/sessions.json")).unwrap();
    let value = cookie.split_once('=').unwrap().1;
    assert!(!text.contains(value) && !text.contains(&csrf), "{text}");

    let out = json_in(root, &["tokens", "revoke", "alice"]);
    assert_eq!(out.code, 0, "{out:#?}");
    for server in [&a, &b] {
        assert_eq!(
            inbox_status(server, &cookie),
            303,
            "the session outlived its token"
        );
        assert_eq!(api_with_cookie(server, &cookie, &csrf).status, 401);
        // The link's session was opened with no token: it stands.
        assert_eq!(inbox_status(server, &link_cookie), 200);
    }
    // A restart signs nobody out (the browser holds its cookie for the inbox's name, which
    // stays the same).
    let name = a.host().split(':').next().unwrap().to_owned();
    a.terminate();
    let again = Server::start(root, &["--no-worker"]);
    assert_eq!(again.host().split(':').next().unwrap(), name);
    assert_eq!(inbox_status(&again, &link_cookie), 200);
    assert_eq!(inbox_status(&again, &cookie), 303);
    // And the person decides there without signing in again (issue 52): the same cookie and
    // CSRF token, the decision recorded under their name.
    let body = json!({"op": "decide", "input": {"id": id, "message": "Redis"}});
    let decided = call_with_cookie(&again, &link_cookie, &link_csrf, &body);
    assert_eq!(decided.status, 200, "{decided:?}");
    let shown = json_in(root, &["clarify", "show", &id]).json();
    let last = shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["from"], "human", "{shown}");
    assert!(
        last["by"]
            .as_str()
            .is_some_and(|b| !b.is_empty() && b != "local"),
        "{last}"
    );
}

#[test]
fn the_cookie_belongs_to_the_inboxs_own_name_only() {
    // Issue 48, item 3: browsers send a 127.0.0.1 cookie to every port of 127.0.0.1. The
    // inbox has its own name, `<label>.localhost:<port>`; its cookie is set and honoured there
    // only (the browser half of this is serve/e2e/cookie.test.mjs).
    let dir = workspace();
    let root = dir.path();
    let human = token(root, "--human", "alice");
    let server = Server::start(root, &["--no-worker"]);
    let host = server.host();
    let (label, port) = host.rsplit_once(':').unwrap();
    assert!(
        label.starts_with("agentx-") && label.ends_with(".localhost"),
        "{host}"
    );
    assert_eq!(port, server.port.to_string());
    assert!(server
        .link
        .starts_with(&format!("http://{host}/login?once=")));
    // A sign-in on 127.0.0.1 is sent to the inbox's name, the link not used up.
    let plain = format!("127.0.0.1:{}", server.port);
    let r = server.get(&server.once_path(), &[("Host", &plain)]);
    assert_eq!(r.status, 303, "{r:?}");
    assert_eq!(
        r.header("location"),
        Some(format!("http://{host}{}", server.once_path()).as_str())
    );
    assert!(r.header("set-cookie").is_none(), "{r:?}");
    let typed = server.send(
        "POST",
        "/login",
        &[
            ("Host", &plain),
            ("Origin", &format!("http://{plain}")),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        format!("token={human}").as_bytes(),
    );
    assert_eq!(typed.status, 303, "{typed:?}");
    assert!(typed.header("set-cookie").is_none(), "{typed:?}");
    let (cookie, csrf) = server.sign_in();
    let set = server.get(&server.once_path(), &[]);
    assert_eq!(set.status, 401, "used once: {set:?}");
    // Replayed on 127.0.0.1 (as a process on another port that received it would), the
    // cookie is nobody's.
    let page = server.get("/", &[("Host", &plain), ("Cookie", &cookie)]);
    assert_eq!(page.status, 303, "{page:?}");
    let origin = format!("http://{plain}");
    let api = server.send(
        "POST",
        "/api/v1/call",
        &[
            ("Host", &plain),
            ("Cookie", &cookie),
            ("X-CSRF-Token", &csrf),
            ("Origin", &origin),
            ("Content-Type", "application/json"),
        ],
        br#"{"op": "list"}"#,
    );
    assert_eq!(api.status, 401, "{api:?}");
    // On its own name it is the person's; a bearer token works on any name.
    assert_eq!(inbox_status(&server, &cookie), 200);
    let auth = format!("Bearer {human}");
    let r = server.get("/", &[("Host", &plain), ("Authorization", &auth)]);
    assert_eq!(r.status, 200, "{r:?}");
}

/// Writes a token named `name` of `kind` straight into the tokens document, as an older
/// `agentx` (which did not refuse reserved names) would have: its secret.
fn plant_token(root: &std::path::Path, kind: &str, name: &str) -> String {
    let secret = format!("axt_planted{name}{}", "x".repeat(30));
    let out = std::process::Command::new("sh")
        .args(["-c", "printf %s \"$0\" | sha256sum", &secret])
        .output()
        .unwrap();
    let hash = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let path = root.join(".agentx/state/tokens.json");
    let mut doc: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({"tokens": []}));
    doc["tokens"].as_array_mut().unwrap().push(json!({
        "id": format!("tok_{name}"), "name": name, "kind": kind, "sha256": hash, "created": 0,
    }));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    secret
}

#[test]
fn reserved_names_are_refused_at_minting_and_on_every_door() {
    // Issue 48, item 10: `tokens new --agent agent-x` was accepted and /a2a acted as the hub.
    let dir = workspace();
    let root = dir.path();
    for (flag, name) in [
        ("--agent", "agent-x"),
        ("--agent", "human"),
        ("--agent", "monitor"),
        ("--human", "human"),
        ("--human", "agent-x"),
    ] {
        let out = json_in(root, &["tokens", "new", flag, name]);
        let v = assert_fails(&out, 3, "INVALID_INPUT");
        assert!(
            v["error"]["message"].as_str().unwrap().contains("reserved"),
            "{v}"
        );
    }
    assert!(
        !std::fs::read_to_string(root.join(".agentx/state/tokens.json"))
            .unwrap_or_default()
            .contains("agent-x")
    );
    let out = run([root_arg(root), "serve".into(), "--as=monitor".into()]);
    assert_eq!(out.code, 2, "{out:#?}");
    // Tokens minted before the refusal act nowhere.
    let hub = plant_token(root, "agent", "agent-x");
    let person = plant_token(root, "human", "human");
    let server = Server::start(root, &["--no-worker"]);
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Which cache?"}],"metadata":{"to":"architect","issue":4,"topic":"Cache"}}}}"#;
    let auth = format!("Bearer {hub}");
    let a2a = server.send(
        "POST",
        "/a2a",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        body,
    );
    assert_eq!(a2a.status, 403, "{a2a:?}");
    let init: Value = serde_json::from_str(mcp_session::INITIALIZE).unwrap();
    assert_eq!(
        mcp_session::post(&server, Some(&hub), None, &init).status,
        403
    );
    assert_eq!(server.call_bearer(&person, "list", json!({})).status, 401);
    let form = server.send(
        "POST",
        "/login",
        &[
            ("Origin", &server.origin()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        format!("token={person}").as_bytes(),
    );
    assert_eq!(form.status, 401, "{form:?}");
    assert!(
        !ledger_path(root, 4).exists(),
        "nothing was asked as the hub"
    );
}

/// Opens `/events` with `headers`; the reader after the stream's `ready` event, or the
/// refusal's status.
fn open_events(server: &Server, headers: &[(&str, &str)]) -> Result<BufReader<TcpStream>, u16> {
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!("GET /events HTTP/1.1\r\nHost: {}\r\n", server.host());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(s);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let code: u16 = status.split(' ').nth(1).unwrap().parse().unwrap();
    if code != 200 {
        return Err(code);
    }
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "ended before ready"
        );
        if line.starts_with("event: ready") {
            return Ok(reader);
        }
    }
}

/// What a stream sends until it ends; `None` when it is still open after 15 s.
fn rest_of(mut reader: BufReader<TcpStream>) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut text = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        reader.get_ref().set_read_timeout(Some(left)).unwrap();
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return Some(text),
            Ok(_) => text.push_str(&line),
            Err(_) => return None,
        }
    }
}

#[test]
fn event_streams_end_with_their_credential_and_are_capped_per_credential() {
    // Issue 48, items 11 and 17: a stream opened before a revocation kept delivering; one
    // token could open streams without end.
    let dir = workspace();
    let root = dir.path();
    let alice = token(root, "--human", "alice");
    let bob = token(root, "--human", "bob");
    let server = Server::start(root, &["--no-worker"]);
    let by_alice = format!("Bearer {alice}");
    let stream = open_events(&server, &[("Authorization", &by_alice)]).unwrap();
    let (cookie, _) = sign_in_with(&server, &alice);
    let by_cookie = open_events(&server, &[("Cookie", &cookie)]).unwrap();
    assert_eq!(json_in(root, &["tokens", "revoke", "alice"]).code, 0);
    ask(root, T0, 6, "Cache", "Redis?");
    for (what, reader) in [("token", stream), ("session", by_cookie)] {
        let rest = rest_of(reader).unwrap_or_else(|| panic!("{what}: the stream did not end"));
        assert!(
            !rest.contains("event: change"),
            "{what}: delivered after the revocation: {rest}"
        );
    }
    // Sixteen streams per credential; the seventeenth is refused, another credential is not.
    let by_bob = format!("Bearer {bob}");
    let held: Vec<_> = (0..16)
        .map(|_| open_events(&server, &[("Authorization", &by_bob)]).unwrap())
        .collect();
    assert_eq!(
        open_events(&server, &[("Authorization", &by_bob)]).err(),
        Some(429)
    );
    let (link_cookie, _) = server.sign_in();
    assert!(open_events(&server, &[("Cookie", &link_cookie)]).is_ok());
    drop(held);
    let until = Instant::now() + Duration::from_secs(10);
    while open_events(&server, &[("Authorization", &by_bob)]).is_err() {
        assert!(
            Instant::now() < until,
            "the closed streams' slots did not come back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_mcp_stream_ends_when_its_token_is_revoked() {
    // Issue 48, item 11: an MCP event stream opened before the revocation still delivered.
    let dir = workspace();
    let root = dir.path();
    let engineer = token(root, "--agent", "engineer");
    let server = Server::start(root, &["--no-worker"]);
    let mut session = mcp_session::Session::open(&server, &engineer);
    let (r, _) = session.call(
        "clarify_ask",
        json!({"issue": 8, "to": "architect", "topic": "Cache", "question": "Redis?"}),
    );
    assert_eq!(r.status, 200, "{r:?}");
    let subscribe = json!({"jsonrpc": "2.0", "id": 50, "method": "resources/subscribe",
        "params": {"uri": "agentx://issues/8"}});
    let r = mcp_session::post(&server, Some(&engineer), Some(&session.id), &subscribe);
    assert_eq!(r.status, 200, "{r:?}");
    // The session's stream of server messages (resource updates come on it).
    let listen = |token: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
            server.host(),
            session.id
        );
        s.write_all(head.as_bytes()).unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.contains(" 200 "), "{status}");
        reader
    };
    // First, as it should: the CLI's write reaches the open stream.
    let mut open = listen(&engineer);
    let answer = |n: u32| {
        let out = json_in(
            root,
            &[
                "clarify",
                "answer",
                &format!("CLR-8-00{n}"),
                "--from=architect",
                "--body=Redis.",
            ],
        );
        assert_eq!(out.code, 0, "{out:#?}");
    };
    answer(1);
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let mut line = String::new();
        assert!(open.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.contains("notifications/resources/updated") {
            break;
        }
        assert!(Instant::now() < until, "no update");
    }
    assert_eq!(json_in(root, &["tokens", "revoke", "engineer"]).code, 0);
    ask(root, T0, 8, "Queue", "Kafka?");
    let rest = rest_of(open).expect("the stream did not end");
    assert!(
        !rest.contains("notifications/resources/updated"),
        "delivered after the revocation: {rest}"
    );
}

/// The limits of `/proc/self/limits`' "Max open files": (soft, hard).
fn open_files() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_owned();
    let mut numbers = line.split_whitespace().filter_map(|w| {
        w.parse::<u64>()
            .ok()
            .or_else(|| (w == "unlimited").then_some(u64::MAX))
    });
    (numbers.next().unwrap(), numbers.next().unwrap())
}

/// `agentx serve` under the open-file limits `soft`/`hard` (set by the shell that execs it).
fn serve_limited(root: &std::path::Path, soft: u64, hard: u64) -> Server {
    let script = format!("ulimit -S -n {soft} && ulimit -H -n {hard} && exec \"$0\" \"$@\"");
    Server::start_via(root, &["sh", "-c", &script], &["--no-worker"])
}

/// Opens `n` connections that never send a byte (a slowloris' opening move).
fn idle_connections(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            TcpStream::connect_timeout(
                &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
                Duration::from_secs(5),
            )
            .unwrap_or_else(|e| panic!("connection {i}: {e}"))
        })
        .collect()
}

#[test]
fn idle_connections_never_keep_a_signed_in_person_out() {
    // Issue 48, item 7: ~1,010 connections that never finished their headers stopped the
    // server for everyone (the soft limit of 1,024 open files), and reconnecting kept it
    // down. The soft limit is raised to the hard one at start, and the connections are capped
    // below it: the oldest idle one is closed for a new one.
    let (soft, _) = open_files();
    assert!(
        soft >= 1_400,
        "this test holds 1,200 sockets at once: raise `ulimit -n` (now {soft})"
    );
    let dir = workspace();
    let root = dir.path();
    // (soft, hard): the usual soft 1,024 below a higher hard limit (raised at start), then a
    // hard limit of 1,024 itself (the cap below it, with shedding, keeps the server up).
    for (soft, hard) in [(1024, 8192), (1024, 1024)] {
        let server = serve_limited(root, soft, hard);
        let (cookie, _) = server.sign_in();
        let flood = idle_connections(server.port, 1_200);
        for (path, headers) in [
            ("/healthz", vec![]),
            ("/", vec![("Cookie", cookie.as_str())]),
        ] {
            let mut all: Vec<(String, String)> = vec![("Host".into(), server.host())];
            all.extend(
                headers
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
            );
            // A bound on liveness, not a speed target (the figure is printed): before the
            // fix the server never answered again. 1 s was missed once on a loaded 2-core
            // machine while the other tests of this binary ran beside it.
            let started = Instant::now();
            let r = try_request_within(server.port, "GET", path, &all, Duration::from_secs(5));
            let r =
                r.unwrap_or_else(|| panic!("{path} under ({soft}, {hard}): no answer within 5 s"));
            assert_eq!(r.status, 200, "{path} under ({soft}, {hard}): {r:?}");
            assert!(started.elapsed() < Duration::from_secs(5));
            eprintln!(
                "{path} under ({soft}, {hard}) beside 1,200 idle connections: {:?}",
                started.elapsed()
            );
        }
        drop(flood);
    }
}
