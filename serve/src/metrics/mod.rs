//! `/metrics` (docs/protocol.md §23.2): the series operators scrape, in the text format of
//! the Prometheus project's own client (`prometheus-client`). Requests are counted where they
//! pass (`observe.rs`); the store's figures come from the ledgers the inbox's view reads
//! (`tally.rs`) and from the outbox at scrape time (`scrape.rs`); who may read them is
//! `settings.rs`.

pub mod scrape;
pub mod settings;
pub mod tally;

use std::sync::atomic::{AtomicI64, Ordering};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// A label set: `(name, value)` pairs.
pub type Labels = Vec<(&'static str, String)>;

/// The request latency buckets, in seconds: 1 ms to about 16 s (a routed call or a wait).
fn latency_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(0.001, 2.0, 15)
}

fn latency_histogram() -> Histogram {
    Histogram::new(latency_buckets())
}

/// The series this process keeps (requests), and what the store's series are built from.
pub struct Metrics {
    registry: Registry,
    requests: Family<Labels, Counter>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
    /// Figures of the ledgers, kept by the inbox's view as it reads them.
    pub tallies: tally::Tallies,
    /// When the change feed last heard from the store (epoch ms; 0: not yet).
    feed_heard_ms: AtomicI64,
}

impl Default for Metrics {
    fn default() -> Self {
        let requests = Family::<Labels, Counter>::default();
        let latency =
            Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        let mut registry = Registry::with_prefix("agentx");
        registry.register(
            "http_requests",
            "HTTP requests answered, by route template, method and status",
            requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time to each response's head, by route template (a stream's life is not counted)",
            prometheus_client::registry::Unit::Seconds,
            latency.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            tallies: tally::Tallies::default(),
            feed_heard_ms: AtomicI64::new(0),
        }
    }
}

impl Metrics {
    /// One request answered: `route` is its template (`/clarifications/{id}`), never its path.
    pub fn request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&vec![
                ("route", route.to_owned()),
                ("method", method.to_owned()),
                ("status", status.to_string()),
            ])
            .inc();
        self.latency
            .get_or_create(&vec![("route", route.to_owned())])
            .observe(seconds);
    }

    /// The change feed looked at the store and it answered.
    pub fn feed_heard(&self, now_ms: i64) {
        self.feed_heard_ms.store(now_ms, Ordering::SeqCst);
    }

    fn feed_heard_ms(&self) -> i64 {
        self.feed_heard_ms.load(Ordering::SeqCst)
    }
}

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
