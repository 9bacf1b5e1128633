//! PostgreSQL for tests: a real server, never a mock. `AGENTX_TEST_PG_URL` names one (the PG
//! lane, `scripts/test-pg`, starts a cluster and sets it); without it, the first test that asks
//! starts a throwaway cluster with `scripts/pg-cluster supervise` (initdb on a temp directory, a
//! Unix socket there), which stops when this test process ends — its stdin is a pipe this
//! process holds. Each test gets a database of its own.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The variable that names a running server (the URL of a database to connect to first).
pub const URL_ENV: &str = "AGENTX_TEST_PG_URL";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The URL of the server's first database, the cluster started on first use.
pub fn server_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Some(url) = std::env::var(URL_ENV).ok().filter(|u| !u.is_empty()) {
            return url;
        }
        let dir = std::env::temp_dir().join(format!(
            "agentx-pg-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or_default()
        ));
        let mut child = Command::new(repo_root().join("scripts/pg-cluster"))
            .arg("supervise")
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run scripts/pg-cluster: {e}"));
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut line);
        }
        let url = line.trim().to_owned();
        assert!(
            url.starts_with("postgres://"),
            "scripts/pg-cluster did not start a server (is the postgresql package installed?)"
        );
        // The cluster lives as long as this process holds the pipe.
        std::mem::forget(child);
        url
    })
    .clone()
}

/// A cluster of its own, for tests that restart the server (stopped and removed on drop).
pub struct Cluster {
    dir: PathBuf,
    /// Its database `agentx`.
    pub url: String,
}

impl Cluster {
    pub fn start() -> Cluster {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentx-pg-own-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let url = cluster(&["start"], &dir);
        assert!(
            url.starts_with("postgres://"),
            "the cluster did not start: {url}"
        );
        Cluster { dir, url }
    }

    /// Restarts the server (mode fast: every connection is closed).
    pub fn restart(&self) {
        cluster(&["restart"], &self.dir);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        cluster(&["stop"], &self.dir);
    }
}

/// Runs `scripts/pg-cluster ARGS DIR`; its stdout.
fn cluster(args: &[&str], dir: &Path) -> String {
    let out = Command::new(repo_root().join("scripts/pg-cluster"))
        .args(args)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/pg-cluster: {e}"));
    assert!(
        out.status.success(),
        "scripts/pg-cluster {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `url` naming database `db` instead.
pub fn with_database(url: &str, db: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let path = url[start..].find('/').map_or(url.len(), |i| start + i);
    let end = url[path..].find('?').map_or(url.len(), |i| path + i);
    format!("{}/{db}{}", &url[..path], &url[end..])
}

/// A new, empty database on the test server (no schema yet); returns its URL.
pub fn fresh_database(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let server = server_url();
    let name = format!(
        "{prefix}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    psql(&server, &format!("CREATE DATABASE {name}"));
    with_database(&server, &name)
}

/// Runs `sql` with `psql` against `url`, panicking with its output when it fails.
pub fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-t",
            "-A",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
    assert!(
        out.status.success(),
        "psql {sql:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_swapped_in_urls() {
        assert_eq!(
            with_database("postgres://agentx@/agentx?host=/tmp/s&port=5432", "t1"),
            "postgres://agentx@/t1?host=/tmp/s&port=5432"
        );
        assert_eq!(
            with_database("postgres://u:p@h:5/db", "x"),
            "postgres://u:p@h:5/x"
        );
        assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    }
}
