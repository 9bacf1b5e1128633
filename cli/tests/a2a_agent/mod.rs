//! An A2A agent built with the official Python SDK (`a2a-sdk`, `tests/a2a/agent.py`, installed
//! by `scripts/setup`) on loopback, recording what it received; shared by the routing tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One A2A agent process; killed when dropped.
pub struct Agent {
    child: Child,
    pub url: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    /// Starts `tests/a2a/agent.py MODE` (with a required bearer token when `token` is given)
    /// and waits for it to serve.
    pub fn start(mode: &str, token: Option<&str>) -> Agent {
        Agent::start_with(mode, token, &[])
    }

    /// [`Agent::start`] with variables added to the agent's environment.
    pub fn start_with(mode: &str, token: Option<&str>, env: &[(&str, &str)]) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("record.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/a2a/agent.py");
        let mut cmd = Command::new("python3");
        cmd.arg(&script).arg(mode).arg(&record);
        if let Some(t) = token {
            cmd.arg(t);
        }
        let mut child = cmd
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs (scripts/setup installs a2a-sdk)");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the A2A agent starts within 30 s");
        let url = line
            .trim()
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("the agent said {line:?} (is a2a-sdk installed?)"))
            .to_owned();
        Agent {
            child,
            url,
            record,
            _dir: dir,
        }
    }

    /// What the agent recorded, one JSON value per event.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Waits up to 10 s for an event of `kind`.
    pub fn wait_for(&self, kind: &str) -> Value {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(e) = self.events().into_iter().find(|e| e["event"] == kind) {
                return e;
            }
            assert!(
                Instant::now() < until,
                "no {kind} event: {:?}",
                self.events()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
