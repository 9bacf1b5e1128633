//! The push change feed (docs/protocol.md §21, issue 47): a waiter is woken by the store's
//! signal — the kernel's file events for the file store, `NOTIFY` for PostgreSQL — not by a
//! timer. With the feed's safety tick set to an hour (`AGENTX_FEED_TICK_MS`), an `agentx mcp`
//! server's `clarify_wait` and `agentx serve`'s `/events` stream still get another process's
//! answer within 100 ms of that process's exit; with watching turned off
//! (`AGENTX_FEED_WATCH=off`, as on a network filesystem) the file store's fallback looks at the
//! stamps on its timer, says so once in the log, and the wait still ends with the answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::fresh_database;
use common::*;
use serde_json::{json, Value};
use serve_http::*;

/// An hour: no timer of the feed fires during a test.
const AN_HOUR_MS: &str = "3600000";

/// `agentx mcp` over stdio with a line-by-line JSON-RPC client.
struct Mcp {
    child: Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(root: &Path, env: &[(&str, &str)], log: &Path) -> Mcp {
        let mut child = agentx()
            .args([
                &root_arg(root),
                "mcp",
                "--agent",
                "engineer",
                "--issue",
                "8",
            ])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            input,
            output,
            next: 1,
        };
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wake-test", "version": "1"}
        });
        mcp.send_request("initialize", init);
        mcp.response();
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, v: Value) {
        writeln!(self.input, "{v}").unwrap();
        self.input.flush().unwrap();
    }

    fn send_request(&mut self, method: &str, params: Value) {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// The next response's result (notifications skipped).
    fn response(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id").is_some() {
                return v["result"].clone();
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.send_request("tools/call", json!({"name": name, "arguments": arguments}));
        self.response()["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn answer(root: &Path, id: &str) -> Out {
    json_in(
        root,
        &[
            "clarify",
            "answer",
            "--from",
            "architect",
            "--body",
            "Redis.",
            id,
        ],
    )
}

/// Asks through the server, waits on it, and answers from another process while it waits;
/// returns how long after that process exited the wait's answer came.
fn wait_for_another_process(root: &Path, env: &[(&str, &str)], log: &Path) -> Duration {
    let mut mcp = Mcp::start(root, env, log);
    let asked = mcp.tool(
        "clarify_ask",
        json!({"to": "architect", "topic": "Cache", "question": "Redis or LRU?", "blocking": false}),
    );
    let id = asked["clarification"]["id"].as_str().unwrap().to_owned();
    mcp.send_request(
        "tools/call",
        json!({"name": "clarify_wait", "arguments": {"id": id, "timeoutSeconds": 30}}),
    );
    // The wait has started (its first read is done well within this).
    std::thread::sleep(Duration::from_millis(500));
    let answered = answer(root, &id);
    let exited = Instant::now();
    assert_eq!(answered.code, 0, "{answered:#?}");
    let waited = mcp.response()["structuredContent"].clone();
    let late = exited.elapsed();
    assert_eq!(waited["status"], "answered", "{waited}");
    assert_eq!(waited["answer"], "Redis.");
    assert_eq!(waited["timedOut"], false);
    late
}

fn log_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
}

#[test]
fn a_wait_on_files_is_woken_by_the_answer_not_by_a_timer() {
    let dir = workspace();
    let logs = tempfile::tempdir().unwrap();
    let late = wait_for_another_process(
        dir.path(),
        &[("AGENTX_FEED_TICK_MS", AN_HOUR_MS)],
        &logs.path().join("server.log"),
    );
    assert!(
        late < Duration::from_millis(100),
        "the answer reached the wait {late:?} after the answering process exited"
    );
    assert!(
        !log_of(logs.path()).contains("does not watch"),
        "{}",
        log_of(logs.path())
    );
}

#[test]
fn with_watching_off_a_wait_on_files_still_sees_the_answer_and_says_why_once() {
    let dir = workspace();
    let logs = tempfile::tempdir().unwrap();
    let late = wait_for_another_process(
        dir.path(),
        &[
            ("AGENTX_FEED_WATCH", "off"),
            ("AGENTX_FEED_TICK_MS", AN_HOUR_MS),
        ],
        &logs.path().join("server.log"),
    );
    // The fallback looks every 100 ms: the answer comes on its timer, not an hour later.
    assert!(late < Duration::from_secs(10), "{late:?}");
    let log = log_of(logs.path());
    assert_eq!(
        log.matches("does not watch the state files (AGENTX_FEED_WATCH=off)")
            .count(),
        1,
        "{log}"
    );
}

fn pg_workspace(prefix: &str) -> tempfile::TempDir {
    let url = fresh_database(prefix);
    let dir = workspace();
    write_config(dir.path(), &format!("[store]\nurl = \"{url}\"\n"));
    let out = json_in(dir.path(), &["store", "init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    dir
}

#[test]
fn a_wait_on_postgres_is_woken_by_the_answer_not_by_a_timer() {
    let dir = pg_workspace("wake_mcp");
    let logs = tempfile::tempdir().unwrap();
    let late = wait_for_another_process(
        dir.path(),
        &[("AGENTX_FEED_TICK_MS", AN_HOUR_MS)],
        &logs.path().join("server.log"),
    );
    assert!(
        late < Duration::from_millis(100),
        "the answer reached the wait {late:?} after the answering process exited"
    );
}

/// Opens `/events` on a server whose feed's safety tick is an hour, writes from another
/// process, and returns how long after that process exited the `change` event came.
fn event_after_another_process(root: &Path) -> Duration {
    let server = Server::start_with_env(
        root,
        &["--no-worker"],
        &[("AGENTX_FEED_TICK_MS", AN_HOUR_MS)],
    );
    let (cookie, _) = server.sign_in();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
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
    // The feed's baseline is taken before the server prints its link; its first look too.
    std::thread::sleep(Duration::from_millis(300));
    escalated(root, 8, "Live");
    let exited = Instant::now();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.starts_with("data:") && line.contains('8') {
            return exited.elapsed();
        }
    }
}

#[test]
fn an_event_stream_on_files_is_woken_by_the_write_not_by_a_timer() {
    let dir = workspace();
    escalated(dir.path(), 1, "Before");
    let late = event_after_another_process(dir.path());
    assert!(
        late < Duration::from_millis(100),
        "the event came {late:?} after the writing process exited"
    );
}

#[test]
fn an_event_stream_on_postgres_is_woken_by_the_write_not_by_a_timer() {
    let dir = pg_workspace("wake_serve");
    escalated(dir.path(), 1, "Before");
    let late = event_after_another_process(dir.path());
    assert!(
        late < Duration::from_millis(100),
        "the event came {late:?} after the writing process exited"
    );
}
