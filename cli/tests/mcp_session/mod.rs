//! `/mcp` of a real `agentx serve` spoken with raw HTTP (JSON-RPC POSTs, the answer read from
//! the event stream), shared by the files and PostgreSQL tests of MCP over HTTP.
#![allow(dead_code)]

use serde_json::{json, Value};

use crate::serve_http::{Reply, Server};

/// One MCP session of an agent token.
pub struct Session<'a> {
    pub server: &'a Server,
    pub token: String,
    pub id: String,
    next: u64,
}

/// The JSON-RPC messages of a reply (an event stream's `data:` lines, or a JSON body).
pub fn messages(reply: &Reply) -> Vec<Value> {
    reply
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .chain(std::iter::once(reply.body.as_str()))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(|v| v.get("jsonrpc").is_some())
        .collect()
}

pub fn post(server: &Server, token: Option<&str>, session: Option<&str>, body: &Value) -> Reply {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b));
    }
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
    }
    server.send("POST", "/mcp", &headers, body.to_string().as_bytes())
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rust-test","version":"1"}}}"#;

impl<'a> Session<'a> {
    /// `initialize` and `notifications/initialized` with `token`.
    pub fn open(server: &'a Server, token: &str) -> Session<'a> {
        let init: Value = serde_json::from_str(INITIALIZE).unwrap();
        let r = post(server, Some(token), None, &init);
        assert_eq!(r.status, 200, "{r:?}");
        let id = r.header("mcp-session-id").expect("a session id").to_owned();
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = post(server, Some(token), Some(&id), &done);
        assert!(r.status < 300, "{r:?}");
        Session {
            server,
            token: token.to_owned(),
            id,
            next: 1,
        }
    }

    /// `tools/call` of `name`: the HTTP reply and the call's result (`None` when refused).
    pub fn call(&mut self, name: &str, arguments: Value) -> (Reply, Option<Value>) {
        self.next += 1;
        let id = self.next;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let r = post(self.server, Some(&self.token), Some(&self.id), &body);
        let result = messages(&r)
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .map(|m| m["result"].clone());
        (r, result)
    }
}
