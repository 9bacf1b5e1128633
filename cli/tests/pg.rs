//! The `agentx` binary with its state in PostgreSQL (a real server, `agentx_clarify_tests::pg`):
//! many processes asking on one issue (no lost update, no duplicate id), `store init|export|
//! import` end to end, the choice of store (`AGENTX_STORE` over `[store] url`), a server that
//! is not there, and the MCP server (`agentx mcp`) asking and waiting through the database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::fresh_database;
use common::*;
use serde_json::{json, Value};

const PROCESSES: usize = 8;
const ASKS_PER_PROCESS: usize = 50;

/// An initialised workspace whose config names a fresh database, with the schema created by
/// `agentx store init`.
fn pg_workspace(prefix: &str) -> (tempfile::TempDir, String) {
    let url = fresh_database(prefix);
    let dir = workspace();
    std::fs::write(
        dir.path().join(".agentx/config.toml"),
        format!("[clarify]\nlock_timeout_ms = 30000\n\n[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let out = json_in(dir.path(), &["store", "init"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json()["schema"]["to"],
        agentx_clarify_pg::schema::VERSION
    );
    (dir, url)
}

fn show_ids(root: &Path, issue: u32) -> Vec<String> {
    let out = json_in(root, &["clarify", "show", "--issue", &issue.to_string()]);
    assert_eq!(out.code, 0, "{out:#?}");
    ledger_ids(&out.json()["ledger"])
}

#[test]
fn eight_processes_fifty_asks_each_on_one_issue() {
    let (dir, _) = pg_workspace("cli_storm");
    let root = dir.path();
    let started = Instant::now();
    let runs: Vec<(Out, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..PROCESSES)
            .map(|p| {
                s.spawn(move || {
                    (0..ASKS_PER_PROCESS)
                        .map(|i| {
                            let args = ask_args(
                                1,
                                &format!("writer {p} topic {i}"),
                                &format!("question {i} of writer {p}?"),
                            );
                            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                            let t = Instant::now();
                            let out = json_at(root, T0, &refs);
                            (out, t.elapsed())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let wall = started.elapsed();
    let mut reported = BTreeSet::new();
    for (out, _) in &runs {
        assert_eq!(out.code, 0, "{out:#?}");
        reported.insert(
            out.json()["clarification"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let total = PROCESSES * ASKS_PER_PROCESS;
    assert_eq!(reported.len(), total, "an id was handed out twice");
    let ids = show_ids(root, 1);
    let want: Vec<String> = (1..=total).map(|n| format!("CLR-1-{n:03}")).collect();
    assert_eq!(ids, want, "every ask is in the ledger, ids dense");
    let verify = json_in(root, &["clarify", "verify"]);
    assert_eq!(verify.code, 0, "{verify:#?}");
    assert_eq!(verify.json()["problems"], json!([]));
    assert!(
        !clarifications_dir(root).join("issue-1.json").exists(),
        "the state is in the database, not in files"
    );
    let mut t: Vec<Duration> = runs.iter().map(|(_, d)| *d).collect();
    t.sort();
    println!(
        "postgres: {PROCESSES} processes x {ASKS_PER_PROCESS} asks on one issue: {total} records, wall {wall:.2?}, p50 {:.0?}, p99 {:.0?}",
        t[t.len() / 2],
        t[(t.len() - 1) * 99 / 100]
    );
}

#[test]
fn store_export_and_import_round_trip_through_the_binary() {
    let files = workspace();
    let src = files.path();
    for (issue, n) in [(3, 0), (3, 1), (17, 0)] {
        let args = ask_args(issue, &format!("topic {n}"), &format!("question {n}?"));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(json_at(src, T0, &refs).code, 0);
    }
    assert_eq!(
        json_at(src, T0, &["hook", "start", "engineer", "3"]).code,
        0
    );
    let url = fresh_database("cli_transfer");
    let with_db = |args: &[&str]| {
        let mut all = vec![root_arg(src), "--json".to_owned()];
        all.extend(args.iter().map(|s| (*s).to_owned()));
        Out::from_output(
            &agentx()
                .env("AGENTX_STORE", &url)
                .args(all)
                .output()
                .unwrap(),
        )
    };
    assert_eq!(with_db(&["store", "init"]).code, 0);
    let imported = with_db(&["store", "import", &src.display().to_string()]);
    assert_eq!(imported.code, 0, "{imported:#?}");
    assert_eq!(imported.json()["added"], 3, "two ledgers and the statuses");
    let again = with_db(&["store", "import", &src.display().to_string()]);
    assert_eq!(again.json()["unchanged"], 3, "idempotent");
    // The same answers from the database as from the files.
    for args in [
        &["clarify", "list", "--all"][..],
        &["clarify", "verify"][..],
        &["state"][..],
    ] {
        assert_eq!(with_db(args).json(), json_in(src, args).json(), "{args:?}");
    }
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("export");
    let exported = with_db(&["store", "export", &dest.display().to_string()]);
    assert_eq!(exported.code, 0, "{exported:#?}");
    assert_eq!(exported.json()["documents"], 3);
    for rel in [
        ".agentx/state/clarifications/issue-3.json",
        ".agentx/state/clarifications/issue-17.json",
        ".agentx/state/agent-status.json",
        ".agentx/config.toml",
        ".agentx/workflows/feature.toml",
    ] {
        assert_eq!(
            std::fs::read(src.join(rel)).unwrap(),
            std::fs::read(dest.join(rel)).unwrap(),
            "{rel}"
        );
    }
    let verify = json_in(&dest, &["clarify", "verify"]);
    assert_eq!(verify.json()["problems"], json!([]));
    // Into a file store, import is refused: it fills a database.
    let refused = json_in(src, &["store", "import", &dest.display().to_string()]);
    assert_eq!(refused.code, 3, "{refused:#?}");
}

#[test]
fn the_variable_wins_over_the_config() {
    let dir = workspace();
    let root = dir.path();
    let nowhere = root.join("no-server");
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[store]\nurl = \"postgres://agentx@/agentx?host={}&port=5432\"\n",
            nowhere.display()
        ),
    )
    .unwrap();
    let args = ask_args(5, "t", "q?");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // The config names a server that is not there: an I/O failure that says to retry later.
    let down = json_at(root, T0, &refs);
    assert_eq!(down.code, 1, "{down:#?}");
    assert_eq!(down.code_str(), "IO_ERROR");
    assert!(
        down.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("retry"),
        "{down:#?}"
    );
    assert!(!clarifications_dir(root).join("issue-5.json").exists());
    // AGENTX_STORE=file points this checkout at its files instead.
    let mut all = vec![root_arg(root), "--json".to_owned(), format!("--now={T0}")];
    all.extend(args.iter().cloned());
    let files = Out::from_output(
        &agentx()
            .env("AGENTX_STORE", "file")
            .args(&all)
            .output()
            .unwrap(),
    );
    assert_eq!(files.code, 0, "{files:#?}");
    assert!(clarifications_dir(root).join("issue-5.json").exists());
    let bad = Out::from_output(
        &agentx()
            .env("AGENTX_STORE", "mysql://u:pw@h/db")
            .args(&all)
            .output()
            .unwrap(),
    );
    assert_eq!(bad.code, 3, "{bad:#?}");
    assert!(!bad.stdout.contains("pw@"), "a password is never echoed");
}

/// One MCP session over the binary's stdio (newline-delimited JSON-RPC).
struct Mcp {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(root: &Path) -> Mcp {
        let mut child = agentx()
            .args([
                &root_arg(root),
                "mcp",
                "--agent",
                "engineer",
                "--issue",
                "8",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
        mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "pg-test", "version": "1"}
            }),
        );
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, v: Value) {
        writeln!(self.input, "{v}").unwrap();
        self.input.flush().unwrap();
    }

    /// Sends a request and returns its result (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        result["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_mcp_server_asks_and_waits_through_the_database() {
    let (dir, _) = pg_workspace("cli_mcp");
    let root = dir.path().to_path_buf();
    let mut mcp = Mcp::start(&root);
    let asked = mcp.tool(
        "clarify_ask",
        json!({"to": "architect", "topic": "Cache", "question": "Redis or LRU?", "blocking": false}),
    );
    assert_eq!(asked["clarification"]["id"], "CLR-8-001", "{asked}");
    assert_eq!(
        show_ids(&root, 8),
        vec!["CLR-8-001"],
        "the ask is in the database"
    );
    // Another process answers while the tool waits: the wait sees it through the store.
    let answerer = {
        let root = root.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            json_in(
                &root,
                &[
                    "clarify",
                    "answer",
                    "--from",
                    "architect",
                    "--body",
                    "Redis.",
                    "CLR-8-001",
                ],
            )
        })
    };
    let started = Instant::now();
    let waited = mcp.tool(
        "clarify_wait",
        json!({"id": "CLR-8-001", "timeoutSeconds": 30}),
    );
    assert_eq!(answerer.join().unwrap().code, 0);
    assert_eq!(waited["status"], "answered", "{waited}");
    assert_eq!(waited["answer"], "Redis.");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the wait noticed the answer"
    );
}
