//! `/metrics` (docs/protocol.md §23.2): the series operators scrape, in the text format of
//! the Prometheus project's own client (`prometheus-client`). Requests are counted where they
//! pass (`observe.rs`); the store's figures come from the ledgers the inbox's view reads
//! (`tally.rs`) and from the outbox at scrape time (`crate::exposed::scrape`); who may read
//! them is `settings.rs`. This module keeps the series only; serving them is `crate::exposed`'s,
//! so the hub holds the series without the series knowing the hub.

pub mod settings;
pub mod tally;

use std::sync::atomic::{AtomicI64, Ordering};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
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
    pub(crate) registry: Registry,
    requests: Family<Labels, Counter>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
    /// Figures of the ledgers, kept by the inbox's view as it reads them.
    pub tallies: tally::Tallies,
    /// When the change feed last heard from the store (epoch ms; 0: not yet).
    feed_heard_ms: AtomicI64,
    /// The `/mcp` sessions this replica keeps (set by their book, `mcp_http/sessions.rs`).
    pub mcp_sessions: Gauge,
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
        let mcp_sessions = Gauge::default();
        registry.register(
            "mcp_sessions",
            "Streamable HTTP MCP sessions this replica keeps (capped per agent token, idle ones expire)",
            mcp_sessions.clone(),
        );
        Metrics {
            registry,
            mcp_sessions,
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

    pub(crate) fn feed_heard_ms(&self) -> i64 {
        self.feed_heard_ms.load(Ordering::SeqCst)
    }
}
