//! # agentx-clarify-mcp
//!
//! `agentx mcp --agent <name> [--issue N] [--root DIR]`: the hub as a Model Context Protocol
//! server over stdio (docs/protocol.md §15), built on the official Rust SDK (`rmcp`). One server process
//! per agent; **the acting agent is fixed at launch**, so no tool input can make the server
//! act as another agent. Tools call the workspace through one seam ([`Hub`], built on the
//! process's workspace handle): the same store, settings, runner, locks and follow-up
//! monitor as the CLI.
//!
//! Stdout carries the protocol and nothing else; logs go to stderr (level from
//! `AGENTX_MCP_LOG`: error, warn — the default —, info, debug or trace).
#![deny(clippy::indexing_slicing)]
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod elicit;
mod eof;
mod errors;
#[cfg(feature = "http")]
pub mod http;
pub mod hub;
mod input;
pub mod lines;
mod listen;
mod log;
mod mrtr;
mod reply;
mod resources;
mod sealed;
mod server;
mod tasks;
mod tools;
mod wait;

use std::sync::Arc;

use agentx_clarify_core::names::{check_agent, is_reserved, parse_issue};
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::Workspace;
use rmcp::service::ServerInitializeError;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

pub use hub::{Feed, Hub};
pub use server::{Acting, Operator, Server};

/// Largest JSON-RPC message read from stdin. Ledger texts are at most 100 000 characters
/// (`max_body_chars`), a few hundred KB as escaped JSON; a longer line is dropped (and
/// logged) before it is buffered, so a client cannot make the server grow without bound.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Checks the launch options, then serves MCP on stdin/stdout until the client closes stdin.
/// Launch errors (`INVALID_AGENT`, `INVALID_ISSUE`, `IO_ERROR`) come back before any protocol
/// output, for the CLI to report; the exit status is 0 after a clean end of input, 1 when the
/// session failed (the reason is on stderr).
pub fn serve(
    ws: Arc<Workspace>,
    agent: &str,
    issue: Option<&str>,
    operator: Option<&str>,
) -> Result<i32, ClarifyError> {
    if let Some(o) = operator {
        check_agent(o)?;
    }
    let server = launch(ws, agent, issue)?.with_operator(operator);
    init_logging();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClarifyError::Io {
            message: format!("cannot start the MCP server's runtime: {e}"),
        })?;
    let outcome = runtime.block_on(async {
        let (read, write) = rmcp::transport::stdio_pipes();
        run(server, read, write).await
    });
    if let Err(why) = &outcome {
        tracing::error!("mcp session ended: {why}");
    }
    log::flush(std::time::Duration::from_millis(500));
    Ok(match outcome {
        Ok(()) => 0,
        Err(_) => 1,
    })
}

/// The server of `agent` on the workspace `ws`, after the launch checks: the core's
/// agent-name rule, and no reserved actor (`human`, `monitor`, `agent-x`) — an agent must not
/// be able to resolve escalations as the human through its tools.
pub fn launch(
    ws: Arc<Workspace>,
    agent: &str,
    issue: Option<&str>,
) -> Result<Server, ClarifyError> {
    check_agent(agent)?;
    if is_reserved(agent) {
        return Err(ClarifyError::InvalidAgent {
            name: agent.to_owned(),
            why: String::from("it is reserved for the hub (human, monitor, agent-x)"),
        });
    }
    let issue = issue.map(parse_issue).transpose()?;
    Ok(Server::new(Hub::new(ws), agent, issue))
}

/// Serves one MCP session over `read`/`write` until the client goes away. A client that
/// leaves before `initialize` is a clean end, not a failure.
pub async fn run<R, W>(server: Server, read: R, write: W) -> Result<(), String>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // Input lines that are not JSON are answered here (-32700), never passed to rmcp; its
    // replies and ours share one queue of whole lines (`lines`).
    let (tx, rx) = lines::channel();
    let pump = tokio::spawn(lines::pump(rx, write));
    let read = lines::JsonLines::new(read, tx.clone(), MAX_MESSAGE_BYTES);
    let read = eof::SignalEof::new(read, server.input_closed.clone());
    let transport = AsyncRwTransport::new_server(read, lines::LineSink::new(tx))
        .with_max_line_length(MAX_MESSAGE_BYTES);
    let outcome = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.to_string()),
    };
    // Every sender is gone with the transport: the pump writes what is queued, then ends —
    // within a few seconds, so a client that stopped reading stdout cannot hold the exit.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), pump).await;
    outcome
}

/// rmcp's logs (dropped oversized lines, transport errors) and ours, on stderr.
fn init_logging() {
    let level = match std::env::var("AGENTX_MCP_LOG").as_deref() {
        Ok("error") => tracing::Level::ERROR,
        Ok("info") => tracing::Level::INFO,
        Ok("debug") => tracing::Level::DEBUG,
        Ok("trace") => tracing::Level::TRACE,
        _ => tracing::Level::WARN,
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(log::Stderr::make)
        .with_max_level(level)
        .with_target(false)
        .try_init();
}
