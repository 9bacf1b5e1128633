//! nginx (Debian's package) in front of two `agentx serve` replicas on one PostgreSQL, with
//! the shipped `docs/deploy/nginx.conf` as it is — only its ports, certificate and log paths
//! substituted (docs/protocol.md §23.4): a person's decision sent through nginx over TLS
//! reaches the `/events` streams open on both replicas, whichever of them took it; readiness
//! answers through nginx, and `/metrics` is closed there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::fresh_database;
use common::*;
use serve_http::*;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The shipped config with `(from, to)` replaced; each `from` must be in it.
fn substituted(subs: &[(&str, String)]) -> String {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/deploy/nginx.conf");
    let mut text = std::fs::read_to_string(shipped).unwrap();
    for (from, to) in subs {
        assert!(
            text.contains(from),
            "{from} is no longer in docs/deploy/nginx.conf"
        );
        text = text.replace(from, to);
    }
    text
}

/// `curl` through nginx with the test's CA: the status code and the body.
fn curl(ca: &Path, args: &[&str]) -> (u16, String) {
    let out = std::process::Command::new("curl")
        .args(["-s", "--max-time", "10", "-w", "\n%{http_code}", "--cacert"])
        .arg(ca)
        .args(args)
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.parse().unwrap_or(0), body.to_owned())
}

/// `/events` opened directly on the replica at `port` with a person's token, read to `ready`.
fn events(port: u16, token: &str) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(s);
    let mut seen = String::new();
    while !seen.contains("event: ready") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "stream ended: {seen}"
        );
        seen.push_str(&line);
    }
    reader
}

struct Nginx(std::process::Child);

/// nginx's master stops its workers on SIGTERM (a SIGKILL would leave them running).
impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

#[test]
fn a_decision_through_nginx_reaches_the_other_replicas_stream() {
    let url = fresh_database("serve_nginx");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let human = token(root, "--human", "alice");
    let id = escalated(root, 3, "Proxy");

    let (a, b, https, http) = (free_port(), free_port(), free_port(), free_port());
    let public = format!("https://127.0.0.1:{https}");
    let replica = |port: u16| {
        let listen = format!("127.0.0.1:{port}");
        Server::start(
            root,
            &[
                "--no-worker",
                "--listen",
                &listen,
                "--behind-proxy",
                "--public-url",
                &public,
            ],
        )
    };
    let (_a, _b) = (replica(a), replica(b));

    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let (cert, key) = (w.join("cert.pem"), w.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let conf = substituted(&[
        ("127.0.0.1:7701", format!("127.0.0.1:{a}")),
        ("127.0.0.1:7702", format!("127.0.0.1:{b}")),
        // Two replicas here: the third upstream line names the second again.
        ("127.0.0.1:7703", format!("127.0.0.1:{b}")),
        ("listen 80;", format!("listen 127.0.0.1:{http};")),
        ("listen 443 ssl", format!("listen 127.0.0.1:{https} ssl")),
        ("/etc/agentx/tls/fullchain.pem", cert.display().to_string()),
        ("/etc/agentx/tls/privkey.pem", key.display().to_string()),
        (
            "/run/nginx-agentx.pid",
            w.join("nginx.pid").display().to_string(),
        ),
        ("/var/log/nginx/", format!("{}/", w.display())),
    ]);
    let conf_path = w.join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let nginx = Nginx(
        std::process::Command::new("nginx")
            .arg("-p")
            .arg(w)
            .arg("-c")
            .arg(&conf_path)
            .args(["-g", "daemon off;"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nginx (scripts/setup installs Debian's package)"),
    );
    let base = format!("https://127.0.0.1:{https}");
    let started = Instant::now();
    while curl(&cert, &[&format!("{base}/readyz")]).0 != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nginx never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (closed, _) = curl(&cert, &[&format!("{base}/metrics")]);
    assert_eq!(closed, 404);

    let mut streams = [events(a, &human), events(b, &human)];
    // Let each replica's feed take its first look before the write.
    std::thread::sleep(Duration::from_millis(600));
    let body = serde_json::json!({"op": "decide", "input": {"id": id, "message": "via nginx"}});
    let auth = format!("Authorization: Bearer {human}");
    let (status, reply) = curl(
        &cert,
        &[
            "-H",
            &auth,
            "-H",
            "Content-Type: application/json",
            "-d",
            &body.to_string(),
            &format!("{base}/api/v1/call"),
        ],
    );
    assert_eq!(status, 200, "{reply}");
    for (n, stream) in streams.iter_mut().enumerate() {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(stream.read_line(&mut line).unwrap() > 0, "stream {n} ended");
            if line.starts_with("data:") && line.contains("[3]") {
                break;
            }
        }
    }
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["status"], "resolved", "{shown}");
    let access = std::fs::read_to_string(w.join("agentx-access.log")).unwrap_or_default();
    assert!(access.contains("POST /api/v1/call"), "{access}");
    drop(nginx);
}
