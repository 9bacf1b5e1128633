//! A small A2A 1.0 JSON-RPC client over blocking reqwest: the agent card, `SendMessage`,
//! `GetTask`, `CancelTask`. The wire types are the official ones (`a2a-lf`); what is written
//! here is the envelope, the headers and the errors.

use std::time::Duration;

use a2a::{
    AgentCard, JsonRpcRequest, JsonRpcResponse, SendMessageResponse, Task, SVC_PARAM_VERSION,
    TRANSPORT_PROTOCOL_JSONRPC, VERSION,
};
use reqwest::blocking::Client as Http;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

/// Where an agent publishes its card, under its base URL.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// Longest response read (a card, a task): more is an error, not a hub out of memory.
const MAX_RESPONSE: usize = 4 << 20;

/// An A2A agent reached over JSON-RPC.
pub struct Client {
    http: Http,
    /// The JSON-RPC endpoint (from the card).
    endpoint: String,
    token: Option<String>,
    next_id: i64,
}

/// Why a call failed: one line for the run log and the escalation.
#[derive(Debug)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn http() -> Result<Http, CallError> {
    Http::builder()
        .connect_timeout(Duration::from_secs(10))
        // A redirect would take the request (and its bearer token) to wherever the agent
        // says: only the configured origin, or one `allow_card_origins` lists, is called.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| CallError(format!("no HTTP client: {e}")))
}

/// Reads a response body within [`MAX_RESPONSE`].
fn body(resp: reqwest::blocking::Response, what: &str) -> Result<Vec<u8>, CallError> {
    use std::io::Read;
    let status = resp.status();
    let mut bytes = Vec::new();
    resp.take(MAX_RESPONSE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CallError(format!("{what}: reading the response failed: {e}")))?;
    if bytes.len() > MAX_RESPONSE {
        return Err(CallError(format!("{what}: the response is over 4 MiB")));
    }
    if !status.is_success() {
        return Err(CallError(format!("{what}: HTTP {status}")));
    }
    Ok(bytes)
}

/// The card at `base` and the JSON-RPC endpoint it offers for A2A 1.0.
pub fn card(
    base: &str,
    token: Option<&str>,
    timeout: Duration,
) -> Result<(AgentCard, String), CallError> {
    let url = format!("{}{CARD_PATH}", base.trim_end_matches('/'));
    let mut req = http()?.get(&url).timeout(timeout);
    if let Some(t) = token {
        req = req.header(AUTHORIZATION, format!("Bearer {t}"));
    }
    let resp = req
        .send()
        .map_err(|e| CallError(format!("agent card {url}: {}", without_url(&e))))?;
    let bytes = body(resp, &format!("agent card {url}"))?;
    let card: AgentCard = serde_json::from_slice(&bytes)
        .map_err(|e| CallError(format!("agent card {url} is not an A2A 1.0 card: {e}")))?;
    let endpoint = card
        .supported_interfaces
        .iter()
        .find(|i| {
            i.protocol_binding
                .eq_ignore_ascii_case(TRANSPORT_PROTOCOL_JSONRPC)
                && i.protocol_version.starts_with("1.")
        })
        .map(|i| i.url.clone())
        .ok_or_else(|| {
            CallError(format!(
                "agent card {url} offers no JSONRPC interface of A2A 1.x"
            ))
        })?;
    Ok((card, endpoint))
}

/// The error's text without its URL (reqwest prints it; the base URL is in the run log
/// already, and a URL may carry a query the log should not repeat).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {cause}")
    }
}

impl Client {
    pub fn new(endpoint: String, token: Option<String>) -> Result<Client, CallError> {
        Ok(Client {
            http: http()?,
            endpoint,
            token,
            next_id: 0,
        })
    }

    /// One JSON-RPC call; the result, or the error the agent answered.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        self.next_id += 1;
        let request = JsonRpcRequest::new(self.next_id.into(), method, Some(params));
        let text = serde_json::to_vec(&request)
            .map_err(|e| CallError(format!("{method}: cannot encode the request: {e}")))?;
        let mut req = self
            .http
            .post(&self.endpoint)
            .timeout(timeout)
            .header(CONTENT_TYPE, "application/json")
            .header(SVC_PARAM_VERSION, VERSION)
            .body(text);
        if let Some(t) = &self.token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        let resp = req
            .send()
            .map_err(|e| CallError(format!("{method}: {}", without_url(&e))))?;
        let bytes = body(resp, method)?;
        let resp: JsonRpcResponse = serde_json::from_slice(&bytes)
            .map_err(|e| CallError(format!("{method}: not a JSON-RPC response: {e}")))?;
        if let Some(err) = resp.error {
            return Err(CallError(format!(
                "{method}: the agent answered error {}: {}",
                err.code, err.message
            )));
        }
        resp.result
            .ok_or_else(|| CallError(format!("{method}: a JSON-RPC response without a result")))
    }

    pub fn send(
        &mut self,
        request: &a2a::SendMessageRequest,
        timeout: Duration,
    ) -> Result<SendMessageResponse, CallError> {
        let params = serde_json::to_value(request)
            .map_err(|e| CallError(format!("SendMessage: cannot encode: {e}")))?;
        let result = self.call("SendMessage", params, timeout)?;
        serde_json::from_value(result)
            .map_err(|e| CallError(format!("SendMessage: not a task or message: {e}")))
    }

    pub fn get_task(&mut self, id: &str, timeout: Duration) -> Result<Task, CallError> {
        let result = self.call("GetTask", json!({"id": id}), timeout)?;
        serde_json::from_value(result).map_err(|e| CallError(format!("GetTask: not a task: {e}")))
    }

    pub fn cancel_task(&mut self, id: &str, timeout: Duration) -> Result<Task, CallError> {
        let result = self.call("CancelTask", json!({"id": id}), timeout)?;
        serde_json::from_value(result)
            .map_err(|e| CallError(format!("CancelTask: not a task: {e}")))
    }
}
