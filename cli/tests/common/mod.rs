//! Helpers shared by the `agentx` integration tests: run the real binary (never through a
//! shell), capture its output, parse its one-line JSON, and build workspaces.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_agentx");

/// A fixed, realistic `now` (2026-11-22T10:00:00.000Z).
pub const T0: i64 = 1_795_341_600_000;
pub const MINUTE: i64 = 60_000;

/// Environment variables that change the binary's behaviour; removed from every child so the
/// tests do not depend on the environment they run in.
const SCRUBBED: &[&str] = &[
    "AGENTX_NOW",
    "AGENTX_STORE",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "CI",
];

/// A `Command` for the binary with a scrubbed environment.
pub fn agentx() -> Command {
    let mut cmd = Command::new(BIN);
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// [`agentx`] under `strace -f -e trace=openat`: every file the binary (and its threads and
/// children) opens is written to `trace`, one `openat(…)` line each.
pub fn agentx_traced(trace: &Path) -> Command {
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(trace)
        .arg(BIN);
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// How many times a trace of [`agentx_traced`] shows a file whose path ends with `name`
/// opened (or tried).
pub fn opens(trace: &Path, name: &str) -> usize {
    let quoted = format!("{name}\"");
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("openat(") && l.contains(&quoted))
        .count()
}

/// Sets the times of the settings files (`config.toml`, the workflows, the manifests and
/// their directories) a minute back, as if saved then: a long-lived process trusts a settings
/// stamp only once it is a second old (the kernel's clock for file times is coarse), and reads
/// the settings again on every look until then.
pub fn settle_settings(root: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let agentx = root.join(".agentx");
    let mut all = vec![agentx.join("config.toml")];
    for dir in ["workflows", "agents"] {
        let dir = agentx.join(dir);
        if let Ok(entries) = std::fs::read_dir(&dir) {
            all.extend(entries.flatten().map(|e| e.path()));
        }
        all.push(dir);
    }
    for p in all.into_iter().filter(|p| p.exists()) {
        let f = std::fs::File::open(&p).expect("open a settings file");
        f.set_times(std::fs::FileTimes::new().set_modified(old))
            .expect("set its time");
    }
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Out {
    /// The exit code; -1 when the process died from a signal.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn from_output(out: &Output) -> Out {
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// stdout as one JSON document on exactly one line (docs/protocol.md §11.1: `--json` prints nothing
    /// else on stdout). Panics with the whole output otherwise.
    pub fn json(&self) -> Value {
        self.try_json()
            .unwrap_or_else(|why| panic!("{why}\n{self:#?}"))
    }

    pub fn try_json(&self) -> Result<Value, String> {
        let line = self
            .stdout
            .strip_suffix('\n')
            .ok_or_else(|| "stdout does not end with a newline".to_owned())?;
        if line.contains('\n') {
            return Err("stdout holds more than one line".to_owned());
        }
        serde_json::from_str(line).map_err(|e| format!("stdout is not JSON: {e}"))
    }

    /// The error code of a failure envelope.
    pub fn code_str(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    }
}

/// Runs the binary with `args` (each one argv entry).
pub fn run<I, S>(args: I) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = agentx().args(args).output().expect("spawn agentx");
    Out::from_output(&out)
}

/// Runs the binary with `args`, killing it and failing the test if it is still running after
/// `limit`: a regression that hangs (a FIFO read, a lock never broken) fails instead of
/// stalling the suite.
pub fn run_within<I, S>(limit: std::time::Duration, args: I) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::io::Read;
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let mut child = agentx()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentx");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agentx {args:?} still ran after {limit:?}: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Out {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// `run_within` with `--root=<root> --json --now=<now>` and a 20 s limit.
pub fn json_within(root: &Path, now: i64, args: &[&str]) -> Out {
    let mut all = vec![root_arg(root), "--json".to_owned(), format!("--now={now}")];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    run_within(std::time::Duration::from_secs(20), all)
}

/// Asserts a `--json` failure: the exit code, the error code and a one-line message.
pub fn assert_fails(out: &Out, exit: i32, code: &str) -> Value {
    assert_eq!(out.code, exit, "exit code: {out:#?}");
    let v = out.json();
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or("");
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "one-line message: {v}"
    );
    v
}

/// Writes `.agentx/config.toml`.
pub fn write_config(root: &Path, text: &str) {
    std::fs::write(root.join(".agentx/config.toml"), text).expect("write config");
}

/// This host's name as lock files record it.
pub fn this_host() -> String {
    hostname::get().unwrap().to_string_lossy().into_owned()
}

/// Whether the tests run as root (tmpfs mounts need it; `chmod 000` does not stop root).
pub fn is_root_user() -> bool {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    std::fs::metadata(&probe).unwrap().uid() == 0
}

/// The system clock in epoch ms (lock files are written in real time).
pub fn wall_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// Runs `agentx --root=<root> --json <args…>`.
pub fn json_in(root: &Path, args: &[&str]) -> Out {
    let mut all = vec![root_arg(root), "--json".to_owned()];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    run(all)
}

/// Runs `agentx --root=<root> --json --now=<now> <args…>`.
pub fn json_at(root: &Path, now: i64, args: &[&str]) -> Out {
    let mut all = vec![root_arg(root), "--json".to_owned(), format!("--now={now}")];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    run(all)
}

pub fn root_arg(root: &Path) -> String {
    format!("--root={}", root.display())
}

/// A fresh temporary directory with an initialised workspace in it.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = json_in(dir.path(), &["init"]);
    assert_eq!(out.code, 0, "init failed: {out:#?}");
    dir
}

pub fn clarifications_dir(root: &Path) -> PathBuf {
    root.join(".agentx/state/clarifications")
}

pub fn ledger_path(root: &Path, issue: u32) -> PathBuf {
    clarifications_dir(root).join(format!("issue-{issue}.json"))
}

pub fn status_path(root: &Path) -> PathBuf {
    root.join(".agentx/state/agent-status.json")
}

/// The parsed ledger of an issue (panics when absent or not JSON).
pub fn read_ledger(root: &Path, issue: u32) -> Value {
    let path = ledger_path(root, issue);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?} is not JSON: {e}\n{text}"))
}

/// The ids of a ledger's records, in file order.
pub fn ledger_ids(ledger: &Value) -> Vec<String> {
    ledger["clarifications"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["id"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The argv of `clarify ask` (engineer → architect, non-blocking: allowed by the default
/// feature workflow).
/// `delegate request` on issue 42: the architect delegates the session cache to the engineer.
pub const DELEGATE_REQUEST: [&str; 8] = [
    "delegate",
    "request",
    "--issue=42",
    "--from=architect",
    "--to=engineer",
    "--capability=code.implementation.feature",
    "--objective=Implement the session cache",
    "--output-contract={\"format\": \"pull request\"}",
];

pub fn ask_args(issue: u32, topic: &str, question: &str) -> Vec<String> {
    vec![
        "clarify".into(),
        "ask".into(),
        format!("--issue={issue}"),
        "--from=engineer".into(),
        "--to=architect".into(),
        format!("--topic={topic}"),
        format!("--question={question}"),
        "--non-blocking".into(),
    ]
}

/// Every file and directory under `dir` (relative paths, sorted), with file contents.
pub fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                out.push((format!("{rel}/"), None));
                walk(base, &path, out);
            } else {
                out.push((rel, std::fs::read(&path).ok()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// Assertions and small workspace helpers the behaviour tests share

/// The keys of a monitor report (docs/protocol.md §7.4).
pub const MONITOR_KEYS: [&str; 7] = [
    "stale",
    "retried",
    "escalated",
    "stuck",
    "deadlocks",
    "abandoned",
    "errors",
];

/// The keys of a JSON object.
pub fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

pub fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

pub fn assert_monitor_report(report: &Value) {
    assert_eq!(keys(report), set(&MONITOR_KEYS), "monitor report: {report}");
    for k in MONITOR_KEYS {
        assert!(report[k].is_array(), "report.{k} is not an array: {report}");
    }
}

/// Asserts a successful mutation envelope (docs/protocol.md §11.1) and returns its record. An
/// ask's `related` (docs/protocol.md §36) is an array when present.
pub fn assert_mutation(v: &Value) -> Value {
    let mut found = keys(v);
    if found.remove("related") {
        assert!(v["related"].is_array(), "related: {v}");
    }
    assert_eq!(
        found,
        set(&[
            "ok",
            "clarification",
            "events",
            "idempotent",
            "monitor",
            "warnings"
        ]),
        "mutation: {v}"
    );
    assert_eq!(v["ok"], true);
    assert!(v["events"].is_array());
    assert_monitor_report(&v["monitor"]);
    let record = v["clarification"].clone();
    assert!(
        record["issueNumber"].is_u64(),
        "clarification has issueNumber: {record}"
    );
    record
}

/// Asserts a usage error: exit 2, nothing on stdout, clap's message on stderr.
pub fn assert_usage(out: &Out) {
    assert_eq!(out.code, 2, "{out:#?}");
    assert!(out.stdout.is_empty(), "stdout must be empty: {out:#?}");
    assert!(!out.stderr.is_empty(), "stderr must explain: {out:#?}");
}

/// `clarify ask` (non-blocking, engineer → architect) at `now`; panics unless it succeeds.
pub fn ask(root: &Path, now: i64, issue: u32, topic: &str, question: &str) -> Value {
    let args = ask_args(issue, topic, question);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = json_at(root, now, &refs);
    assert_eq!(out.code, 0, "ask failed: {out:#?}");
    out.json()
}

/// A single choice (Redis or in-process LRU, nothing else) from the engineer to the architect,
/// escalated to a person with `why`: the record a person decides in the decider, answer-link
/// and email tests. Returns its id; panics unless both commands succeed.
pub fn escalated_closed_choice(
    root: &Path,
    issue: u32,
    topic: &str,
    question: &str,
    why: &str,
) -> String {
    let issue = issue.to_string();
    let asked = json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue",
            &issue,
            "--from",
            "engineer",
            "--to",
            "architect",
            "--topic",
            topic,
            "--question",
            question,
            "--kind",
            "choice",
            "--option",
            "redis=Redis",
            "--option",
            "lru=In-process LRU",
            "--no-other",
        ],
    );
    assert_eq!(asked.code, 0, "{asked:#?}");
    let id = asked.json()["clarification"]["id"]
        .as_str()
        .expect("the asked record's id")
        .to_owned();
    let out = json_in(root, &["clarify", "escalate", &id, "-m", why]);
    assert_eq!(out.code, 0, "{out:#?}");
    id
}

/// A blocking `clarify ask` from the engineer to `to` at `now`; panics unless it succeeds.
pub fn ask_blocking(root: &Path, now: i64, issue: u32, to: &str, topic: &str) -> Value {
    let out = json_at(
        root,
        now,
        &[
            "clarify",
            "ask",
            &format!("--issue={issue}"),
            "--from=engineer",
            &format!("--to={to}"),
            &format!("--topic={topic}"),
            &format!("--question=What about {topic}?"),
        ],
    );
    assert_eq!(out.code, 0, "ask failed: {out:#?}");
    out.json()
}

pub fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Copies the example agent CLIs (`examples/agents/`) into `root/agents/` and returns that
/// directory's path relative to the root, as a runner's `command` names it: a program given
/// as a path must be inside the workspace (docs/protocol.md §31).
#[allow(dead_code)]
pub fn install_agents(root: &Path) -> &'static str {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir agents");
        for entry in std::fs::read_dir(from).expect("read examples/agents") {
            let entry = entry.expect("entry");
            let target = to.join(entry.file_name());
            if entry.file_type().expect("type").is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy agent");
            }
        }
    }
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/agents"),
        &root.join("agents"),
    );
    "agents"
}
