//! GitHub Mode's test parts (cli/tests/github.rs): the stand-in of GitHub's REST API
//! (tests/github/standin.py) as a process with its test controls, and a workspace in GitHub
//! Mode reaching it through `gh` or REST.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

pub const TOKEN: &str = "ghp_standin0secret0token0for0tests00000";
pub const LABEL: &str = "agentx: blocked";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Way {
    Gh,
    Api,
}

/// Where the workspace keeps its state: files, or a PostgreSQL database of its own
/// (`agentx_clarify_tests::pg`, `AGENTX_TEST_PG_URL` or a throwaway cluster).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kept {
    Files,
    Pg,
}

pub fn spec() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/github/node_modules/@octokit/openapi/generated/api.github.com.json");
    assert!(
        path.exists(),
        "{path:?} is missing: scripts/setup installs npm @octokit/openapi in tests/github"
    );
    path
}

/// The stand-in: a Python process serving a Unix socket (gh) and a loopback port (api).
pub struct StandIn {
    pub child: Child,
    pub port: u16,
    pub sock: PathBuf,
    pub _dir: tempfile::TempDir,
}

impl StandIn {
    pub fn start() -> StandIn {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("gh.sock");
        let port_file = dir.path().join("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/github/standin.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(spec())
            .arg(&sock)
            .arg(&port_file)
            .stdin(Stdio::piped())
            .spawn()
            .expect("python3 runs the stand-in (scripts/setup installs jsonschema)");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("a port");
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("the stand-in exited: {status}");
            }
            assert!(Instant::now() < deadline, "the stand-in did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        StandIn {
            child,
            port,
            sock,
            _dir: dir,
        }
    }

    /// A test control (`/_standin/…`), over plain HTTP/1.1.
    pub fn control(&self, method: &str, path: &str, body: &Value) -> Value {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        let data = body.to_string();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{data}",
            data.len()
        );
        s.write_all(req.as_bytes()).expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    pub fn state(&self) -> Value {
        self.control("GET", "/_standin/state", &json!(null))
    }

    pub fn comment(&self, issue: u32, login: &str, body: &str) -> Value {
        self.control(
            "POST",
            "/_standin/comment",
            &json!({"issue": issue, "login": login, "body": body}),
        )
    }

    pub fn role(&self, login: &str, role: &str) {
        self.control(
            "POST",
            "/_standin/permission",
            &json!({"login": login, "role": role}),
        );
    }

    /// The record's comments (found by the marker).
    pub fn marked(&self, id: &str) -> Vec<Value> {
        let marker = format!("<!-- agentx:{id} -->");
        self.state()["comments"]
            .as_array()
            .expect("comments")
            .iter()
            .filter(|c| c["body"].as_str().is_some_and(|b| b.starts_with(&marker)))
            .cloned()
            .collect()
    }

    pub fn requests(&self, method: &str, path: &str) -> usize {
        self.state()["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .filter(|r| r["method"] == method && r["path"].as_str() == Some(path))
            .count()
    }

    /// How many reactions were asked for on `comment` (each a `POST …/reactions`).
    pub fn reaction_posts(&self, comment: &Value) -> usize {
        self.requests(
            "POST",
            &format!(
                "/repos/acme/app/issues/comments/{}/reactions",
                comment["id"]
            ),
        )
    }

    /// Comments on issue `issue` by `login`, oldest first.
    pub fn comments_by(&self, issue: u32, login: &str) -> Vec<Value> {
        self.state()["comments"]
            .as_array()
            .expect("comments")
            .iter()
            .filter(|c| c["issue"] == issue && c["login"] == login)
            .cloned()
            .collect()
    }

    pub fn reactions(&self, comment: &Value) -> Vec<String> {
        let id = comment["id"].to_string();
        self.state()["reactions"][id.as_str()]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn labels(&self, issue: u32) -> Vec<String> {
        self.state()["labels"][issue.to_string().as_str()]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every request and response fit GitHub's OpenAPI description, and every request
    /// carried the token.
    pub fn assert_valid(&self) {
        let state = self.state();
        let violations = state["violations"].as_array().expect("violations");
        assert!(violations.is_empty(), "OpenAPI mismatches: {violations:#?}");
        let requests = state["requests"].as_array().expect("requests");
        assert!(!requests.is_empty());
        // What was checked, for the record (`--nocapture` shows it).
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for r in requests {
            let key = format!(
                "{} -> {}",
                r["operation"].as_str().unwrap_or("?"),
                r["status"]
            );
            *seen.entry(key).or_default() += 1;
        }
        eprintln!("requests checked against the OpenAPI description: {seen:#?}");
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace in GitHub Mode, a stand-in, and the way between them.
pub struct Env {
    pub ws: tempfile::TempDir,
    pub gh: tempfile::TempDir,
    pub hub: StandIn,
    pub way: Way,
    pub outputs: std::cell::RefCell<Vec<String>>,
    /// The database holding the state (`Kept::Pg`).
    pub pg: Option<String>,
}

impl Env {
    pub fn new(way: Way) -> Env {
        Env::with_store(way, None)
    }

    /// A workspace in GitHub Mode whose state is kept as `kept` says (PostgreSQL: a fresh
    /// database, its schema made by `agentx store init`).
    pub fn on(way: Way, kept: Kept) -> Env {
        match kept {
            Kept::Files => Env::new(way),
            Kept::Pg => {
                let url = agentx_clarify_tests::pg::fresh_database("github");
                let mut env = Env::with_store(way, Some(&url));
                env.ok(now0(), &["store", "init"]);
                env.pg = Some(url);
                env
            }
        }
    }

    /// Issue `issue`'s ledger as `clarify show --issue` gives it (on either store).
    pub fn ledger(&self, issue: u32) -> Value {
        let v = self.ok(now0(), &["clarify", "show", &format!("--issue={issue}")]);
        v["ledger"].clone()
    }

    /// Record `id` of issue `issue`, as its ledger holds it.
    pub fn record(&self, issue: u32, id: &str) -> Value {
        self.ledger(issue)["clarifications"]
            .as_array()
            .expect("records")
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in issue #{issue}"))
            .clone()
    }

    /// The sync state as stored (`github.json`, or PostgreSQL's `github` row); null when none.
    pub fn sync_state(&self) -> Value {
        let text = match &self.pg {
            None => std::fs::read_to_string(self.root().join(".agentx/state/github.json"))
                .unwrap_or_default(),
            Some(url) => agentx_clarify_tests::pg::psql(
                url,
                "SELECT body FROM agentx.state_docs WHERE name = 'github'",
            ),
        };
        serde_json::from_str(text.trim()).unwrap_or(Value::Null)
    }

    /// The sync state lost (a sync that died before remembering what it did).
    pub fn forget_sync_state(&self) {
        match &self.pg {
            None => std::fs::remove_file(self.root().join(".agentx/state/github.json"))
                .expect("the sync state"),
            Some(url) => {
                agentx_clarify_tests::pg::psql(
                    url,
                    "DELETE FROM agentx.state_docs WHERE name = 'github'",
                );
            }
        }
    }

    /// A workspace whose state is in the PostgreSQL database at `store` (`[store] url`).
    pub fn with_store(way: Way, store: Option<&str>) -> Env {
        let ws = workspace();
        let hub = StandIn::start();
        let gh = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            gh.path().join("config.yml"),
            format!("http_unix_socket: {}\n", hub.sock.display()),
        )
        .expect("gh config");
        std::fs::write(
            gh.path().join("hosts.yml"),
            format!("github.com:\n    oauth_token: {TOKEN}\n    user: tester\n    git_protocol: https\n"),
        )
        .expect("gh hosts");
        let via = match way {
            Way::Gh => String::from("via = \"gh\"\n"),
            Way::Api => format!(
                "via = \"api\"\ntoken_env = \"AGENTX_TEST_GH_TOKEN\"\napi_url = \"http://127.0.0.1:{}\"\n",
                hub.port
            ),
        };
        let store = store.map_or_else(String::new, |url| format!("[store]\nurl = \"{url}\"\n\n"));
        write_config(
            ws.path(),
            &format!("{store}[github]\nrepo = \"acme/app\"\n{via}labels = true\nanswer_roles = [\"admin\", \"maintain\", \"write\"]\n"),
        );
        Env {
            ws,
            gh,
            hub,
            way,
            outputs: std::cell::RefCell::new(Vec::new()),
            pg: None,
        }
    }

    pub fn root(&self) -> &Path {
        self.ws.path()
    }

    pub fn command(&self, now: i64, args: &[&str]) -> Command {
        let mut cmd = agentx();
        cmd.arg(root_arg(self.root()))
            .arg("--json")
            .arg(format!("--now={now}"))
            .args(args)
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_HOST")
            .env("GH_CONFIG_DIR", self.gh.path())
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1");
        if self.way == Way::Api {
            cmd.env("AGENTX_TEST_GH_TOKEN", TOKEN);
        }
        cmd
    }

    pub fn run(&self, now: i64, args: &[&str]) -> Out {
        let out = Out::from_output(&self.command(now, args).output().expect("agentx runs"));
        self.outputs
            .borrow_mut()
            .push(format!("{}{}", out.stdout, out.stderr));
        out
    }

    pub fn ok(&self, now: i64, args: &[&str]) -> Value {
        let out = self.run(now, args);
        assert_eq!(out.code, 0, "{args:?}: {out:#?}");
        out.json()
    }

    pub fn send(&self, now: i64) -> Value {
        self.ok(now, &["notify", "send"])
    }

    pub fn sync(&self, now: i64) -> Value {
        self.ok(now, &["github", "sync"])
    }

    /// The end of every test: nothing mismatched GitHub's description, and the token is in
    /// no output and no file of the workspace.
    pub fn finish(&self) {
        self.hub.assert_valid();
        for text in self.outputs.borrow().iter() {
            assert!(!text.contains(TOKEN), "the token in an output: {text}");
        }
        if let Some(url) = &self.pg {
            let docs = agentx_clarify_tests::pg::psql(
                url,
                "SELECT coalesce(string_agg(body, ''), '') FROM agentx.state_docs",
            );
            assert!(!docs.contains(TOKEN), "the token in a state document");
        }
        for (path, content) in snapshot(self.root()) {
            if let Some(bytes) = content {
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(TOKEN),
                    "the token in {path}"
                );
            }
        }
    }
}

pub fn now0() -> i64 {
    // Whole seconds: comparisons with GitHub's reset times stay exact.
    wall_ms() / 1000 * 1000
}

pub fn blocking_ask(env: &Env, now: i64, issue: u32, topic: &str, extra: &[&str]) -> String {
    let issue_arg = format!("--issue={issue}");
    let topic_arg = format!("--topic={topic}");
    let question = format!("--question=What about {topic}?");
    let mut args = vec![
        "clarify",
        "ask",
        issue_arg.as_str(),
        "--from=engineer",
        "--to=architect",
        topic_arg.as_str(),
        question.as_str(),
    ];
    args.extend_from_slice(extra);
    let v = env.ok(now, &args);
    v["clarification"]["id"].as_str().expect("id").to_owned()
}
