//! Serving `/metrics` (docs/protocol.md §23.2): on the main listener behind the metrics token,
//! or on a listener of its own. The series are `crate::metrics`'s; this module is the face
//! that needs the hub (`scrape.rs` reads the outbox and the view at scrape time).

pub mod scrape;

use crate::metrics::settings;

/// How `/metrics` is exposed: the settings, and the listener of its own when they name one
/// (bound before the runtime starts, as the main one is).
pub struct Exposed {
    pub settings: settings::MetricsSettings,
    pub listener: Option<std::net::TcpListener>,
    pub worker: bool,
}

/// Binds the metrics listener of its own.
pub fn listen(at: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let l = std::net::TcpListener::bind(at)?;
    l.set_nonblocking(true)?;
    Ok(l)
}

impl Exposed {
    /// Starts the metrics listener when there is one; the routes the main listener adds
    /// (`/metrics` there, behind its token, when there is no listener of its own).
    pub fn start(
        self,
        app: &std::sync::Arc<crate::hub::App>,
        handle: &axum_server::Handle<std::net::SocketAddr>,
    ) -> axum::Router<std::sync::Arc<crate::hub::App>> {
        use axum::routing::get;
        if !self.settings.on {
            return axum::Router::new();
        }
        let face = std::sync::Arc::new(scrape::Face {
            token: self.settings.token.clone(),
            worker: self.worker,
        });
        let routes = axum::Router::new()
            .route("/metrics", get(scrape::scrape))
            .layer(axum::Extension(face));
        let Some(listener) = self.listener else {
            crate::log::line("metrics: /metrics on this listener, for the metrics token only");
            return routes;
        };
        let at = listener
            .local_addr()
            .map_or_else(|_| String::from("?"), |a| a.to_string());
        // Without a token the listener is loopback (settings.rs): only this machine's names
        // are answered, so a web page cannot read it through DNS rebinding.
        let hosts: std::sync::Arc<Vec<String>> = std::sync::Arc::new(match &self.settings.token {
            Some(_) => Vec::new(),
            None => {
                let port = at.rsplit(':').next().unwrap_or_default();
                vec![
                    at.clone(),
                    format!("localhost:{port}"),
                    format!("127.0.0.1:{port}"),
                    format!("[::1]:{port}"),
                ]
            }
        });
        let own = routes
            .layer(axum::middleware::from_fn_with_state(hosts, own_host))
            .with_state(std::sync::Arc::clone(app));
        crate::log::line(&format!(
            "metrics: /metrics on {at}{}",
            if self.settings.token.is_some() {
                ", for the metrics token only"
            } else {
                " (loopback)"
            }
        ));
        let handle = handle.clone();
        tokio::spawn(async move {
            let served = match axum_server::from_tcp(listener) {
                Ok(server) => server.handle(handle).serve(own.into_make_service()).await,
                Err(e) => Err(e),
            };
            if let Err(e) = served {
                crate::log::line(&format!("metrics: the listener stopped: {e}"));
            }
        });
        axum::Router::new()
    }
}

/// The metrics listener's `Host` check (none when a token closes it).
async fn own_host(
    axum::extract::State(hosts): axum::extract::State<std::sync::Arc<Vec<String>>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let host = request
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase);
    if hosts.is_empty() || host.is_some_and(|h| hosts.contains(&h)) {
        return next.run(request).await;
    }
    crate::security::refusal(
        axum::http::StatusCode::MISDIRECTED_REQUEST,
        "MISDIRECTED",
        "this server does not answer for that Host",
    )
}
