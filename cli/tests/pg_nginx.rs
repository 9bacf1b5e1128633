//! nginx (Debian's package) in front of two `agentx serve` replicas on one PostgreSQL, with
//! the shipped `docs/deploy/nginx.conf` as it is — only its ports, certificate and log paths
//! substituted (docs/protocol.md §23.4): a person's decision sent through nginx over TLS
//! reaches the `/events` streams open on both replicas, whichever of them took it; readiness
//! answers through nginx, and `/metrics` is closed there. An MCP session through nginx lives
//! on the replica its token is routed to; when that replica dies the official SDK client's
//! next call meets 404 and a new session goes on through another replica.
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

/// A replica on `127.0.0.1:<port>` behind the proxy at `public`, without a worker.
fn replica(root: &Path, port: u16, public: &str, env: &[(&str, &str)]) -> Server {
    let listen = format!("127.0.0.1:{port}");
    Server::start_with_env(
        root,
        &[
            "--no-worker",
            "--listen",
            &listen,
            "--behind-proxy",
            "--public-url",
            public,
        ],
        env,
    )
}

/// nginx running the shipped config in front of the replicas on ports `a` and `b`, TLS on
/// `https` with a certificate made for 127.0.0.1, answering `/readyz`.
struct Front {
    nginx: Nginx,
    /// The certificate (its own CA) clients trust.
    cert: std::path::PathBuf,
    /// `https://127.0.0.1:<https>`.
    base: String,
    /// The config, the certificate and nginx's logs.
    work: tempfile::TempDir,
}

fn front(a: u16, b: u16, https: u16, http: u16) -> Front {
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
    Front {
        nginx,
        cert,
        base,
        work,
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
    let (_a, _b) = (
        replica(root, a, &public, &[]),
        replica(root, b, &public, &[]),
    );

    let Front {
        nginx,
        cert,
        base,
        work,
    } = front(a, b, https, http);
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
    let access = std::fs::read_to_string(work.path().join("agentx-access.log")).unwrap_or_default();
    assert!(access.contains("POST /api/v1/call"), "{access}");
    drop(nginx);
}

const METRICS_TOKEN: &str = "scrape-0123456789abcdef";

/// The `/mcp` sessions the replica on `port` keeps, from its own `/metrics` (not through
/// nginx, which closes `/metrics`).
fn sessions(port: u16) -> u64 {
    use std::io::Read;
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {METRICS_TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    text.lines()
        .find_map(|l| l.strip_prefix("agentx_mcp_sessions "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no agentx_mcp_sessions in {text}"))
}

/// Issue 51's "MCP across replicas", as docs/deploy/README.md chose it: nginx routes `/mcp`
/// by the token, so a session lives on one replica; `kill -9` of it, and the session's next
/// call through nginx is 404 (the other replica does not know it), after which the client
/// opens a new session, as the MCP specification has it, and carries on with the same
/// records (they are in PostgreSQL). The agent is the official TypeScript SDK's client.
#[test]
fn an_mcp_session_through_nginx_is_opened_again_when_its_replica_dies() {
    let url = fresh_database("serve_nginx_mcp");
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/config.toml"),
        format!(
            "[store]\nurl = \"{url}\"\n\n[serve]\nmetrics = true\nmetrics_token_env = \"AGENTX_TEST_METRICS_TOKEN\"\n"
        ),
    )
    .unwrap();
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let engineer = token(root, "--agent", "engineer");
    let (a, b, https, http) = (free_port(), free_port(), free_port(), free_port());
    let public = format!("https://127.0.0.1:{https}");
    let env = [("AGENTX_TEST_METRICS_TOKEN", METRICS_TOKEN)];
    let mut replicas = [
        replica(root, a, &public, &env),
        replica(root, b, &public, &env),
    ];
    let front = front(a, b, https, http);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/test/nginx-client.mjs");
    let mut agent = std::process::Command::new("node")
        .arg(&script)
        .arg(format!("{}/mcp", front.base))
        .arg(&engineer)
        .env("NODE_EXTRA_CA_CERTS", &front.cert)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node (scripts/setup installs mcp/test's SDK)");
    let mut out = BufReader::new(agent.stdout.take().unwrap());
    let mut step = || {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the agent ended");
        serde_json::from_str::<serde_json::Value>(&line).unwrap()
    };
    let asked = step();
    let id = asked["asked"].as_str().expect("an id").to_owned();
    let counts = [sessions(a), sessions(b)];
    assert_eq!(
        counts.iter().sum::<u64>(),
        1,
        "one session in all: {counts:?}"
    );
    let holder = usize::from(counts[1] == 1);
    replicas[holder].child.kill().unwrap();
    replicas[holder].child.wait().unwrap();
    writeln!(agent.stdin.as_mut().unwrap(), "next").unwrap();

    let same = step();
    let said = same["sameSession"].as_str().unwrap_or_default();
    // The SDK's words for HTTP 404 on a session id.
    assert!(
        said.contains("Not Found") && said.contains("Session not found"),
        "the lost session's call: {same}"
    );
    let again = step();
    assert_ne!(again["newSession"], asked["session"], "{again}");
    assert_eq!(again["shown"], "pending", "{again}");
    let other = if holder == 0 { b } else { a };
    assert_eq!(sessions(other), 1, "the new session is on the other");
    assert!(agent.wait().unwrap().success());
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["from"], "engineer", "{shown}");
    drop(front);
}
