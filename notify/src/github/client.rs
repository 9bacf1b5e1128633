//! The two ways to reach GitHub's REST API (docs/github.md): `gh api …` (the GitHub CLI with
//! its own login and host) or HTTPS with a token from the environment. Both give the same
//! [`Reply`]; nothing here prints or returns the token.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agentx_clarify_core::github::{GithubConfig, Via};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How long one request may take (`gh` included).
pub const TIMEOUT: Duration = Duration::from_secs(30);
const API_VERSION: &str = "2022-11-28";

/// An HTTP answer: status, headers (names lower-case), body.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Result<Value, GhError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| GhError::Failed(format!("GitHub's answer is not JSON: {e}")))
    }
}

/// Why a request did not do its work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GhError {
    /// GitHub's rate limit is spent until then (ms since the epoch).
    #[error("rate limited by GitHub until {}", agentx_clarify_core::time::Timestamp::from_ms(*.until))]
    RateLimited { until: i64 },
    /// GitHub answered with this status.
    #[error("GitHub answered {status}: {message}")]
    Status { status: u16, message: String },
    /// Could not ask (no token, gh missing, network, timeout).
    #[error("{0}")]
    Failed(String),
}

/// A way to GitHub.
pub enum Client {
    Gh,
    Api { base: String, token: String },
}

impl Client {
    /// The client `[github]` asks for; `env` reads the token's variable (`via = "api"`).
    pub fn new(
        config: &GithubConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Client, GhError> {
        match config.via {
            Via::Gh => Ok(Client::Gh),
            Via::Api => match env(&config.token_env) {
                Some(token) if !token.trim().is_empty() => Ok(Client::Api {
                    base: config.api_url.clone(),
                    token: token.trim().to_owned(),
                }),
                _ => Err(GhError::Failed(format!(
                    "[github] via = \"api\" reads its token from the environment variable {}, which is not set",
                    config.token_env
                ))),
            },
        }
    }

    /// The login the hub's comments are posted as (`GET /user`: `gh api user`, or the token's
    /// user), learnt once per process and way to GitHub. Only comments by this account are
    /// the hub's own: anyone can write a comment that starts with a record's marker.
    pub fn login(&self, now: i64) -> Result<String, GhError> {
        static LOGINS: OnceLock<Mutex<BTreeMap<String, String>>> = OnceLock::new();
        let logins = LOGINS.get_or_init(|| Mutex::new(BTreeMap::new()));
        let key = self.identity();
        if let Some(login) = logins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(login.clone());
        }
        let reply = self.request("GET", "/user", None, now)?;
        if reply.status != 200 {
            return Err(GhError::Status {
                status: reply.status,
                message: String::from(
                    "cannot learn the login the comments are posted as (GET /user)",
                ),
            });
        }
        let login = reply
            .json()?
            .get("login")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| GhError::Failed("GET /user named no login".into()))?;
        logins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, login.clone());
        Ok(login)
    }

    /// Which account a client speaks as, for [`Client::login`]'s memory: `gh`'s host, or the
    /// API's URL and a hash of the token (the token itself is kept nowhere else).
    fn identity(&self) -> String {
        match self {
            Client::Gh => format!("gh {}", std::env::var("GH_HOST").unwrap_or_default()),
            Client::Api { base, token } => {
                let digest = Sha256::digest(token.as_bytes());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                format!("api {base} {hex}")
            }
        }
    }

    /// One request: `path` is `/repos/…` (with its query), or a `Link` URL GitHub gave.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        now: i64,
    ) -> Result<Reply, GhError> {
        let reply = match self {
            Client::Gh => gh(method, path, body)?,
            Client::Api { base, token } => api(base, token, method, path, body)?,
        };
        if let Some(until) = rate_limited(&reply, now) {
            return Err(GhError::RateLimited { until });
        }
        Ok(reply)
    }
}

/// A 403 or 429 that says the rate limit is spent: until `x-ratelimit-reset`, or `retry-after`
/// seconds from now, or a minute.
fn rate_limited(reply: &Reply, now: i64) -> Option<i64> {
    if reply.status != 403 && reply.status != 429 {
        return None;
    }
    let spent = reply.header("x-ratelimit-remaining").map(str::trim) == Some("0");
    let retry_after = reply
        .header("retry-after")
        .and_then(|v| v.trim().parse::<i64>().ok());
    if !spent && retry_after.is_none() {
        return None;
    }
    let reset = reply
        .header("x-ratelimit-reset")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|_| spent)
        .map(|secs| secs.saturating_mul(1000));
    Some(
        reset
            .or(retry_after.map(|s| now.saturating_add(s.saturating_mul(1000))))
            .unwrap_or(now + 60_000)
            .max(now),
    )
}

/// The part of a `Link` URL after the API's root, for `gh api` (which adds its own host).
fn gh_path(path: &str) -> String {
    let path = match path.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |i| &rest[i..]),
        None => path,
    };
    let path = path.strip_prefix("/api/v3").unwrap_or(path);
    path.trim_start_matches('/').to_owned()
}

fn gh(method: &str, path: &str, body: Option<&Value>) -> Result<Reply, GhError> {
    let mut cmd = Command::new("gh");
    cmd.args(["api", "--include", "--method", method])
        .args(["-H", "Accept: application/vnd.github+json"])
        .args(["-H", &format!("X-GitHub-Api-Version: {API_VERSION}")])
        .arg(gh_path(path))
        .env("GH_PROMPT_DISABLED", "1")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if body.is_some() {
        cmd.args(["--input", "-"]);
    }
    let mut child = cmd.spawn().map_err(|e| {
        GhError::Failed(format!(
            "could not start gh (the GitHub CLI; [github] via = \"gh\"): {e}; install gh and sign in (`gh auth login`), or set [github] via = \"api\" to call the REST API with a token from GITHUB_TOKEN (or the variable token_env names)"
        ))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        if let Some(b) = body {
            let _ = stdin.write_all(b.to_string().as_bytes());
        }
    }
    // Read while it runs (a large page would fill the pipe), with a deadline.
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut out);
        }
        out
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GhError::Failed(format!(
                    "gh api did not finish within {} s",
                    TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(GhError::Failed(format!("waiting for gh: {e}"))),
        }
    };
    let out = reader.join().unwrap_or_default();
    match parse_included(&out) {
        Some(reply) => Ok(reply),
        None => {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                let _ = s.by_ref().take(2000).read_to_string(&mut err);
            }
            let err: String = err.trim().chars().take(300).collect();
            Err(GhError::Failed(format!("gh api failed ({status}): {err}")))
        }
    }
}

/// `gh api --include`'s output: a status line, headers, a blank line, the body.
fn parse_included(out: &[u8]) -> Option<Reply> {
    let text_end = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| out.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))?;
    let head = std::str::from_utf8(&out[..text_end.0]).ok()?;
    let mut lines = head.lines();
    let status_line = lines.next()?;
    let status = status_line
        .strip_prefix("HTTP/")?
        .split_whitespace()
        .nth(1)?
        .parse::<u16>()
        .ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(Reply {
        status,
        headers,
        body: out[text_end.0 + text_end.1..].to_vec(),
    })
}

fn api(
    base: &str,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Reply, GhError> {
    let url = if path.contains("://") {
        // A `Link` GitHub gave: followed only on the API's own origin (the token goes nowhere else).
        let origin = |u: &str| {
            u.split_once("://")
                .map(|(s, r)| format!("{s}://{}", r.split('/').next().unwrap_or("")))
        };
        if origin(path) != origin(base) {
            return Err(GhError::Failed(
                "GitHub's next-page link leaves the API's host; not followed".into(),
            ));
        }
        path.to_owned()
    } else {
        format!("{base}{path}")
    };
    let client = reqwest::blocking::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("agentx-clarify/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| GhError::Failed(format!("HTTP client: {}", e.without_url())))?;
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| GhError::Failed(format!("bad method {method}")))?;
    let mut request = client
        .request(method, &url)
        .header("Accept", "application/vnd.github+json")
        .header("X-GitHub-Api-Version", API_VERSION)
        .bearer_auth(token);
    if let Some(b) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let response = request
        .send()
        .map_err(|e| GhError::Failed(crate::describe(&e.without_url())))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = response
        .bytes()
        .map_err(|e| GhError::Failed(crate::describe(&e.without_url())))?
        .to_vec();
    Ok(Reply {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn included_output_and_paths() {
        let r = parse_included(b"HTTP/1.1 403 Forbidden\r\nX-Ratelimit-Remaining: 0\r\nX-Ratelimit-Reset: 100\r\n\r\n{}")
            .unwrap_or_else(|| unreachable!());
        assert_eq!(r.status, 403);
        assert_eq!(rate_limited(&r, 5), Some(100_000));
        assert_eq!(r.body, b"{}");
        assert_eq!(
            gh_path("/repos/a/b/issues/1/comments?page=2"),
            "repos/a/b/issues/1/comments?page=2"
        );
        assert_eq!(
            gh_path("https://ghe.example/api/v3/repos/a/b?page=2"),
            "repos/a/b?page=2"
        );
    }
}
