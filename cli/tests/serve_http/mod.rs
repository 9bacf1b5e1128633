//! A real `agentx serve` process and a plain HTTP/1.1 client on a TCP socket (so a test
//! controls every header, Host included), shared by the tests of the server.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

/// A running `agentx serve`, stopped (SIGTERM) when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub link: String,
    /// The host of the link: the inbox's own name (`<label>.localhost:<port>`) on loopback,
    /// the address under TLS. Every request is sent to 127.0.0.1 with this `Host`.
    link_host: String,
    /// `http` or `https`.
    scheme: String,
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    pub fn start(root: &Path, extra: &[&str]) -> Server {
        Server::start_with_env(root, extra, &[])
    }

    /// [`Server::start`] with variables added to the server's environment.
    pub fn start_with_env(root: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::launch(agentx(), root, extra, env, Stdio::null())
    }

    /// [`Server::start`] with its log (stderr) appended to the file at `log`.
    pub fn start_logged(root: &Path, extra: &[&str], env: &[(&str, &str)], log: &Path) -> Server {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("open the server's log file");
        Server::launch(agentx(), root, extra, env, Stdio::from(file))
    }

    /// [`Server::start`] run by `wrapper` (a program and its arguments, which execs the
    /// binary given after them: a shell that sets limits first).
    pub fn start_via(root: &Path, wrapper: &[&str], extra: &[&str]) -> Server {
        let mut cmd = std::process::Command::new(wrapper[0]);
        cmd.args(&wrapper[1..])
            .arg(BIN)
            .env_remove("AGENTX_STORE")
            .env_remove("AGENTX_NOW")
            .stdin(Stdio::null());
        Server::launch(cmd, root, extra, &[], Stdio::null())
    }

    fn launch(
        mut cmd: std::process::Command,
        root: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> Server {
        cmd.arg(root_arg(root))
            .arg("serve")
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr);
        if !extra.contains(&"--listen") {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        Server::spawn(cmd)
    }

    /// A server started by `cmd` (an `agentx serve` command line, possibly under a tracer),
    /// once it printed its sign-in link.
    pub fn spawn(mut cmd: std::process::Command) -> Server {
        let mut child = cmd.spawn().expect("spawn agentx serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut link = String::new();
        for _ in 0..3 {
            let mut line = String::new();
            stdout
                .read_line(&mut line)
                .expect("read the start-up lines");
            if line.contains("/login?once=") {
                link = line.trim().to_owned();
            }
        }
        assert!(!link.is_empty(), "no sign-in link printed");
        let (scheme, rest) = link.split_once("://").expect("a URL");
        let link_host = rest.split('/').next().expect("a host").to_owned();
        let port: u16 = link_host
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .expect("a port in the link");
        Server {
            child,
            port,
            scheme: scheme.to_owned(),
            link_host,
            link,
            _stdout: stdout,
        }
    }

    /// The `Host` a browser following the link sends.
    pub fn host(&self) -> String {
        self.link_host.clone()
    }

    /// The origin of the inbox's pages (the `Origin` a browser sends from them).
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.host())
    }

    /// The listen address as a URL: what a program on this machine (an SDK client) connects
    /// to; `*.localhost` names resolve in browsers, not necessarily in every resolver.
    pub fn api_origin(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    /// The path and query of the one-time link.
    pub fn once_path(&self) -> String {
        self.link.trim_start_matches(&self.origin()).to_owned()
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send("GET", path, headers, b"")
    }

    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut all: Vec<(String, String)> = Vec::new();
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            all.push(("Host".into(), self.host()));
        }
        all.extend(
            headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        request(self.port, method, path, &all, body)
    }

    /// Signs in by the one-time link: the session cookie and the page's CSRF token.
    pub fn sign_in(&self) -> (String, String) {
        let r = self.get(&self.once_path(), &[]);
        assert_eq!(r.status, 303, "{r:?}");
        let cookie = r.cookie().expect("a session cookie");
        let page = self.get("/", &[("Cookie", &cookie)]);
        assert_eq!(page.status, 200, "{page:?}");
        (cookie, page.csrf().expect("the page's CSRF token"))
    }

    pub fn call_bearer(&self, token: &str, op: &str, input: Value) -> Reply {
        let body = json!({"op": op, "input": input}).to_string();
        let auth = format!("Bearer {token}");
        self.send(
            "POST",
            "/api/v1/call",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
        )
    }

    /// The CPU time the server has used so far (user and system, from `/proc`).
    pub fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("the server's /proc stat");
        // The fields after the command name (which is in parentheses and may hold spaces).
        let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
        let fields: Vec<u64> = rest
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        let ticks = fields[11] + fields[12];
        Duration::from_millis(ticks * 1000 / clock_ticks())
    }

    /// The server's resident memory now, in KiB (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc status")
    }

    pub fn terminate(&mut self) -> (Option<i32>, Duration) {
        let started = Instant::now();
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return (status.code(), started.elapsed());
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                return (None, started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`).
fn clock_ticks() -> u64 {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("getconf runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(100)
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    pub fn cookie(&self) -> Option<String> {
        let set = self.header("set-cookie")?;
        set.split(';').next().map(str::to_owned)
    }

    pub fn csrf(&self) -> Option<String> {
        let at = self.body.find("<meta name=\"csrf\" content=\"")?;
        let rest = &self.body[at + 27..];
        rest.split('"').next().map(str::to_owned)
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Reply {
    try_request(port, method, path, headers, body).expect("connect")
}

/// [`request`], `None` when the server cannot be reached or does not answer within
/// `within` (connecting, sending and reading each).
pub fn try_request_within(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    within: Duration,
) -> Option<Reply> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, within).ok()?;
    s.set_read_timeout(Some(within)).ok()?;
    s.set_write_timeout(Some(within)).ok()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    Some(parse(&raw))
}

/// [`request`], `None` when the server cannot be reached.
pub fn try_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Option<Reply> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).ok()?;
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    Some(parse(&raw))
}

fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

pub fn token(root: &Path, flag: &str, name: &str) -> String {
    let out = json_in(root, &["tokens", "new", flag, name]);
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()["token"]["token"].as_str().unwrap().to_owned()
}

pub fn escalated(root: &Path, issue: u32, topic: &str) -> String {
    let asked = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            &issue.to_string(),
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            topic,
            "--question",
            "Redis or in-process?",
        ],
    );
    assert_eq!(asked.code, 0, "{asked:#?}");
    let id = asked.json()["clarification"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = json_in(root, &["clarify", "escalate", &id, "-m", "needs a person"]);
    assert_eq!(out.code, 0, "{out:#?}");
    id
}

/// Opens `/events` as the session `cookie` (reads time out after `timeout_s`) and reads up to
/// the stream's `ready` event; the reader, and what came before it (status and headers).
pub fn open_events(
    server: &Server,
    cookie: &str,
    timeout_s: u64,
) -> (BufReader<TcpStream>, String) {
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(timeout_s)))
        .unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
        server.host()
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
    (reader, seen)
}
