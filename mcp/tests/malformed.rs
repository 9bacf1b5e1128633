//! Malformed JSON-RPC on the server's input: random bytes, random JSON, real methods with
//! wrong shapes, with or without a handshake first. Whatever arrives, the server does not
//! panic, writes only JSON-RPC messages, and either still answers a ping afterwards or has
//! ended its session (an error on stderr, a clean end of input).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentx_clarify_workspace::Workspace;
use proptest::prelude::*;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
];

const TOOLS: &[&str] = &[
    "clarify_ask",
    "clarify_wait",
    "clarify_inbox",
    "clarify_answer",
    "clarify_follow_up",
    "clarify_resolve",
    "clarify_escalate",
    "clarify_abandon",
    "clarify_show",
    "clarify_list",
    "clarify_search",
    "clarify_ready",
    "clarify_monitor",
    "no_such_tool",
];

/// One initialised workspace for every case (the cases only read it or fail validation).
fn root() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let now = agentx_clarify_store::clock::system_now_ms();
        let disk = agentx_clarify_store::DiskStore::new(dir.path());
        let out = agentx_clarify_command::call(&disk, "init", &json!({}), now);
        assert_eq!(out["ok"], true, "{out}");
        dir
    })
    .path()
}

/// The workspace handle a server is built on, as `agentx mcp` opens it.
fn workspace() -> Arc<Workspace> {
    let root = root();
    let runner = agentx_clarify_runner::ProcessRunner::new(root);
    Arc::new(Workspace::open_watching(root, runner).unwrap())
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "proptest", "version": "1"}}})
    .to_string()
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "CLR-1-001",
            "agentx://issues/1",
            "engineer",
            "pending"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "id",
                    "issue",
                    "to",
                    "topic",
                    "question",
                    "uri",
                    "name",
                    "arguments",
                    "all",
                    "status",
                    "timeoutSeconds",
                    "dryRun",
                    "x",
                ]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

/// A line that is JSON-RPC in spirit and wrong in some way (or, sometimes, right).
fn rpc_line() -> impl Strategy<Value = String> {
    let id = prop_oneof![
        Just(None),
        any::<i32>().prop_map(|n| Some(json!(n))),
        "[a-z]{1,4}".prop_map(|s| Some(json!(s))),
        Just(Some(Value::Null)),
        any_json().prop_map(Some),
    ];
    let version = prop::sample::select(vec![Some("2.0"), Some("1.0"), None]);
    let method = prop_oneof![
        prop::sample::select(METHODS.to_vec()).prop_map(str::to_owned),
        ".{0,10}",
    ];
    let params = prop_oneof![
        any_json(),
        (prop::sample::select(TOOLS.to_vec()), any_json())
            .prop_map(|(name, arguments)| json!({"name": name, "arguments": arguments})),
    ];
    (version, id, method, proptest::option::of(params)).prop_map(|(v, id, method, params)| {
        let mut m = serde_json::Map::new();
        if let Some(v) = v {
            m.insert("jsonrpc".into(), json!(v));
        }
        if let Some(id) = id {
            m.insert("id".into(), id);
        }
        m.insert("method".into(), json!(method));
        if let Some(p) = params {
            m.insert("params".into(), p);
        }
        Value::Object(m).to_string()
    })
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        // Arbitrary bytes (no newline inside), made into text the way a pipe would carry it.
        prop::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            0..80
        )
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        any_json().prop_map(|v| v.to_string()),
        rpc_line(),
    ]
}

/// Feeds `lines` (then a ping) to a fresh server; returns what it wrote and how it ended.
async fn session(lines: Vec<String>) -> (Vec<Value>, bool, Result<(), String>) {
    let server = agentx_clarify_mcp::launch(workspace(), "engineer", None).unwrap();
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let running = tokio::spawn(agentx_clarify_mcp::run(server, read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let writer = tokio::spawn(async move {
        for l in lines {
            if client_write
                .write_all(format!("{l}\n").as_bytes())
                .await
                .is_err()
            {
                return None;
            }
        }
        let ping = json!({"jsonrpc": "2.0", "id": "final-ping", "method": "ping"});
        let _ = client_write.write_all(format!("{ping}\n").as_bytes()).await;
        Some(client_write)
    });
    let mut out = Vec::new();
    let mut answered = false;
    let mut reader = BufReader::new(client_read).lines();
    let read_all = async {
        while let Ok(Some(l)) = reader.next_line().await {
            let v: Value =
                serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"));
            if v["id"] == "final-ping" && v.get("method").is_none() {
                answered = true;
                out.push(v);
                break;
            }
            out.push(v);
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read_all)
        .await
        .expect("the server neither answered the ping nor closed its output");
    // End of input: the session ends, cleanly.
    if let Some(mut w) = writer.await.expect("writer task") {
        let _ = w.shutdown().await;
    }
    let ended = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the server did not end after the end of its input")
        .expect("the server panicked");
    (out, answered, ended)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn malformed_lines_never_panic_and_get_an_error_or_a_clean_end(
        handshake in any::<bool>(),
        lines in prop::collection::vec(line(), 0..10),
    ) {
        let mut all = Vec::new();
        if handshake {
            all.push(initialize());
            all.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        }
        all.extend(lines);
        let (out, answered, ended) = runtime().block_on(session(all));
        for m in &out {
            prop_assert_eq!(&m["jsonrpc"], "2.0", "not a JSON-RPC message: {}", m);
        }
        // Alive: the ping was answered. Ended: only a failed handshake may end it early,
        // and that ends with the reason (for stderr), not a panic.
        if !answered {
            prop_assert!(!handshake, "an initialised session stopped answering: {:?}", out);
            prop_assert!(ended.is_err_and(|why| !why.is_empty()));
        }
    }
}

#[test]
fn an_oversized_message_is_dropped_and_the_session_goes_on() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(agentx_clarify_mcp::MAX_MESSAGE_BYTES + 1)
    );
    let (out, answered, ended) = runtime().block_on(session(vec![initialize(), big]));
    assert!(answered, "{out:?}");
    assert!(out.iter().all(|m| m["id"] != "big"));
    assert_eq!(ended, Ok(()));
}

#[test]
fn a_wrong_shape_gets_invalid_request_and_a_bad_tool_argument_an_error_result() {
    let lines = vec![
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "oops"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "clarify_show", "arguments": {"id": 42}}})
        .to_string(),
    ];
    let (out, answered, _) = runtime().block_on(session(lines));
    assert!(answered);
    assert!(out.iter().any(|m| m["error"]["code"] == -32600), "{out:?}");
    let result = out.iter().find(|m| m["id"] == 2).expect("an answer to 2");
    assert_eq!(result["result"]["isError"], true);
    assert_eq!(
        result["result"]["structuredContent"]["code"],
        "INVALID_INPUT"
    );
}
