//! docs/protocol.md §31 on `agentx mcp` over stdio, as a hostile or careless client would drive it: lines
//! that are not JSON, huge lines, a stderr nobody reads, NUL in texts, and a burst of routed
//! questions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::{agentx, json_within, T0};
use serde_json::{json, Value};

/// A running `agentx mcp` and its output, line by line.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Mcp {
    /// Starts the server of `agent` on `root`; `stderr_read` false leaves its stderr in a pipe
    /// nobody reads.
    fn start(root: &Path, stderr_read: bool) -> Mcp {
        let mut cmd = agentx();
        cmd.args([
            format!("--root={}", root.display()),
            "mcp".into(),
            "--agent=engineer".into(),
            "--issue=1".into(),
        ])
        .env("AGENTX_MCP_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if stderr_read {
            Stdio::null()
        } else {
            Stdio::piped()
        });
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
        };
        mcp.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "security-test", "version": "1"}}}),
        );
        mcp.reply(0);
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.raw(&line);
    }

    /// The next message within 10 s.
    fn next(&mut self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("no reply within 10 s")
    }

    /// The reply to request `id` (notifications and other replies skipped).
    fn reply(&mut self, id: i64) -> Value {
        loop {
            let v = self.next();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    fn call(&mut self, id: i64, tool: &str, args: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        self.reply(id)
    }

    /// Closes stdin and waits for the exit (10 s at most).
    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the server did not exit on EOF"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(json_within(dir.path(), T0, &["init"]).code, 0);
    dir
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_quoting_at_most_200_characters() {
    // The finding: a malformed line got no answer at all (no -32700), and megabytes of
    // hostile input were echoed into errors and logs.
    let dir = workspace();
    let mut mcp = Mcp::start(dir.path(), true);
    mcp.raw(b"this is not json\n");
    let v = mcp.next();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    // A megabyte of garbage on one line: one reply, its quote cut.
    let mut huge = vec![b'{'; 1 << 20];
    huge.push(b'\n');
    mcp.raw(&huge);
    let v = mcp.next();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(v.to_string().len() < 1000, "{} bytes", v.to_string().len());
    assert!(v["error"]["data"]["line"].as_str().unwrap().chars().count() <= 201);
    // The session goes on.
    mcp.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    assert_eq!(mcp.reply(7)["result"], json!({}));
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn a_server_whose_stderr_nobody_reads_keeps_serving_and_exits_on_eof() {
    let dir = workspace();
    let mut mcp = Mcp::start(dir.path(), false);
    // Each bad line logs a warning (and trace logs every message): far more than a pipe holds.
    let garbage = "not json at all, and long enough to fill a pipe quickly ".repeat(4) + "\n";
    for round in 0..4 {
        mcp.raw(garbage.repeat(1000).as_bytes());
        for _ in 0..1000 {
            assert_eq!(mcp.next()["error"]["code"], -32700);
        }
        mcp.send(&json!({"jsonrpc": "2.0", "id": round, "method": "ping"}));
        assert_eq!(mcp.reply(round)["result"], json!({}));
    }
    let started = Instant::now();
    let listed = mcp.call(100, "clarify_list", json!({}));
    assert!(listed.get("result").is_some(), "{listed}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn nul_and_control_characters_in_texts_are_invalid_input() {
    // The finding: NUL and control characters were accepted over MCP (then broke argv-prompt
    // presets).
    let dir = workspace();
    let mut mcp = Mcp::start(dir.path(), true);
    for (n, (topic, question)) in [
        ("Cache\u{0}layer", "Redis?"),
        ("Cache layer", "Redis\u{0}?"),
        ("Cache \u{1b}[2J", "Redis?"),
    ]
    .into_iter()
    .enumerate()
    {
        let v = mcp.call(
            n as i64 + 1,
            "clarify_ask",
            json!({"to": "architect", "topic": topic, "question": question}),
        );
        assert_eq!(v["result"]["isError"], true, "{v}");
        assert!(v.to_string().contains("INVALID_INPUT"), "{v}");
    }
    assert!(!dir
        .path()
        .join(".agentx/state/clarifications/issue-1.json")
        .exists());
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn background_routing_runs_at_most_max_routes_at_once() {
    // The finding: 150 clarify_ask {route: true} from one session started 150 agent CLIs at
    // once.
    let dir = workspace();
    let root = dir.path();
    let trace = root.join("runs.log");
    // Each run notes when it starts and ends, and answers after 300 ms.
    let script = format!(
        "echo start >> {t}; sleep 0.3; echo end >> {t}; echo Redis.",
        t = trace.display()
    );
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[mcp]\nmax_routes = 2\n\n[agents.architect]\ncommand = [\"sh\", \"-c\", {script:?}]\nanswer = \"text\"\n"
        ),
    )
    .unwrap();
    let mut mcp = Mcp::start(root, true);
    let total = 6;
    for n in 0..total {
        let v = mcp.call(
            n + 1,
            "clarify_ask",
            // Distinct questions: the same one again would be the same record (never asked
            // twice), not another routing.
            json!({"to": "architect", "topic": format!("Question {n}"),
                   "question": format!("Redis for part {n}?"), "route": true, "blocking": false}),
        );
        assert_ne!(v["result"]["isError"], true, "{v}");
    }
    let started = Instant::now();
    let ends = || {
        std::fs::read_to_string(&trace)
            .unwrap_or_default()
            .lines()
            .filter(|l| *l == "end")
            .count()
    };
    while ends() < total as usize {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the routings did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (mut running, mut most) = (0i32, 0i32);
    for line in std::fs::read_to_string(&trace).unwrap().lines() {
        running += if line == "start" { 1 } else { -1 };
        most = most.max(running);
    }
    assert_eq!(
        most, 2,
        "at most [mcp] max_routes = 2 at once, and that many"
    );
    assert_eq!(mcp.finish(), 0);
}

#[test]
fn mcp_never_writes_through_a_planted_index_gitignore() {
    // The High finding reached MCP too: clarify_inbox truncated the link's target to `*`.
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    assert_eq!(json_within(&root, T0, &["init"]).code, 0);
    let victim = outer.path().join("victim");
    std::fs::write(&victim, "precious bytes\n").unwrap();
    let index = root.join(".agentx/index");
    let _ = std::fs::remove_dir_all(&index);
    std::fs::create_dir(&index).unwrap();
    std::os::unix::fs::symlink("../../../victim", index.join(".gitignore")).unwrap();
    // The workspace is refused at launch, before any tool can touch it.
    let out = common::run_within(
        Duration::from_secs(10),
        [
            format!("--root={}", root.display()),
            "mcp".into(),
            "--agent=engineer".into(),
        ],
    );
    assert_ne!(out.code, 0, "{out:#?}");
    assert!(out.stderr.contains(".agentx/index/.gitignore"), "{out:#?}");
    assert!(out.stdout.is_empty(), "{out:#?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious bytes\n");
}

#[test]
fn no_reply_quotes_more_than_200_characters_of_its_input() {
    // The finding: megabytes of hostile input were echoed into errors (an unknown field's
    // name, a resource URI, a method name, an id).
    let dir = workspace();
    let mut mcp = Mcp::start(dir.path(), true);
    let big = "x".repeat(100_000);
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "clarify_ask",
            "arguments": {big.clone(): 1, "to": "architect", "topic": "t", "question": "q"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "clarify_ask",
            "arguments": {"to": big.clone(), "topic": "t", "question": "q"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "clarify_show",
            "arguments": {"id": big.clone()}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
            "params": {"uri": format!("agentx://{big}")}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": big.clone()}),
        json!({"jsonrpc": "2.0", "id": big.clone(), "method": "ping"}),
    ];
    for r in &requests {
        mcp.send(r);
        let v = mcp.next();
        let text = v.to_string();
        assert!(
            text.len() < 2_000,
            "a reply of {} bytes: {}",
            text.len(),
            &text[..300]
        );
        assert!(!text.contains(&"x".repeat(250)), "{}", &text[..300]);
    }
    mcp.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(mcp.reply(9)["result"], json!({}));
    assert_eq!(mcp.finish(), 0);
}
