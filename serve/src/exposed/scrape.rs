//! `GET /metrics`: who may read it (a token, compared in constant time, when one is set), and
//! the store's series built fresh at each scrape — the ledgers' figures from their tallies,
//! the outbox read once — after the series this process keeps.

use std::sync::Arc;

use agentx_clarify_core::notify::outbox::State as Delivery;
use agentx_clarify_core::notify::Outbox;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::hub::App;
use crate::metrics::{Labels, Metrics};

/// What a scrape needs besides the server's state.
pub struct Face {
    pub token: Option<String>,
    /// Whether this replica runs the worker's duties (not `--no-worker`).
    pub worker: bool,
}

/// The time-to-decision buckets, in seconds: a minute to a week.
const DECISION_BUCKETS: [f64; 11] = [
    60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0, 259_200.0, 604_800.0,
];

pub async fn scrape(
    State(app): State<Arc<App>>,
    axum::Extension(face): axum::Extension<Arc<Face>>,
    headers: HeaderMap,
) -> Response {
    if let Some(token) = &face.token {
        if !presented(&headers, token) {
            let mut refused = crate::security::refusal(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "/metrics needs the metrics token (Authorization: Bearer …)",
            );
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
            return refused;
        }
    }
    let outbox = app
        .with_store(|s| agentx_clarify_notify::home::Home(s).read_outbox())
        .await;
    let now = agentx_clarify_store::clock::system_now_ms();
    match render(&app, &face, outbox.ok().as_ref(), now) {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => crate::security::refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "the metrics could not be written",
        ),
    }
}

/// Whether `headers` carry `token` as a bearer token. The digests are compared, so the
/// comparison takes the same time whatever the length or content of what was sent.
fn presented(headers: &HeaderMap, token: &str) -> bool {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    let (a, b) = (Sha256::digest(given), Sha256::digest(token));
    bool::from(a.ct_eq(&b)) && !given.is_empty()
}

fn gauge_family() -> Family<Labels, Gauge> {
    Family::default()
}

/// The whole exposition: this process's series, then the store's, then `# EOF`.
fn render(
    app: &App,
    face: &Face,
    outbox: Option<&Outbox>,
    now: i64,
) -> Result<String, std::fmt::Error> {
    let metrics: &Metrics = &app.metrics;
    let mut reg = Registry::with_prefix("agentx");
    ledger_series(&mut reg, metrics);
    if let Some(outbox) = outbox {
        outbox_series(&mut reg, outbox, now);
    }
    duty_series(&mut reg, app, face);
    feed_series(&mut reg, app, now);
    let mut text = String::new();
    prometheus_client::encoding::text::encode_registry(&mut text, &metrics.registry)?;
    prometheus_client::encoding::text::encode_registry(&mut text, &reg)?;
    prometheus_client::encoding::text::encode_eof(&mut text)?;
    Ok(text)
}

/// Open records, escalations, decisions and their times, from the ledgers' tallies.
fn ledger_series(reg: &mut Registry, metrics: &Metrics) {
    let total = metrics.tallies.total();
    let open = gauge_family();
    for status in agentx_clarify_core::ledger::Status::ALL {
        if status.is_open() {
            let n = total.by_status.get(status.as_str()).copied().unwrap_or(0);
            open.get_or_create(&vec![("status", status.as_str().to_owned())])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }
    reg.register("open_records", "Open records in the store, by status", open);
    let escalations = Counter::<u64>::default();
    escalations.inc_by(total.escalations);
    reg.register(
        "escalations",
        "Escalation entries in the store's ledgers",
        escalations,
    );
    let decisions = Family::<Labels, Counter>::default();
    for (via, n) in &total.decisions {
        decisions
            .get_or_create(&vec![("via", via.clone())])
            .inc_by(*n);
    }
    reg.register(
        "decisions",
        "People's decisions in the store's ledgers, by the surface they came through",
        decisions,
    );
    let times = Histogram::new(DECISION_BUCKETS);
    for s in &total.decision_secs {
        times.observe(*s);
    }
    reg.register_with_unit(
        "time_to_decision",
        "From the escalation that put a record before a person (else its question) to their decision",
        Unit::Seconds,
        times,
    );
    let complete = Gauge::<i64>::default();
    complete.set(i64::from(metrics.tallies.is_complete()));
    reg.register(
        "ledger_figures_complete",
        "1 once every ledger has been read: the ledger series are the whole store's",
        complete,
    );
}

/// Deliveries waiting, failing (tried, still owed) and dead, by sink; and those this process
/// is sending now.
fn outbox_series(reg: &mut Registry, outbox: &Outbox, now: i64) {
    let deliveries = gauge_family();
    let leased = gauge_family();
    let me = agentx_clarify_notify::deliverer();
    for d in outbox.deliveries.values() {
        let state = match d.state {
            Delivery::Pending if d.attempts == 0 => "pending",
            Delivery::Pending => "failing",
            Delivery::Dead => "dead",
            Delivery::Delivered | Delivery::Canceled => continue,
        };
        deliveries
            .get_or_create(&vec![("sink", d.sink.clone()), ("state", state.to_owned())])
            .inc();
        if d.lease
            .as_ref()
            .is_some_and(|l| l.by == me && l.until > now)
        {
            leased.get_or_create(&vec![("sink", d.sink.clone())]).inc();
        }
    }
    reg.register(
        "outbox_deliveries",
        "Deliveries owed, by sink and state (pending: not tried yet; failing: tried and owed; dead)",
        deliveries,
    );
    reg.register(
        "outbox_leased_here",
        "Deliveries this replica holds the lease of right now, by sink",
        leased,
    );
}

/// Which worker duties this replica holds: the monitor's and the GitHub sync's leases while
/// one of their passes runs here (docs/protocol.md §23.5); the outbox for every replica with
/// a worker, its deliveries being leased one by one.
fn duty_series(reg: &mut Registry, app: &App, face: &Face) {
    let duties = gauge_family();
    for (duty, on) in [
        ("monitor", app.duties.holds(&crate::duty::MONITOR)),
        ("outbox", face.worker),
        ("github", app.duties.holds(&crate::duty::GITHUB)),
    ] {
        duties
            .get_or_create(&vec![("duty", duty.to_owned())])
            .set(i64::from(on));
    }
    reg.register(
        "duty",
        "1 while this replica holds the duty (monitor and GitHub sync: leased; outbox: per delivery)",
        duties,
    );
    let lag = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    lag.get_or_create(&vec![("duty", "monitor".to_owned())])
        .set(app.duties.monitor_lag_seconds());
    reg.register_with_unit(
        "duty_lag",
        "How late this replica's last pass of the duty began after the wake-up it was for",
        Unit::Seconds,
        lag,
    );
}

/// How far the change feed and the inbox's view are behind.
fn feed_series(reg: &mut Registry, app: &App, now: i64) {
    let revision = app.revision.load(std::sync::atomic::Ordering::SeqCst);
    let applied = app.open.applied_revision();
    let behind = Gauge::<i64>::default();
    behind.set(i64::try_from(revision.saturating_sub(applied)).unwrap_or(i64::MAX));
    reg.register(
        "feed_view_lag_revisions",
        "Changes the feed has seen that the inbox's view has not applied yet",
        behind,
    );
    let heard = app.metrics.feed_heard_ms();
    let silence = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    silence.set(if heard > 0 {
        (now - heard).max(0) as f64 / 1000.0
    } else {
        f64::NAN
    });
    reg.register_with_unit(
        "feed_silence",
        "Since the change feed last heard from the store (grows while it is down; its safety tick bounds it otherwise)",
        Unit::Seconds,
        silence,
    );
}
