//! `agentx serve`'s operations face on the file store (docs/protocol.md §23 "Health and
//! readiness", "Metrics", "Logs"): `/readyz` by its checks, over real HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use common::*;
use serde_json::json;
use serve_http::*;

/// Ready while the state answers a read and a lease can be taken; 503 naming the check that
/// fails (a directory where the statuses file belongs, then where the probe's lease goes), and
/// ready again once it is put right. `/healthz` never looks at the store.
#[test]
fn readiness_names_the_failing_check_on_the_file_store() {
    let dir = workspace();
    let root = dir.path();
    let server = Server::start(root, &["--no-worker"]);
    let ready = server.get("/readyz", &[]);
    assert_eq!(ready.status, 200, "{ready:?}");
    assert_eq!(
        ready.json(),
        json!({"ready": true, "checks": {"store": "ok", "schema": "ok", "lease": "ok"}})
    );
    let lease = root.join(".agentx/state/clarifications/CLR-0-000.lease");
    assert!(!lease.exists(), "the probe's lease is released");

    let statuses = root.join(".agentx/state/agent-status.json");
    let _ = std::fs::remove_file(&statuses);
    std::fs::create_dir(&statuses).unwrap();
    let broken = server.get("/readyz", &[]);
    assert_eq!(broken.status, 503, "{broken:?}");
    assert_eq!(broken.json()["failing"], "store", "{}", broken.body);
    assert_eq!(broken.json()["checks"]["schema"], "not run");
    assert_eq!(server.get("/healthz", &[]).json(), json!({"ok": true}));
    std::fs::remove_dir(&statuses).unwrap();
    assert_eq!(server.get("/readyz", &[]).status, 200);

    std::fs::create_dir(&lease).unwrap();
    let no_lease = server.get("/readyz", &[]);
    assert_eq!(no_lease.status, 503, "{no_lease:?}");
    assert_eq!(no_lease.json()["failing"], "lease", "{}", no_lease.body);
    assert_eq!(no_lease.json()["checks"]["store"], "ok");
    assert!(
        !no_lease.body.contains(&*root.to_string_lossy()),
        "{}",
        no_lease.body
    );
    std::fs::remove_dir(&lease).unwrap();
    assert_eq!(server.get("/readyz", &[]).status, 200);
}

const METRICS_TOKEN: &str = "scrape-0123456789abcdef";

/// The samples of a scrape as the Prometheus project's Python parsers read it
/// (tests/metrics/parse.py; PyPI `prometheus-client`, installed by scripts/setup).
fn parsed(scrape: &str) -> Vec<serde_json::Value> {
    use std::io::Write;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/metrics/parse.py");
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(scrape.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the parser refused the scrape: {}\n{scrape}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The sum of the samples named `name` whose labels include `labels`.
fn sample(samples: &[serde_json::Value], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s["name"] == name)
        .filter(|s| labels.iter().all(|(k, v)| s["labels"][k] == *v))
        .map(|s| s["value"].as_f64().unwrap_or(0.0))
        .sum()
}

/// `/metrics` with a token: refused without it (401), and a scrape the official parsers read,
/// whose series move with real work — requests by route template (the record's id is never a
/// label), the escalation, the person's decision by `via` and its time, open records.
#[test]
fn metrics_parse_and_move_with_the_work() {
    use std::time::{Duration, Instant};
    let dir = workspace();
    let root = dir.path();
    let config = root.join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str("\n[serve]\nmetrics = true\nmetrics_token_env = \"AGENTX_TEST_METRICS_TOKEN\"\n");
    std::fs::write(&config, text).unwrap();
    let id = escalated(root, 7, "Cache");
    let human = token(root, "--human", "alice");
    let server = Server::start_with_env(
        root,
        &["--no-worker"],
        &[("AGENTX_TEST_METRICS_TOKEN", METRICS_TOKEN)],
    );
    let bearer = format!("Bearer {METRICS_TOKEN}");
    let scrape = || server.get("/metrics", &[("Authorization", &bearer)]);
    assert_eq!(server.get("/metrics", &[]).status, 401);
    let wrong = server.get(
        "/metrics",
        &[("Authorization", "Bearer scrape-0123456789abcdeX")],
    );
    assert_eq!(wrong.status, 401, "{wrong:?}");
    let human_bearer = format!("Bearer {human}");
    assert_eq!(
        server
            .get("/metrics", &[("Authorization", &human_bearer)])
            .status,
        401,
        "a person's token is not the metrics token"
    );

    // The view has read the ledgers: the escalated record is counted.
    let started = Instant::now();
    let before = loop {
        let s = parsed(&scrape().body);
        if sample(&s, "agentx_open_records", &[("status", "escalated")]) == 1.0 {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never counted");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(sample(&before, "agentx_escalations_total", &[]), 1.0);
    assert_eq!(sample(&before, "agentx_decisions_total", &[]), 0.0);

    let page = server.get(
        &format!("/clarifications/{id}"),
        &[("Authorization", &human_bearer)],
    );
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(server.get("/no/such/path-4711", &[]).status, 404);
    let r = server.call_bearer(&human, "decide", json!({"id": id, "message": "Redis"}));
    assert_eq!(r.status, 200, "{r:?}");

    let started = Instant::now();
    let (after, body) = loop {
        let body = scrape().body;
        let s = parsed(&body);
        if sample(&s, "agentx_decisions_total", &[("via", "web")]) == 1.0 {
            break (s, body);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the decision was never counted"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let moved = |name: &str, labels: &[(&str, &str)]| {
        sample(&after, name, labels) - sample(&before, name, labels)
    };
    let call = [
        ("route", "/api/v1/call"),
        ("method", "POST"),
        ("status", "200"),
    ];
    assert_eq!(moved("agentx_http_requests_total", &call), 1.0);
    let thread = [("route", "/clarifications/{id}"), ("status", "200")];
    assert_eq!(moved("agentx_http_requests_total", &thread), 1.0);
    let unmatched = [("route", "unmatched"), ("status", "404")];
    assert_eq!(moved("agentx_http_requests_total", &unmatched), 1.0);
    assert!(
        sample(
            &after,
            "agentx_http_requests_total",
            &[("route", "/metrics"), ("status", "401")]
        ) >= 3.0
    );
    assert!(
        moved(
            "agentx_http_request_duration_seconds_count",
            &[("route", "/api/v1/call")]
        ) >= 1.0
    );
    assert_eq!(
        sample(&after, "agentx_open_records", &[("status", "escalated")]),
        0.0
    );
    assert_eq!(
        sample(&after, "agentx_time_to_decision_seconds_count", &[]),
        1.0
    );
    assert_eq!(sample(&after, "agentx_escalations_total", &[]), 1.0);
    // --no-worker: this replica holds no duty.
    assert_eq!(sample(&after, "agentx_duty", &[("duty", "monitor")]), 0.0);
    assert_eq!(sample(&after, "agentx_ledger_figures_complete", &[]), 1.0);
    for leak in [id.as_str(), "path-4711", METRICS_TOKEN, &human[4..]] {
        assert!(!body.contains(leak), "{leak} in the scrape:\n{body}");
    }
}

/// `metrics_listen` on loopback without a token: `/metrics` there only (not on the main
/// listener), for this machine's host names only (DNS rebinding).
#[test]
fn metrics_on_a_listener_of_their_own() {
    use std::time::{Duration, Instant};
    let dir = workspace();
    let root = dir.path();
    let config = root.join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str("\n[serve]\nmetrics = true\nmetrics_listen = \"127.0.0.1:0\"\n");
    std::fs::write(&config, text).unwrap();
    let log = root.join("serve.log");
    let server = Server::start_logged(root, &["--no-worker"], &[], &log);
    let started = Instant::now();
    let port: u16 = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let port = text.lines().find_map(|l| {
            let rest = l.split("metrics: /metrics on 127.0.0.1:").nth(1)?;
            rest.split(' ').next()?.parse().ok()
        });
        if let Some(p) = port {
            break p;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        server.get("/metrics", &[]).status,
        404,
        "not on the main listener"
    );
    let host = |h: String| vec![("Host".to_owned(), h)];
    let scraped = request(
        port,
        "GET",
        "/metrics",
        &host(format!("127.0.0.1:{port}")),
        b"",
    );
    assert_eq!(scraped.status, 200, "{scraped:?}");
    assert!(
        scraped
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/openmetrics-text")),
        "{scraped:?}"
    );
    let samples = parsed(&scraped.body);
    assert_eq!(
        sample(&samples, "agentx_open_records", &[("status", "pending")]),
        0.0
    );
    let rebinding = request(
        port,
        "GET",
        "/metrics",
        &host(format!("evil.example:{port}")),
        b"",
    );
    assert_eq!(rebinding.status, 421, "{rebinding:?}");
    let other = request(port, "GET", "/", &host(format!("127.0.0.1:{port}")), b"");
    assert_eq!(other.status, 404, "{other:?}");
}

/// `agentx_duty{duty="monitor"}` is 1 while this replica holds the monitor duty's lease (a
/// pass stretched to 2 s by `AGENTX_TEST_DUTY_HOLD_MS`) and 0 once the pass released it.
#[test]
fn the_duty_gauge_is_one_while_the_monitor_duty_is_held() {
    use std::time::{Duration, Instant};
    let dir = workspace();
    let root = dir.path();
    let config = root.join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str("\n[serve]\nmetrics = true\nmetrics_token_env = \"AGENTX_TEST_METRICS_TOKEN\"\n");
    std::fs::write(&config, text).unwrap();
    // A record past its SLA, so the worker's first pass is due at once.
    let past = wall_ms() - 2 * 60 * 60 * 1000;
    let asked = json_at(
        root,
        past,
        &[
            "clarify",
            "ask",
            "--issue",
            "3",
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            "Old",
            "--question",
            "Still there?",
        ],
    );
    assert_eq!(asked.code, 0, "{asked:#?}");
    let server = Server::start_with_env(
        root,
        &[],
        &[
            ("AGENTX_TEST_METRICS_TOKEN", METRICS_TOKEN),
            ("AGENTX_TEST_DUTY_HOLD_MS", "2000"),
        ],
    );
    let bearer = format!("Bearer {METRICS_TOKEN}");
    let held = |on: &str| format!("agentx_duty{{duty=\"monitor\"}} {on}");
    let scrape_until = |on: &str| {
        let started = Instant::now();
        loop {
            let body = server.get("/metrics", &[("Authorization", &bearer)]).body;
            if body.contains(&held(on)) {
                return parsed(&body);
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{body}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let during = scrape_until("1");
    assert_eq!(sample(&during, "agentx_duty", &[("duty", "monitor")]), 1.0);
    let after = scrape_until("0");
    assert_eq!(sample(&after, "agentx_duty", &[("duty", "monitor")]), 0.0);
    assert_eq!(sample(&after, "agentx_duty", &[("duty", "outbox")]), 1.0);
    // How late the pass began after its planned wake-up: the worker kept up.
    let lags: Vec<f64> = after
        .iter()
        .filter(|s| s["name"] == "agentx_duty_lag_seconds" && s["labels"]["duty"] == "monitor")
        .filter_map(|s| s["value"].as_f64())
        .collect();
    assert_eq!(lags.len(), 1, "one lag series for the monitor: {after:?}");
    assert!((0.0..5.0).contains(&lags[0]), "lag {} s", lags[0]);
}

/// A metrics face that would be open to anyone is a refusal to start (exit 2).
#[test]
fn an_open_metrics_face_is_refused() {
    let dir = workspace();
    let root = dir.path();
    let config = root.join(".agentx/config.toml");
    let base = std::fs::read_to_string(&config).unwrap_or_default();
    for (extra, says) in [
        ("metrics = true\n", "metrics_token_env"),
        (
            "metrics = true\nmetrics_listen = \"0.0.0.0:0\"\n",
            "not a loopback address",
        ),
        (
            "metrics = true\nmetrics_token_env = \"AGENTX_TEST_UNSET_VARIABLE\"\n",
            "AGENTX_TEST_UNSET_VARIABLE",
        ),
    ] {
        std::fs::write(&config, format!("{base}\n[serve]\n{extra}")).unwrap();
        let out = run_within(
            std::time::Duration::from_secs(30),
            [
                root_arg(root),
                "serve".into(),
                "--listen".into(),
                "127.0.0.1:0".into(),
            ],
        );
        assert_eq!(out.code, 2, "{extra}: {out:?}");
        assert!(out.stderr.contains(says), "{extra}: {}", out.stderr);
    }
}

/// `--log-format json`: every line of the log is one JSON object (`ts`, `level`, `msg`); each
/// request has its id (the proxy's `X-Request-Id` kept, and sent back), route template,
/// method, status and milliseconds; no token, sign-in code or cookie appears anywhere in it.
#[test]
fn the_json_log_is_one_object_a_line_without_secrets() {
    let dir = workspace();
    let root = dir.path();
    let id = escalated(root, 7, "Cache");
    let human = token(root, "--human", "alice");
    let log = root.join("serve.log");
    let mut server =
        Server::start_logged(root, &["--no-worker", "--log-format", "json"], &[], &log);
    let once = server.once_path();
    let code = once.split("once=").nth(1).unwrap().to_owned();
    let (cookie, _) = server.sign_in();
    let session = cookie.split('=').nth(1).unwrap().to_owned();
    let traced = server.get(
        &format!("/clarifications/{id}"),
        &[("Cookie", &cookie), ("X-Request-Id", "lb-4711")],
    );
    assert_eq!(traced.status, 200, "{traced:?}");
    assert_eq!(traced.header("x-request-id"), Some("lb-4711"));
    let own = server.call_bearer(&human, "decide", json!({"id": id, "message": "Redis"}));
    assert_eq!(own.status, 200, "{own:?}");
    let own_id = own.header("x-request-id").unwrap().to_owned();
    assert_ne!(own_id, "lb-4711");
    server.terminate();

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for line in &lines {
        for key in ["ts", "level", "msg"] {
            assert!(line[key].is_string(), "{key} missing: {line}");
        }
    }
    let requests: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["msg"] == "request").collect();
    for r in &requests {
        assert!(r["request_id"].is_string() && r["route"].is_string(), "{r}");
        assert!(
            r["status"].is_u64() && r["ms"].is_number() && r["method"].is_string(),
            "{r}"
        );
    }
    let find = |rid: &str| requests.iter().find(|r| r["request_id"] == rid).copied();
    let traced = find("lb-4711").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(traced["route"], "/clarifications/{id}");
    assert_eq!(traced["status"], 200);
    let decided = find(&own_id).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        (decided["route"].as_str(), decided["method"].as_str()),
        (Some("/api/v1/call"), Some("POST"))
    );
    assert!(
        requests
            .iter()
            .any(|r| r["route"] == "/login" && r["status"] == 303),
        "{text}"
    );
    assert!(lines.iter().any(|l| l["msg"] == "stopped"), "{text}");
    for secret in [human.as_str(), &human[4..], &code, &session, &id] {
        assert!(!text.contains(secret), "{secret} in the log:\n{text}");
    }
}
