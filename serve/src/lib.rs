//! # agentx-clarify-serve
//!
//! `agentx serve` (docs/protocol.md §23): the hub as an HTTP service on the store every command uses — a
//! web inbox where people answer escalations, `/api/v1/call` (the command layer's JSON
//! envelope), live updates over server-sent events, and the worker that runs the monitor at
//! the core's next wake-up. The core and the command layer stay free of all of this: every
//! request ends in one call of the command layer, as a CLI command does.
//!
//! Each later surface (MCP over HTTP §24, A2A §27) is one more router merged in
//! [`router::router`].
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// From the top down: `router` assembles the routes (`pages`, `api`, `events`, `auth`, `ready`,
// `mcp_http`, `a2a`, `assets`) behind `security`; the tasks (`feed`, `open_follow`, `worker`)
// keep the state current; all of them share `hub::App`, which holds what sits below it
// (`sessions`, `tokens`, `open`); `html`, `log` and `backoff` are leaves. No module imports one above it.
mod a2a;
mod answer_view;
mod answers;
mod api;
mod assets;
mod auth;
mod backoff;
mod conns;
mod duty;
mod events;
mod exposed;
mod feed;
mod html;
mod hub;
mod limits;
pub mod links;
mod log;
mod mcp_http;
mod memory;
mod metrics;
mod next;
mod observe;
mod open;
mod open_follow;
mod pages;
mod ready;
mod router;
mod security;
mod sessions;
mod slack;
mod status;
mod test_hooks;
pub mod tokens;
mod worker;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentx_clarify_core::error::shown;
use agentx_clarify_core::ClarifyError;

/// How `agentx serve` was started.
#[derive(Clone, Debug)]
pub struct Options {
    pub root: PathBuf,
    pub listen: String,
    pub public_url: Option<String>,
    /// The person the start-up login link acts as.
    pub as_name: String,
    pub tls: Option<(PathBuf, PathBuf)>,
    pub behind_proxy: bool,
    pub no_worker: bool,
    /// `--log-format json`: one JSON object per log line (docs/protocol.md §23.3).
    pub json_log: bool,
    /// Gives what the allocator holds freed on the calling thread back to the system: the
    /// binary's allocator's call (`memory.rs` says when the server makes it); `None` leaves
    /// the allocator to itself.
    pub give_back: Option<fn()>,
}

/// How long shutdown waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A refusal to start (exit 2), printed by the caller.
#[derive(Debug)]
pub struct Refused(pub String);

/// Checks the options; the address to bind and whether the page is served over https.
pub fn check(opts: &Options) -> Result<(SocketAddr, bool), Refused> {
    let addr: SocketAddr = opts.listen.parse().map_err(|_| {
        Refused(format!(
            "--listen '{}' is not HOST:PORT with an IP address (e.g. 127.0.0.1:7700)",
            shown(&opts.listen)
        ))
    })?;
    if opts.tls.is_some() && opts.behind_proxy {
        return Err(Refused(
            "give --tls-cert/--tls-key or --behind-proxy, not both".into(),
        ));
    }
    if opts.behind_proxy {
        match &opts.public_url {
            Some(url) if url.starts_with("https://") => {}
            _ => {
                return Err(Refused(
                    "--behind-proxy needs an https --public-url (the address people open)".into(),
                ))
            }
        }
    }
    if !addr.ip().is_loopback() && opts.tls.is_none() && !opts.behind_proxy {
        return Err(Refused(format!(
            "refusing to listen on {addr} without TLS: a non-loopback address needs --tls-cert and --tls-key, or --behind-proxy with an https --public-url"
        )));
    }
    if check_name(&opts.as_name).is_err() || agentx_clarify_core::names::is_reserved(&opts.as_name)
    {
        return Err(Refused(format!(
            "--as '{}' is not a valid name, or is one of the hub's own (human, monitor, agent-x)",
            shown(&opts.as_name)
        )));
    }
    Ok((addr, opts.tls.is_some() || opts.behind_proxy))
}

fn check_name(name: &str) -> Result<(), ClarifyError> {
    agentx_clarify_core::names::check_agent(name)
}

/// Runs the server until SIGINT or SIGTERM. Returns the exit status: 0 after a clean
/// shutdown, 2 when the options are refused (the reason on stderr).
pub fn run(opts: Options) -> Result<i32, ClarifyError> {
    log::set_json(opts.json_log);
    let (addr, https) = match check(&opts) {
        Ok(v) => v,
        Err(Refused(why)) => {
            eprintln!("error: {why}");
            return Ok(2);
        }
    };
    let io = |what: &str, e: std::io::Error| ClarifyError::Io {
        message: format!("{what}: {e}"),
    };
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| io(&format!("cannot listen on {addr}"), e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| io("cannot set up the listener", e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| io("cannot read the listen address", e))?;
    // Before the runtime: opening the store (a PostgreSQL connection) blocks, and the
    // synchronous PostgreSQL client must not run on the async threads. The workspace is
    // opened once, here, with the hub's runner (A2A agents and processes, as the CLI's).
    let ws = Arc::new(agentx_clarify_a2a::open_workspace_watching(&opts.root)?);
    // `[serve] metrics*` from the bytes the handle read (the settings file is read once).
    let env = |name: &str| std::env::var(name).ok();
    let metrics = match metrics::settings::read(ws.current().files.settings().bytes(), env) {
        Ok(m) => m,
        Err(Refused(why)) => {
            eprintln!("error: {why}");
            return Ok(2);
        }
    };
    let metrics_listener = match metrics.listen {
        Some(at) => {
            Some(exposed::listen(at).map_err(|e| io(&format!("cannot listen on {at}"), e))?)
        }
        None => None,
    };
    let state = Arc::new(hub::App::new(ws, opts.public_url.as_deref(), bound, https)?);
    if let Some(give_back) = opts.give_back {
        memory::install(give_back);
    }
    // A worker about to park and any thread about to end give back what they freed: the
    // allocator would otherwise keep it until that thread allocates again (`memory.rs`). A
    // blocking thread idle for a second ends (tokio's default is 10 s): what other threads
    // freed into it — the envelope it built, dropped by the worker that sent it — comes back
    // at its end, and under load the threads stay busy and are reused all the same.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_keep_alive(memory::IDLE_THREAD_ENDS)
        .on_thread_park(memory::now_and_then)
        .on_thread_stop(memory::at_thread_end)
        .enable_all()
        .build()
        .map_err(|e| ClarifyError::Io {
            message: format!("cannot start the server's runtime: {e}"),
        })?;
    let face = exposed::Exposed {
        settings: metrics,
        listener: metrics_listener,
        worker: !opts.no_worker,
    };
    let code = runtime.block_on(serve(
        opts,
        listener,
        bound,
        https,
        Arc::clone(&state),
        face,
    ));
    // Store calls still running on the blocking pool get the rest of the grace period; a
    // task the runtime drops never holds the last reference to the state, so its store —
    // PostgreSQL connections, whose synchronous client blocks as it closes and must not be
    // dropped on an async thread — is closed here, outside the runtime.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    drop(state);
    code
}

async fn serve(
    opts: Options,
    listener: std::net::TcpListener,
    bound: SocketAddr,
    https: bool,
    state: Arc<hub::App>,
    metrics: exposed::Exposed,
) -> Result<i32, ClarifyError> {
    let io = |what: &str, e: std::io::Error| ClarifyError::Io {
        message: format!("{what}: {e}"),
    };
    let handle = axum_server::Handle::new();
    let extra = metrics.start(&state, &handle);

    // The change feed, the live pages and the worker all stop on the signal.
    let (to_view, view_changes) = tokio::sync::mpsc::unbounded_channel();
    feed::start(Arc::clone(&state), to_view);
    open_follow::start(Arc::clone(&state), view_changes);
    if !opts.no_worker {
        worker::start(Arc::clone(&state));
        worker::start_notify(Arc::clone(&state));
        worker::start_github(Arc::clone(&state));
    }
    {
        let state = Arc::clone(&state);
        let handle = handle.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            log::line("shutting down: ending event streams, finishing requests in flight");
            state.shutdown.send_replace(true);
            handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
        });
    }

    let code = state.login.issue(&opts.as_name);
    let base = state.inbox_url();
    // The listen address first (what programs and SDK clients use), then the inbox's own
    // name when it has one (what a browser opens).
    let inbox = if state.inbox_host.is_some() {
        format!("; its inbox at {base}/")
    } else {
        String::new()
    };
    println!(
        "agentx serve: the hub of {} is at {}/{inbox}",
        opts.root.display(),
        state.base_url()
    );
    println!(
        "open this link to sign in as '{}' (once, within 10 minutes):",
        opts.as_name
    );
    println!("{base}/login?once={code}");
    log::line(&format!(
        "listening on {bound}{}{}",
        if https { " (https)" } else { "" },
        if opts.no_worker { ", worker off" } else { "" }
    ));

    // Connections that never send a request must not take every descriptor (issue 48): the
    // soft open-file limit up to the hard one, and the connections capped below it.
    let open_files = agentx_clarify_runner::raise_open_files().unwrap_or(1024);
    let caps = conns::Caps::for_limit(open_files, opts.behind_proxy);
    log::line(&format!(
        "open files: {open_files}; connections held at most: {} ({} per client address; the oldest idle one is closed past it)",
        caps.total, caps.per_address
    ));
    let conns = conns::Conns::new(caps);
    let acceptor = conns::Acceptor {
        conns: Arc::clone(&conns),
    };
    let router = router::router(Arc::clone(&state), extra)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            observe::observe,
        ))
        .layer(axum::middleware::from_fn_with_state(conns, conns::track));
    let service = router.into_make_service_with_connect_info::<SocketAddr>();
    let served = serve_on(listener, opts.tls.as_ref(), acceptor, handle, service).await?;
    served.map_err(|e| io("the server stopped", e))?;
    log::line("stopped");
    Ok(0)
}

/// Serves `service` on `listener` until the handle shuts it down: over TLS with `tls`'s
/// certificate and key, else plain. `Err` when it could not start; the serving's own end
/// (`Ok(result)`) otherwise.
async fn serve_on(
    listener: std::net::TcpListener,
    tls: Option<&(PathBuf, PathBuf)>,
    acceptor: conns::Acceptor,
    handle: axum_server::Handle<SocketAddr>,
    service: axum::extract::connect_info::IntoMakeServiceWithConnectInfo<axum::Router, SocketAddr>,
) -> Result<std::io::Result<()>, ClarifyError> {
    let io = |what: &str, e: std::io::Error| ClarifyError::Io {
        message: format!("{what}: {e}"),
    };
    Ok(match tls {
        Some((cert, key)) => {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let config = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, key)
                .await
                .map_err(|e| io("cannot load the TLS certificate and key", e))?;
            // TCP_NODELAY: a response written in pieces (MCP's event streams) must not wait
            // for the client's delayed ACK (Nagle: +40 ms a call).
            let tls = axum_server::tls_rustls::RustlsAcceptor::new(config).acceptor(acceptor);
            let mut server = axum_server::from_tcp(listener)
                .map_err(|e| io("cannot serve on the listener", e))?
                .acceptor(tls)
                .handle(handle);
            slow_clients(server.http_builder());
            server.serve(service).await
        }
        None => {
            let mut server = axum_server::from_tcp(listener)
                .map_err(|e| io("cannot serve on the listener", e))?
                .acceptor(acceptor)
                .handle(handle);
            slow_clients(server.http_builder());
            server.serve(service).await
        }
    })
}

/// A client that sends its headers slower than this is dropped (slowloris).
fn slow_clients(
    builder: &mut hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
) {
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10));
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
